import { LOCK_WAIT_MS } from '../transport/lockWait';
import { firstSeenIndexName, quoteIdentifier, type TableRef } from './identifiers';

// The tests and benchmarks read the bound from here, beside the statements it is written into.
export { LOCK_WAIT_MS };

/**
 * Every statement the package runs. Identifiers come only from a validated TableRef; every
 * value is a bind parameter.
 */

/**
 * The columns lease mode adds to the hand-built two-column table. A row without a status (written in
 * simple mode or by the hand-built pattern) counts as completed.
 */
export const LEASE_COLUMNS = [
	['status', 'text'],
	['owner_token', 'text'],
	['lease_until', 'timestamptz'],
	['completed_at', 'timestamptz'],
	['attempts', 'integer NOT NULL DEFAULT 1'],
] as const;

/**
 * Optional columns, each group added (where the user may) when a node first needs it, the way the
 * lease columns are: the request fingerprint Reserve records, and the answer Complete Key stores
 * ({ statusCode, headers, body } as jsonb: the body is text, replayed as it was stored). Rows
 * without them (NULL) never mismatch and replay nothing.
 */
export type ColumnGroup = 'lease' | 'fingerprint' | 'response';

export const COLUMN_GROUPS: Record<ColumnGroup, ReadonlyArray<readonly [string, string]>> = {
	lease: LEASE_COLUMNS,
	fingerprint: [['fingerprint', 'text']],
	response: [['response', 'jsonb']],
};

export const OPTIONAL_COLUMN_NAMES: string[] = Object.values(COLUMN_GROUPS).flatMap((columns) =>
	columns.map(([name]) => name),
);

/** The groups a new table gets: in lease mode all of them (nullable, so they cost nothing until used). */
export function groupsForNewTable({
	lease,
	fingerprint = false,
}: {
	lease: boolean;
	fingerprint?: boolean;
}): ColumnGroup[] {
	if (lease) return ['lease', 'fingerprint', 'response'];
	return fingerprint ? ['fingerprint'] : [];
}

/**
 * Is the table there, does it already have an index leading with first_seen, and which of the
 * optional columns ($2) does it have? No DDL when all that is needed is there.
 */
export function inspectTableSql(): string {
	return `SELECT c.oid IS NOT NULL AS table_exists,
  EXISTS (
    SELECT 1 FROM pg_index i
    JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
    WHERE i.indrelid = c.oid AND a.attname = 'first_seen'
  ) AS has_first_seen_index,
  ARRAY(SELECT a.attname::text FROM pg_attribute a
   WHERE a.attrelid = c.oid AND a.attname = ANY($2::text[]) AND NOT a.attisdropped) AS optional_columns
FROM (SELECT to_regclass($1) AS oid) c`;
}

/**
 * A CTE that sets lock_timeout for the rest of this statement's implicit transaction (is_local:
 * reset at its end, so nothing leaks to the connection's next statement; works behind PgBouncer in
 * transaction mode, where session SET and startup options do not). The row source of every write
 * reads from it, so it runs before the first row can be waited on. A shorter lock_timeout already
 * set for the user or database is kept. Table locks are taken before any of it runs (when the
 * statement is parsed): only a lock_timeout on the role bounds those.
 */
function lockBoundCte(source = ''): string {
	return `lock_bound AS MATERIALIZED (
  SELECT set_config('lock_timeout',
    CASE WHEN current_setting('lock_timeout')::interval > interval '0'
          AND current_setting('lock_timeout')::interval < interval '${LOCK_WAIT_MS} milliseconds'
      THEN current_setting('lock_timeout') ELSE '${LOCK_WAIT_MS}ms' END, true) AS lock_timeout${source}
)`;
}

export const LOCK_BOUND_CTE = lockBoundCte();

