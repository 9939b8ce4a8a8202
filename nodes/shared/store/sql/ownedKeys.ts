import type { TableRef } from '../identifiers';
import { LOCK_BOUND_CTE, lockBoundCte } from './lockBound';
import { ANSWERED_EVENT } from './answeredEvents';
import { HAS_STEPS } from './steps';

/**
 * What Release Key does with an answered event (sql/answeredEvents.ts): `keep` (the default of the
 * node: never deleted; its owner's release reopens it for the Redrive Trigger) or `drop` (Drop
 * Answered Events: deleted like any key). Either way the statement says which keys held one.
 * Without a rule: the statement of setups that never store a delivery (the planner's page and its
 * built-in workflows, which send only the keys and tokens), as it always was.
 */
export type AnsweredEventRule = 'keep' | 'drop';

/** Deletes the keys in $1, whoever holds them: Release Key without any token. */
export function releaseSql(ref: TableRef, answered?: AnsweredEventRule): string {
	if (answered === undefined)
		return `WITH ${LOCK_BOUND_CTE}
DELETE FROM ${ref.qualified} AS t USING lock_bound WHERE t.key = ANY($1::text[]) RETURNING t.key`;
	// One row per key in $1: released, and whether it held an answered event before the statement.
	return `WITH ${LOCK_BOUND_CTE}, deleted AS (
  DELETE FROM ${ref.qualified} AS t USING lock_bound
  WHERE t.key = ANY($1::text[])${answered === 'keep' ? ` AND NOT ${ANSWERED_EVENT}` : ''}
  RETURNING t.key
)
SELECT u.key, EXISTS (SELECT 1 FROM deleted d WHERE d.key = u.key) AS released,
  EXISTS (SELECT 1 FROM ${ref.qualified} t WHERE t.key = u.key AND ${ANSWERED_EVENT}) AS answered_event
FROM unnest($1::text[]) AS u(key)`;
}

/**
 * Marks keys completed where the item's token ($2, aligned with $1 and sorted by key) still owns
 * them; completing twice with the same token is a no-op success. With `response`, $3 holds each
 * key's answer to store (jsonb, null for none), written in the same UPDATE as the completion, so a
 * completed key never lacks the answer it was completed with. For every key, says whether it was
 * completed, and, where not, what the snapshot held: no row (released or purged) or another owner
 * (the lease ended and another execution took the key over), with that row's attempt.
 */
export function completeSql(ref: TableRef, { response = false } = {}): string {
	const columns = response
		? 'unnest($1::text[], $2::text[], $3::jsonb[]) AS c(key, owner_token, response)'
		: 'unnest($1::text[], $2::text[]) AS c(key, owner_token)';
	return `WITH ${LOCK_BOUND_CTE}, target AS MATERIALIZED (
  SELECT c.* FROM ${columns} CROSS JOIN lock_bound
), completed AS (
  UPDATE ${ref.qualified} AS t
  SET status = 'completed', completed_at = coalesce(t.completed_at, now()), lease_until = NULL${response ? ', response = coalesce(target.response, t.response)' : ''}
  FROM target
  WHERE t.key = target.key AND t.owner_token = target.owner_token
  RETURNING t.key, t.owner_token
)
SELECT target.key, target.owner_token,
  EXISTS (SELECT 1 FROM completed d WHERE d.key = target.key AND d.owner_token = target.owner_token) AS completed,
  existing.key IS NOT NULL AS row_exists,
  existing.attempts
FROM target
LEFT JOIN LATERAL (
  SELECT t.key, t.attempts FROM ${ref.qualified} t WHERE t.key = target.key LIMIT 1
) existing ON true`;
}

/**
 * Deletes keys; a key that comes with its owner token ($2, aligned with $1, sorted by key) only
 * while that token still owns it and it is in progress, so a late failing execution cannot free a
 * key that a retry has taken over, nor reopen an event whose effect committed with its completion
 * (the exactly-once step's COMMIT can succeed while its answer is lost). A key without a token
 * (null) is deleted whoever holds it. A key with step records is not deleted but reopened: its lease
 * ends now, so the sender's retry takes it over at once and finds the steps it already did (a
 * release means "run this event again", not "forget what it did"). With `answered` keep, an
 * answered event is never deleted either: its owner's release reopens it, so the Redrive Trigger
 * runs it again from its stored delivery, and a key without a token stays. Says for each key whether
 * it was released (deleted or reopened), whether a row was there, whether it is completed by that
 * token and (with a rule) whether it held an answered event.
 */
