import type { TableRef } from '../identifiers';
import { LOCK_BOUND_CTE } from './lockBound';

/**
 * Reserves the keys in $1 (distinct, sorted by the caller) in one statement and returns the keys
 * this statement inserted. Sorted input makes every execution lock keys in the same order, so two
 * executions with overlapping batches cannot deadlock.
 */
export function reserveSql(ref: TableRef): string {
	return `WITH ${LOCK_BOUND_CTE}
INSERT INTO ${ref.qualified} (key)
SELECT unnest($1::text[]) FROM lock_bound
ON CONFLICT (key) DO NOTHING
RETURNING key`;
}

/**
 * The same reservation, also returning `first_seen` of each key that already existed, as seconds
 * since 1970 (the driver reads a float8 far faster than a timestamptz). The outer SELECT reads the
 * snapshot from before the insert, so it finds only rows that existed before; a key reserved a moment
 * ago by a concurrent execution is in neither list (a duplicate, first_seen not known). Only keys the
 * insert did not take are looked up (NOT EXISTS becomes an anti join that can spill to disk, where
 * NOT IN could degrade to a rescan per key), and LATERAL ... LIMIT 1 keeps each lookup an index probe
 * whatever the table's size, where a join could scan the whole table.
 */
export function reserveWithFirstSeenSql(ref: TableRef): string {
	return `WITH ${LOCK_BOUND_CTE}, inserted AS (
  INSERT INTO ${ref.qualified} (key)
  SELECT unnest($1::text[]) FROM lock_bound
  ON CONFLICT (key) DO NOTHING
  RETURNING key
)
SELECT key, NULL::float8 AS first_seen_epoch FROM inserted
UNION ALL
SELECT u.key, extract(epoch FROM existing.first_seen)::float8
FROM unnest($1::text[]) AS u(key)
CROSS JOIN LATERAL (SELECT t.first_seen FROM ${ref.qualified} t WHERE t.key = u.key LIMIT 1) existing
WHERE NOT EXISTS (SELECT 1 FROM inserted i WHERE i.key = u.key)`;
}

/**
 * Simple mode with fingerprints: reserves the keys in $1 with the fingerprints in $2 (aligned; the
 * first item's for a key that repeats), and returns for every key that existed its first_seen and
 * stored fingerprint, so a duplicate with another payload can be told apart. Otherwise as
 * reserveWithFirstSeenSql.
 */
export function reserveWithFingerprintSql(ref: TableRef): string {
	return `WITH ${LOCK_BOUND_CTE}, input AS MATERIALIZED (
  SELECT i.key, i.fingerprint FROM lock_bound, unnest($1::text[], $2::text[]) AS i(key, fingerprint)
), inserted AS (
  INSERT INTO ${ref.qualified} (key, fingerprint)
  SELECT key, fingerprint FROM input
  ON CONFLICT (key) DO NOTHING
  RETURNING key
)
SELECT key, NULL::float8 AS first_seen_epoch, NULL::text AS fingerprint FROM inserted
UNION ALL
SELECT u.key, extract(epoch FROM existing.first_seen)::float8, existing.fingerprint
FROM input u
CROSS JOIN LATERAL (SELECT t.first_seen, t.fingerprint FROM ${ref.qualified} t WHERE t.key = u.key LIMIT 1) existing
WHERE NOT EXISTS (SELECT 1 FROM inserted i WHERE i.key = u.key)`;
}

/**
 * Lease mode's reservation, one statement for all keys ($1, distinct and sorted; $2 the owner token
 * of this reservation; $3 the lease in seconds; then, aligned with $1, their fingerprints with
 * `fingerprint` and their deliveries (jsonb, NULL for one not stored) with `delivery`, from $4 on).
 * All times are the database's.
 * - a new key is inserted `in_progress`, owned by $2 until now() + $3;
 * - an `in_progress` key whose lease has ended (its execution died) is taken over: new owner, new
 *   lease, attempts + 1. UPDATE waits for a row another execution is taking over and re-checks the
 *   lease end on its newest version, so of any number of executions racing for one expired key
 *   exactly one takes it. A key recorded with another fingerprint is never taken over: it is a
 *   different request under the same key. Only these rows are locked: a duplicate (completed, or in
 *   flight) is read, never locked, so a burst of retries does not queue behind one row. The status
 *   is compared as `status || ''` so the planner cannot answer the UPDATE from the operators'
 *   partial in-progress index: it would scan every expired in-progress key of the table instead of
 *   probing the primary key once per key (a batch of 1,000 on 10M keys: 21× slower, bench:scale);
 * - every other key is returned with its state as this statement's snapshot saw it, and the
 *   seconds until its lease ends (the whole lease when it ended but another execution just took it),
 *   counted from clock_timestamp(): now() is when this transaction began, which can be before the
 *   reservation it sees began, and would then promise more than the whole lease; and its stored
 *   fingerprint and response, read through to_jsonb so a table without those columns works too;
 * The INSERT and the UPDATE see the same snapshot, so no key is both inserted and taken over. A key in
 * none of the lists was reserved by a concurrent execution after this statement's snapshot was
 * taken: it is in progress. With `steps`, a key this statement reserved also comes with the names of the steps
 * recorded under it (none for a new key; a takeover's come from the row it updated, read through
 * to_jsonb so a table without the steps column works), so Idempotency Step need not read them.
 * Rows as [key, state, attempts, lease_until, first_seen, retry_after, fingerprint, response, steps].
 */