/** Serialises concurrent first-time creators: two CREATE ... IF NOT EXISTS racing can fail on pg_type or pg_class. */
const DDL_LOCK = `SELECT pg_advisory_xact_lock(hashtext('n8n-nodes-idempotency:create-table'));`;

function createIndexSql(ref: TableRef): string {
	return `CREATE INDEX IF NOT EXISTS ${quoteIdentifier(firstSeenIndexName(ref))} ON ${ref.qualified} (first_seen)`;
}

/**
 * The table and its first_seen index, as one multi-statement query that PostgreSQL runs as one
 * implicit transaction. Sent without parameters (simple protocol); names come from a TableRef.
 */
export function createTableSql(
	ref: TableRef,
	options: { lease: boolean; fingerprint?: boolean },
): string {
	const optional = groupsForNewTable(options)
		.flatMap((group) => COLUMN_GROUPS[group])
		.map(([name, type]) => `,\n  ${name} ${type}`)
		.join('');
	return `${DDL_LOCK}
CREATE TABLE IF NOT EXISTS ${ref.qualified} (
  key text PRIMARY KEY,
  first_seen timestamptz NOT NULL DEFAULT now()${optional}
);
${createIndexSql(ref)};`;
}

/**
 * Groups' columns for a table made in simple mode, by hand or before the group existed. Adding a
 * nullable column, or one with a constant default, rewrites nothing (PostgreSQL 11+), so this is
 * quick on a big table. Only the table's owner may run it; the node shows this exact text to
 * whoever must.
 */
export function addColumnsSql(ref: TableRef, groups: ColumnGroup | readonly ColumnGroup[]): string {
	const columns = (typeof groups === 'string' ? [groups] : groups).flatMap(
		(group) => COLUMN_GROUPS[group],
	);
	return `ALTER TABLE ${ref.qualified}\n${columns.map(([name, type]) => `  ADD COLUMN IF NOT EXISTS ${name} ${type}`).join(',\n')};`;
}

/** The lease columns' ALTER TABLE, as the planner shows it to a DBA. */
export function addLeaseColumnsSql(ref: TableRef): string {
	return addColumnsSql(ref, 'lease');
}

/** The same, by whoever may; a user who may not (not the owner) gets a NOTICE, and the caller checks again. */
export function addColumnsIfPermittedSql(ref: TableRef, group: ColumnGroup): string {
	return `${DDL_LOCK}
DO $$ BEGIN
  ${addColumnsSql(ref, group).replace(/\n/g, '\n  ')}
EXCEPTION WHEN insufficient_privilege THEN
  RAISE NOTICE 'n8n-nodes-idempotency: no privilege to add the ${group} columns to %', '${ref.qualified.replace(/'/g, "''")}';
END $$;`;
}

/**
 * The first_seen index for a table that exists without it (made by hand). The index only speeds up
 * purging, so a user who may not create it (not the table's owner) keeps working without it.
 */
export function createIndexIfPermittedSql(ref: TableRef): string {
	return `${DDL_LOCK}
DO $$ BEGIN
  ${createIndexSql(ref)};
EXCEPTION WHEN insufficient_privilege THEN
  RAISE NOTICE 'n8n-nodes-idempotency: no privilege to index first_seen of %', '${ref.qualified.replace(/'/g, "''")}';
END $$;`;
}

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
 * Which of the keys in $1 exist and are locked by another transaction right now: the first list
 * is every key that exists, the second those that could be locked (SKIP LOCKED never waits). Run
 * after a lock timeout, inside a transaction that is rolled back, to name the keys in the error.
 */
export function existingKeysSql(ref: TableRef): string {
	return `SELECT key FROM ${ref.qualified} WHERE key = ANY($1::text[])`;
}

export function lockableKeysSql(ref: TableRef): string {
	return `SELECT key FROM ${ref.qualified} WHERE key = ANY($1::text[]) FOR UPDATE SKIP LOCKED`;
}

