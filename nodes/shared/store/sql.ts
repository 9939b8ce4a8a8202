import { firstSeenIndexName, quoteIdentifier, type TableRef } from './identifiers';

/**
 * Every statement the package runs. Identifiers come only from a validated TableRef; every
 * value is a bind parameter.
 */

/** Is the table there, and does it already have an index leading with first_seen? No DDL when both hold. */
export function inspectTableSql(): string {
	return `SELECT c.oid IS NOT NULL AS table_exists,
  EXISTS (
    SELECT 1 FROM pg_index i
    JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
    WHERE i.indrelid = c.oid AND a.attname = 'first_seen'
  ) AS has_first_seen_index
FROM (SELECT to_regclass($1) AS oid) c`;
}

/** Serialises concurrent first-time creators: two CREATE ... IF NOT EXISTS racing can fail on pg_type or pg_class. */
const DDL_LOCK = `SELECT pg_advisory_xact_lock(hashtext('n8n-nodes-idempotency:create-table'));`;

function createIndexSql(ref: TableRef): string {
	return `CREATE INDEX IF NOT EXISTS ${quoteIdentifier(firstSeenIndexName(ref))} ON ${ref.qualified} (first_seen)`;
}

/**
 * The table and its first_seen index, as one multi-statement query that PostgreSQL runs as one
 * implicit transaction. Sent without parameters (simple protocol); names come from a TableRef.
 */
export function createTableSql(ref: TableRef): string {
	return `${DDL_LOCK}
CREATE TABLE IF NOT EXISTS ${ref.qualified} (
  key text PRIMARY KEY,
  first_seen timestamptz NOT NULL DEFAULT now()
);
${createIndexSql(ref)};`;
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
	return `INSERT INTO ${ref.qualified} (key)
SELECT unnest($1::text[])
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
	return `WITH inserted AS (
  INSERT INTO ${ref.qualified} (key)
  SELECT unnest($1::text[])
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

export function releaseSql(ref: TableRef): string {
	return `DELETE FROM ${ref.qualified} WHERE key = ANY($1::text[]) RETURNING key`;
}

/** The cutoff is computed once, in database time, so every batch of one purge uses the same instant. */
export function purgeCutoffSql(): string {
	return `SELECT now() - $1::interval AS cutoff`;
}

/**
 * Deletes at most $3 rows older than $1 (within namespace prefix $2 when not null). SKIP LOCKED
 * leaves rows that a running execution holds, so a purge never waits on a webhook.
 */
export function purgeBatchSql(ref: TableRef): string {
	return `DELETE FROM ${ref.qualified}
WHERE key IN (
  SELECT key FROM ${ref.qualified}
  WHERE first_seen < $1 AND ($2::text IS NULL OR starts_with(key, $2::text))
  LIMIT $3
  FOR UPDATE SKIP LOCKED
)`;
}