export function reserveLeaseSql(
	ref: TableRef,
	{ fingerprint = false, delivery = false, steps = false } = {},
): string {
	// With `steps`, a ninth column: the names of the steps recorded under each key reserved here.
	const stepsOf = (expression: string) => (steps ? `, ${expression} AS steps` : '');
	const stepNames = steps
		? `,\n  CASE WHEN jsonb_typeof(steps) = 'object' THEN ARRAY(SELECT jsonb_object_keys(steps)) ELSE '{}'::text[] END`
		: '';
	// Per-key columns beside the key, each an array aligned with $1: $4 onwards, in this order.
	const perKey = [
		...(fingerprint ? [['fingerprint', 'text']] : []),
		...(delivery ? [['delivery', 'jsonb']] : []),
	];
	const input =
		perKey.length === 0
			? `SELECT unnest($1::text[]) AS key FROM lock_bound`
			: `SELECT i.* FROM lock_bound, unnest($1::text[], ${perKey.map(([, type], i) => `$${i + 4}::${type}[]`).join(', ')}) AS i(key, ${perKey.map(([name]) => name).join(', ')})`;
	const sameRequest = fingerprint
		? `
    AND (t.fingerprint IS NULL OR input.fingerprint IS NULL OR t.fingerprint = input.fingerprint)`
		: '';
	const columns = perKey.map(([name]) => `, ${name}`).join('');
	// A takeover keeps the first stored delivery, the one the sender was answered for: a replay that
	// takes the key over during the redrive backoff (an unsigned query or header changed) cannot
	// replace what a redrive runs. A key stored without one (over the cap) gets the takeover's.
	const storeDelivery = delivery ? ', delivery = coalesce(t.delivery, input.delivery)' : '';
	return `WITH ${LOCK_BOUND_CTE}, input AS MATERIALIZED (
  ${input}
), inserted AS (
  INSERT INTO ${ref.qualified} (key, status, owner_token, lease_until${columns})
  SELECT key, 'in_progress', $2::text, now() + make_interval(secs => $3::float8)${columns} FROM input
  ON CONFLICT (key) DO NOTHING
  RETURNING key, attempts, lease_until${stepsOf('NULL::jsonb')}
), taken AS (
  UPDATE ${ref.qualified} AS t
  SET owner_token = $2::text, lease_until = now() + make_interval(secs => $3::float8), attempts = t.attempts + 1${storeDelivery}
  FROM input
  WHERE t.key = input.key AND t.status || '' = 'in_progress' AND t.lease_until <= now()${sameRequest}
  RETURNING t.key, t.attempts, t.lease_until${stepsOf(`to_jsonb(t) -> 'steps'`)}
), reserved AS (
  SELECT * FROM inserted UNION ALL SELECT * FROM taken
)
SELECT key, 'reserved' AS state, attempts, extract(epoch FROM lease_until)::float8, NULL::float8, NULL::int,
  NULL::text, NULL::jsonb${stepNames}
FROM reserved
UNION ALL
SELECT u.key, existing.status, existing.attempts, NULL::float8, extract(epoch FROM existing.first_seen)::float8,
  CASE WHEN existing.lease_until > now()
       THEN greatest(1, ceil(extract(epoch FROM existing.lease_until - clock_timestamp())))::int
       ELSE ceil($3::float8)::int END,
  existing.row_json ->> 'fingerprint', existing.row_json -> 'response'${steps ? ', NULL::text[]' : ''}
FROM input u
CROSS JOIN LATERAL (
  SELECT t.status, t.attempts, t.lease_until, t.first_seen, to_jsonb(t) AS row_json
  FROM ${ref.qualified} t WHERE t.key = u.key LIMIT 1
) existing
WHERE NOT EXISTS (SELECT 1 FROM reserved r WHERE r.key = u.key)`;
}