export function releaseSql(ref: TableRef): string {
	return `WITH ${LOCK_BOUND_CTE}
DELETE FROM ${ref.qualified} AS t USING lock_bound WHERE t.key = ANY($1::text[]) RETURNING t.key`;
}

/** The cutoff is computed once, in database time, so every batch of one purge uses the same instant. */
export function purgeCutoffSql(): string {
	return `SELECT now() - $1::interval AS cutoff`;
}

/**
 * Deletes at most $3 rows older than $1 (within namespace prefix $2 when not null). SKIP LOCKED
 * leaves rows that a running execution holds, so a purge never waits on a webhook. On a table with
 * the lease columns (`lease`), a key whose lease still runs is kept whatever its age: an old event
 * retried and taken over a moment ago is being processed now, and its Complete Key needs the row.
 * FOR UPDATE re-checks that condition on the newest version of a row a takeover just committed.
 */
export function purgeBatchSql(ref: TableRef, { lease = false }: { lease?: boolean } = {}): string {
	const liveLease = lease
		? `
    AND (status IS DISTINCT FROM 'in_progress' OR lease_until IS NULL OR lease_until <= now())`
		: '';
	return `DELETE FROM ${ref.qualified}
WHERE key IN (
  SELECT key FROM ${ref.qualified}
  WHERE first_seen < $1 AND ($2::text IS NULL OR starts_with(key, $2::text))${liveLease}
  LIMIT $3
  FOR UPDATE SKIP LOCKED
)`;
}

/**
 * Lease mode's reservation, one statement for all keys ($1, distinct and sorted; $2 the owner token
 * of this reservation; $3 the lease in seconds; with `fingerprint`, $4 their fingerprints, aligned).
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
 * taken: it is in progress. Rows as
 * [key, state, attempts, lease_until, first_seen, retry_after, fingerprint, response].
 */
