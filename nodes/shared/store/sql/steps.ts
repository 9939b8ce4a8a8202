import type { TableRef } from '../identifiers';
import { LOCK_BOUND_CTE } from './lockBound';

/**
 * Step records ("resume, don't redo"): what each named step of an event's workflow produced, kept
 * in the key row's `steps` column as `{ "<step>": { "at": <time>, "items": [<json>, …] } }`. In the
 * key row, they go wherever the event goes: a purge deletes them with it, the Keys node's look-up
 * shows them, and a Release Key that finds any keeps the row (see releaseOwnedSql).
 */

/** A row with at least one step recorded, read through to_jsonb so a table without the column works. */
export const HAS_STEPS = `coalesce(jsonb_typeof(to_jsonb(t) -> 'steps') = 'object'
      AND to_jsonb(t) -> 'steps' <> '{}'::jsonb, false)`;

/**
 * What the keys in $1 hold for step $3, with the tokens of the items' reservations in $2 (aligned):
 * whether that token still holds the key in progress (`owned`), and the step's record if there is
 * one. Only reads: a step that is not recorded runs, and is recorded after it ran (recordStepSql).
 */
export function stepStateSql(ref: TableRef): string {
	return `SELECT u.key, u.owner_token,
  existing.key IS NOT NULL AS row_exists,
  coalesce(existing.owner_token = u.owner_token AND existing.status = 'in_progress', false) AS owned,
  existing.attempts,
  existing.steps -> $3::text AS record
FROM unnest($1::text[], $2::text[]) AS u(key, owner_token)
LEFT JOIN LATERAL (
  SELECT t.key, t.owner_token, t.status, t.attempts, t.steps FROM ${ref.qualified} t WHERE t.key = u.key LIMIT 1
) existing ON true`;
}

/**
 * Records step $4 for the keys in $1 (sorted by the caller) with their items in $3 (a jsonb array
 * per key, aligned), only where the item's token ($2) still holds the key in progress: the UPDATE
 * waits for a takeover in flight and re-checks the owner on the newest row, so an execution whose
 * lease was taken over records nothing. A step already recorded keeps its first record (the node ran
 * twice for one reservation: the same effect, recorded once). For every key: recorded now, or
 * already, or who holds the row instead (no row: released without steps, or purged). With `next`
 * (Record and Skip Next If Done), also each key's record of the next step: one statement at the
 * boundary between two steps, where the old shape took a write and then a read. The next step's
 * record is read from the snapshot before the write: while the token holds the key, nobody else
 * records its steps, so what the snapshot holds is what there is.
 */
export function recordStepSql(ref: TableRef, { next = false } = {}): string {
	// With `next`, a key whose items are NULL is only checked (its step was skipped, not run), and
	// every key also says what it holds for the next step, $5, from the same snapshot.
	const toRecord = next ? ' AND target.items IS NOT NULL' : '';
	const nextRecord = next ? ',\n  existing.steps -> $5::text AS next_record' : '';
	return `WITH ${LOCK_BOUND_CTE}, target AS MATERIALIZED (
  SELECT c.* FROM unnest($1::text[], $2::text[], $3::jsonb[]) AS c(key, owner_token, items) CROSS JOIN lock_bound
), recorded AS (
  UPDATE ${ref.qualified} AS t
  SET steps = coalesce(t.steps, '{}'::jsonb)
    || jsonb_build_object($4::text, jsonb_build_object('at', now(), 'items', target.items))
  FROM target
  WHERE t.key = target.key AND t.owner_token = target.owner_token AND t.status = 'in_progress'
    AND NOT coalesce(t.steps ? $4::text, false)${toRecord}
  RETURNING t.key
)
SELECT target.key, target.owner_token,
  EXISTS (SELECT 1 FROM recorded r WHERE r.key = target.key) AS recorded,
  existing.key IS NOT NULL AS row_exists,
  coalesce(existing.owner_token = target.owner_token AND existing.status = 'in_progress', false) AS owned,
  coalesce(existing.steps ? $4::text, false) AS already_recorded,
  existing.attempts${nextRecord}
FROM target
LEFT JOIN LATERAL (
  SELECT t.key, t.owner_token, t.status, t.attempts, t.steps FROM ${ref.qualified} t WHERE t.key = target.key LIMIT 1
) existing ON true`;
}

/**
 * The exactly-once step recording itself as step $3 inside its transaction, for keys whose rows it
 * has locked and found owned ($1), with each key's items ($2, a jsonb array per key, aligned): the
 * statements' effect and the record commit together. The key stays in progress.
 */
export function recordLockedStepSql(ref: TableRef): string {
	return `UPDATE ${ref.qualified} AS t
SET steps = coalesce(t.steps, '{}'::jsonb)
  || jsonb_build_object($3::text, jsonb_build_object('at', now(), 'items', c.items))
FROM unnest($1::text[], $2::jsonb[]) AS c(key, items)
WHERE t.key = c.key`;
}