export function releaseOwnedSql(ref: TableRef, answered?: AnsweredEventRule): string {
	// Keep: an answered event is never deleted; its owner reopens it, as a key with steps.
	const keep = answered === 'keep';
	const reopen = keep ? `(${HAS_STEPS} OR ${ANSWERED_EVENT})` : HAS_STEPS;
	const answeredColumn =
		answered === undefined
			? ''
			: `,
  EXISTS (SELECT 1 FROM ${ref.qualified} t WHERE t.key = target.key AND ${ANSWERED_EVENT}) AS answered_event`;
	return `WITH ${LOCK_BOUND_CTE}, target AS MATERIALIZED (
  SELECT c.key, c.owner_token FROM unnest($1::text[], $2::text[]) AS c(key, owner_token) CROSS JOIN lock_bound
), deleted AS (
  DELETE FROM ${ref.qualified} AS t
  USING target
  WHERE t.key = target.key${keep ? ` AND NOT ${ANSWERED_EVENT}` : ''} AND (target.owner_token IS NULL
    OR (t.owner_token = target.owner_token AND t.status IS DISTINCT FROM 'completed' AND NOT ${HAS_STEPS}))
  RETURNING t.key
), reopened AS (
  UPDATE ${ref.qualified} AS t SET lease_until = now()
  FROM target
  WHERE t.key = target.key AND t.owner_token = target.owner_token
    AND t.status IS DISTINCT FROM 'completed' AND ${reopen}
  RETURNING t.key
)
SELECT target.key, target.owner_token,
  EXISTS (SELECT 1 FROM deleted r WHERE r.key = target.key)
    OR EXISTS (SELECT 1 FROM reopened r WHERE r.key = target.key) AS released,
  EXISTS (SELECT 1 FROM reopened r WHERE r.key = target.key) AS reopened,
  EXISTS (SELECT 1 FROM ${ref.qualified} t WHERE t.key = target.key) AS row_exists,
  EXISTS (SELECT 1 FROM ${ref.qualified} t
    WHERE t.key = target.key AND t.owner_token = target.owner_token AND t.status = 'completed') AS completed_by_owner${answeredColumn}
FROM target`;
}

/**
 * The exactly-once step's first statement, inside its transaction: locks the rows of the keys in $1
 * (sorted by the caller) in key order, so overlapping batches queue instead of deadlocking, and
 * returns who holds each one now. The wait for a row is bounded like every other statement, then
 * the setting from before is handed back (`previous_lock_timeout`) so the user's own statements
 * keep the database's. One row at least, even when no key exists (the LEFT JOIN).
 */
export function lockOwnedKeysSql(ref: TableRef, { step = false } = {}): string {
	// With `step`, also each key's record of step $2 (sql/steps.ts), read under the same lock.
	const record = step ? ', t.steps -> $2::text AS step_record' : '';
	return `WITH previous AS MATERIALIZED (
  SELECT current_setting('lock_timeout') AS lock_timeout
), ${lockBoundCte(' FROM previous')}, locked AS MATERIALIZED (
  SELECT t.key, t.owner_token, t.status, t.attempts${record}
  FROM ${ref.qualified} t CROSS JOIN lock_bound
  WHERE t.key = ANY($1::text[])
  ORDER BY t.key
  FOR UPDATE OF t
)
SELECT previous.lock_timeout AS previous_lock_timeout, locked.*
FROM previous LEFT JOIN locked ON true`;
}

/** Hands the rest of the transaction back its own lock_timeout (the setting lockOwnedKeysSql found). */
export function restoreLockTimeoutSql(): string {
	return `SELECT set_config('lock_timeout', $1::text, true)`;
}

/**
 * Marks keys completed whose rows this transaction has locked and found owned by it; with
 * `response`, $2 (aligned with $1) holds each key's answer to store (jsonb, null for none).
 */
export function completeLockedSql(ref: TableRef, { response = false } = {}): string {
	if (!response)
		return `UPDATE ${ref.qualified}
SET status = 'completed', completed_at = now(), lease_until = NULL
WHERE key = ANY($1::text[])`;
	return `UPDATE ${ref.qualified} AS t
SET status = 'completed', completed_at = now(), lease_until = NULL, response = c.response
FROM unnest($1::text[], $2::jsonb[]) AS c(key, response)
WHERE t.key = c.key`;
}