export function reserveLeaseSql(ref: TableRef, { fingerprint = false } = {}): string {
	const input = fingerprint
		? `SELECT i.key, i.fingerprint FROM lock_bound, unnest($1::text[], $4::text[]) AS i(key, fingerprint)`
		: `SELECT unnest($1::text[]) AS key FROM lock_bound`;
	const sameRequest = fingerprint
		? `
    AND (t.fingerprint IS NULL OR input.fingerprint IS NULL OR t.fingerprint = input.fingerprint)`
		: '';
	return `WITH ${LOCK_BOUND_CTE}, input AS MATERIALIZED (
  ${input}
), inserted AS (
  INSERT INTO ${ref.qualified} (key, status, owner_token, lease_until${fingerprint ? ', fingerprint' : ''})
  SELECT key, 'in_progress', $2::text, now() + make_interval(secs => $3::float8)${fingerprint ? ', fingerprint' : ''} FROM input
  ON CONFLICT (key) DO NOTHING
  RETURNING key, attempts, lease_until
), taken AS (
  UPDATE ${ref.qualified} AS t
  SET owner_token = $2::text, lease_until = now() + make_interval(secs => $3::float8), attempts = t.attempts + 1
  FROM input
  WHERE t.key = input.key AND t.status || '' = 'in_progress' AND t.lease_until <= now()${sameRequest}
  RETURNING t.key, t.attempts, t.lease_until
), reserved AS (
  SELECT * FROM inserted UNION ALL SELECT * FROM taken
)
SELECT key, 'reserved' AS state, attempts, extract(epoch FROM lease_until)::float8, NULL::float8, NULL::int,
  NULL::text, NULL::jsonb
FROM reserved
UNION ALL
SELECT u.key, existing.status, existing.attempts, NULL::float8, extract(epoch FROM existing.first_seen)::float8,
  CASE WHEN existing.lease_until > now()
       THEN greatest(1, ceil(extract(epoch FROM existing.lease_until - clock_timestamp())))::int
       ELSE ceil($3::float8)::int END,
  existing.row_json ->> 'fingerprint', existing.row_json -> 'response'
FROM input u
CROSS JOIN LATERAL (
  SELECT t.status, t.attempts, t.lease_until, t.first_seen, to_jsonb(t) AS row_json
  FROM ${ref.qualified} t WHERE t.key = u.key LIMIT 1
) existing
WHERE NOT EXISTS (SELECT 1 FROM reserved r WHERE r.key = u.key)`;
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
 * (null) is deleted whoever holds it. Says for each key whether it was released, whether a row was
 * there and whether it is completed by that token.
 */
export function releaseOwnedSql(ref: TableRef): string {
	return `WITH ${LOCK_BOUND_CTE}, target AS MATERIALIZED (
  SELECT c.key, c.owner_token FROM unnest($1::text[], $2::text[]) AS c(key, owner_token) CROSS JOIN lock_bound
), released AS (
  DELETE FROM ${ref.qualified} AS t
  USING target
  WHERE t.key = target.key AND (target.owner_token IS NULL
    OR (t.owner_token = target.owner_token AND t.status IS DISTINCT FROM 'completed'))
  RETURNING t.key
)
SELECT target.key, target.owner_token,
  EXISTS (SELECT 1 FROM released r WHERE r.key = target.key) AS released,
  EXISTS (SELECT 1 FROM ${ref.qualified} t WHERE t.key = target.key) AS row_exists,
  EXISTS (SELECT 1 FROM ${ref.qualified} t
    WHERE t.key = target.key AND t.owner_token = target.owner_token AND t.status = 'completed') AS completed_by_owner
FROM target`;
}

/**
 * The exactly-once step's first statement, inside its transaction: locks the rows of the keys in $1
 * (sorted by the caller) in key order, so overlapping batches queue instead of deadlocking, and
 * returns who holds each one now. The wait for a row is bounded like every other statement, then
 * the setting from before is handed back (`previous_lock_timeout`) so the user's own statements
 * keep the database's. One row at least, even when no key exists (the LEFT JOIN).
 */
export function lockOwnedKeysSql(ref: TableRef): string {
	return `WITH previous AS MATERIALIZED (
  SELECT current_setting('lock_timeout') AS lock_timeout
), ${lockBoundCte(' FROM previous')}, locked AS MATERIALIZED (
  SELECT t.key, t.owner_token, t.status, t.attempts
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

/*
 * The operators' view (Idempotency Keys node): look up, report, targeted purge. Every statement
 * reads the optional columns through to_jsonb(t), as reserveLeaseSql does, so it runs on the
 * two-column table, the lease table, and one with fingerprints and responses alike. Every scan is
 * bounded by an index: the primary key, first_seen, or the operators' indexes below.
 */

/** The operators' indexes: what each serves and the statement that makes it. */
export type OperatorIndex = 'inProgress' | 'takeover' | 'keyPrefix';

const OPERATOR_INDEX_SUFFIX: Record<OperatorIndex, string> = {
	inProgress: '_in_progress_idx',
	takeover: '_takeover_idx',
	keyPrefix: '_key_c_idx',
};

/** Same 63-byte rule as firstSeenIndexName: the table part is cut to leave room for the suffix. */
export function operatorIndexName(ref: TableRef, index: OperatorIndex): string {
	const suffix = OPERATOR_INDEX_SUFFIX[index];
	return ref.table.slice(0, 63 - suffix.length) + suffix;
}

/**
 * - inProgress: only the keys in flight (small whatever the table's size), by lease end: stuck
 *   keys, in-progress counts and the running leases a purge keeps are a range of it;
 * - takeover: only keys taken over at least once (attempts > 1), so counting them reads no other;
 * - keyPrefix: the key in byte order. The primary key sorts by the database's collation, where the
 *   keys starting with a prefix need not be next to each other; in "C" they are a range.
 */
export function createOperatorIndexSql(ref: TableRef, index: OperatorIndex): string {
	const name = quoteIdentifier(operatorIndexName(ref, index));
	const target = {
		inProgress: `(lease_until) WHERE status = 'in_progress'`,
		takeover: `(first_seen) WHERE attempts > 1`,
		keyPrefix: `(key COLLATE "C")`,
	}[index];
	// CONCURRENTLY: a table in use keeps taking reservations while the index is built (a plain
	// CREATE INDEX would hold back every INSERT until it is done, which on millions of keys means
	// webhooks waiting). It cannot run inside a transaction, so it is sent on its own.
	return `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${name} ON ${ref.qualified} ${target}`;
}

/** Which of the index names in $2 exist, valid, on table $1. */
export function inspectOperatorIndexesSql(): string {
	return `SELECT c.relname::text AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE i.indrelid = to_regclass($1) AND i.indisvalid AND c.relname = ANY($2::text[])`;
}

/**
 * One key row as the operator sees it, from `j` (to_jsonb of the row; NULL when there is none).
 * Status NULL is a row written in simple mode or by the hand-built pattern: `legacy`. The holder is
 * the first 8 hex digits of sha256(owner_token): enough to tell two reservations apart, useless
 * for completing or releasing the key. Times as seconds since 1970.
 */
function keyRowColumns(includeResponse: string): string {
	return `j IS NOT NULL AS found,
  CASE WHEN j IS NULL THEN NULL ELSE coalesce(j ->> 'status', 'legacy') END AS status,
  coalesce((j ->> 'attempts')::int, CASE WHEN j IS NULL THEN NULL ELSE 1 END) AS attempt,
  extract(epoch FROM (j ->> 'first_seen')::timestamptz)::float8 AS first_seen,
  extract(epoch FROM (j ->> 'lease_until')::timestamptz)::float8 AS lease_until,
  extract(epoch FROM (j ->> 'completed_at')::timestamptz)::float8 AS completed_at,
  coalesce(j ->> 'fingerprint', '') <> '' AS has_fingerprint,
  coalesce(jsonb_typeof(j -> 'response'), 'null') <> 'null' AS has_response,
  left(encode(sha256(convert_to(j ->> 'owner_token', 'UTF8')), 'hex'), 8) AS holder,
  CASE WHEN ${includeResponse} THEN j -> 'response' END AS response,
  extract(epoch FROM now())::float8 AS now`;
}

/**
 * Looks up the keys in $1 (in that order, repeats kept), one row per key, a missing key included
 * (found false). $2: whether to return stored responses. One primary-key probe per key.
 */
export function lookUpKeysSql(ref: TableRef): string {
	return `SELECT u.key, ${keyRowColumns('$2::boolean')}
FROM unnest($1::text[]) WITH ORDINALITY AS u(key, n)
LEFT JOIN LATERAL (SELECT to_jsonb(t) AS j FROM ${ref.qualified} t WHERE t.key = u.key LIMIT 1) found ON true
ORDER BY u.n`;
}

/**
 * Keys starting with $1, in byte order, at most $3, after key $4 (null: from the first): a range of
 * the key-prefix index ($1 up to $2, the first text after every key that starts with $1; null when
 * there is none), re-checked with starts_with. $5: whether to return stored responses.
 */
export function lookUpPrefixSql(ref: TableRef): string {
	return `SELECT t.key, ${keyRowColumns('$5::boolean')}
FROM ${ref.qualified} t CROSS JOIN LATERAL (SELECT to_jsonb(t) AS j) row_json
WHERE (t.key COLLATE "C") >= $1::text AND ($2::text IS NULL OR (t.key COLLATE "C") < $2::text)
  AND starts_with(t.key, $1::text) AND ($4::text IS NULL OR (t.key COLLATE "C") > $4::text)
ORDER BY (t.key COLLATE "C")
LIMIT $3::int`;
}

/**
 * Stuck keys: in progress, their lease ended more than $1 seconds ago (the execution that held
 * them died and no retry has taken them over), longest stuck first, at most $2. A range of the
 * in-progress index. $3: whether to return stored responses. Needs the lease columns.
 */
export function lookUpStuckSql(ref: TableRef): string {
	return `SELECT t.key, ${keyRowColumns('$3::boolean')}
FROM ${ref.qualified} t CROSS JOIN LATERAL (SELECT to_jsonb(t) AS j) row_json
WHERE t.status = 'in_progress' AND t.lease_until < now() - make_interval(secs => $1::float8)
ORDER BY t.lease_until
LIMIT $2::int`;
}

/**
 * The report, one statement of scalar subqueries, each a bounded range of one index: every count
 * stops at $1 rows (the caller reads a count of $1 as "at least"), so the report's cost does not
 * grow with the table. $2: the grace after a lease end before a key counts as stuck (seconds);
 * $3: the purge cutoff to preview. With `lease` (the table has the lease columns): in-progress,
 * running, stuck and takeover counts from their partial indexes; without, they are 0. The total is
 * the planner's estimate (pg_class.reltuples, -1 when never analysed): an exact count would read
 * the whole table, and PostgreSQL keeps no exact row count.
 */
export function reportSql(ref: TableRef, { lease }: { lease: boolean }): string {
	const bounded = (where: string, order: string) =>
		`(SELECT count(*)::int FROM (SELECT 1 FROM ${ref.qualified} t WHERE ${where} ORDER BY ${order} LIMIT $1::int) c)`;
	const inProgress = `t.status = 'in_progress'`;
	const leaseCounts = lease
		? `${bounded(inProgress, 't.lease_until')} AS in_progress,
  ${bounded(`${inProgress} AND t.lease_until >= now()`, 't.lease_until')} AS running,
  ${bounded(`${inProgress} AND t.lease_until < now() - make_interval(secs => $2::float8)`, 't.lease_until')} AS stuck,
  (SELECT extract(epoch FROM min(t.lease_until))::float8 FROM ${ref.qualified} t
    WHERE ${inProgress} AND t.lease_until < now() - make_interval(secs => $2::float8)) AS oldest_stuck_lease_until,
  ${bounded('t.attempts > 1', 't.first_seen')} AS takeovers,
  ${bounded(`${inProgress} AND t.lease_until > now() AND t.first_seen < $3::timestamptz`, 't.lease_until')} AS purge_kept`
		: `0 AS in_progress, 0 AS running, 0 AS stuck, NULL::float8 AS oldest_stuck_lease_until, 0 AS takeovers,
  0 AS purge_kept`;
	return `SELECT
  (SELECT CASE WHEN c.reltuples < 0 THEN NULL ELSE c.reltuples::bigint END FROM pg_class c
    WHERE c.oid = to_regclass($4::text)) AS estimated_total,
  ${leaseCounts},
  (SELECT t.key FROM ${ref.qualified} t ORDER BY t.first_seen LIMIT 1) AS oldest_key,
  (SELECT extract(epoch FROM t.first_seen)::float8 FROM ${ref.qualified} t ORDER BY t.first_seen LIMIT 1) AS oldest_first_seen,
  ${bounded(`t.first_seen >= now() - interval '1 hour'`, 't.first_seen DESC')} AS last_hour,
  ${bounded(`t.first_seen >= now() - interval '1 day'`, 't.first_seen DESC')} AS last_day,
  ${bounded('t.first_seen < $3::timestamptz', 't.first_seen')} AS purge_older,
  $2::float8 AS grace_seconds,
  extract(epoch FROM now())::float8 AS now`;
}

/** How a targeted purge picks its keys (each an index range), and what it filters them by. */
export interface KeySelection {
	by: 'keys' | 'prefix' | 'age';
	/** Only rows of this state; `completedOrLegacy` is what Reserve treats as done. */
	status: 'any' | 'completed' | 'legacy' | 'completedOrLegacy' | 'inProgress';
	/** Delete keys whose lease still runs too (never by default: their execution is working on them). */
	includeRunningLeases: boolean;
	/** The table has the lease columns (without, every row is legacy). */
	lease: boolean;
}

/** The bind parameters a selection's statements take, in order ($1 …). */
export function keySelectionParameters(
	selection: KeySelection,
): Array<'keys' | 'prefix' | 'prefixEnd' | 'cutoff'> {
	if (selection.by === 'keys') return ['keys'];
	if (selection.by === 'prefix') return ['prefix', 'prefixEnd'];
	return ['cutoff'];
}

/** The WHERE of a selection over `t`, and the ORDER BY that makes the planner walk its index. */
function keySelectionWhere(selection: KeySelection): { where: string; order: string } {
	const picks = {
		keys: { where: 't.key = ANY($1::text[])', order: 't.key' },
		prefix: {
			where: `(t.key COLLATE "C") >= $1::text AND ($2::text IS NULL OR (t.key COLLATE "C") < $2::text) AND starts_with(t.key, $1::text)`,
			order: '(t.key COLLATE "C")',
		},
		age: { where: 't.first_seen < $1::timestamptz', order: 't.first_seen' },
	}[selection.by];
	const conditions = [picks.where];
	const status = selection.lease
		? {
				any: '',
				completed: `t.status = 'completed'`,
				legacy: 't.status IS NULL',
				completedOrLegacy: `t.status IS DISTINCT FROM 'in_progress'`,
				inProgress: `t.status = 'in_progress'`,
			}[selection.status]
		: // Without the lease columns every row was written in simple mode: legacy, done.
			['any', 'legacy', 'completedOrLegacy'].includes(selection.status)
			? ''
			: 'false';
	if (status !== '') conditions.push(status);
	if (selection.lease && !selection.includeRunningLeases)
		conditions.push(
			`(t.status IS DISTINCT FROM 'in_progress' OR t.lease_until IS NULL OR t.lease_until <= now())`,
		);
	return { where: conditions.join('\n  AND '), order: picks.order };
}

/**
 * A dry run: how many keys the selection matches (stopping at the parameter after the selection's:
 * the caller reads that many as "at least") and the first of them in index order (at most the next
 * parameter). Rows another transaction holds are counted; the purge itself skips them.
 */
export function keySelectionPreviewSql(ref: TableRef, selection: KeySelection): string {
	const { where, order } = keySelectionWhere(selection);
	const next = keySelectionParameters(selection).length + 1;
	return `WITH matched AS MATERIALIZED (
  SELECT t.key, row_number() OVER () AS n FROM (
    SELECT t.key FROM ${ref.qualified} t
    WHERE ${where}
    ORDER BY ${order}
    LIMIT $${next}::int
  ) t
)
SELECT (SELECT count(*)::int FROM matched) AS matched,
  ARRAY(SELECT key FROM matched WHERE n <= $${next + 1}::int ORDER BY n) AS keys`;
}

/**
 * One batch of a targeted purge: deletes at most $n (the parameter after the selection's) of the
 * selected rows and returns their keys. SKIP LOCKED leaves rows a running execution holds, and
 * FOR UPDATE re-checks the lease condition on the newest version of a row just taken over, as in
 * purgeBatchSql. The ORDER BY keeps the inner scan on its index however much of the table matches.
 */
export function keySelectionDeleteSql(ref: TableRef, selection: KeySelection): string {
	const { where, order } = keySelectionWhere(selection);
	const next = keySelectionParameters(selection).length + 1;
	return `DELETE FROM ${ref.qualified} AS d
WHERE d.key IN (
  SELECT t.key FROM ${ref.qualified} t
  WHERE ${where}
  ORDER BY ${order}
  LIMIT $${next}::int
  FOR UPDATE SKIP LOCKED
)
RETURNING d.key`;
}
