import { quoteIdentifier, type TableRef } from '../identifiers';
import { ANSWERED_EVENT } from './answeredEvents';
import { LOCK_BOUND_CTE } from './lockBound';
import { DEAD_LETTER, retryDeadLettersSql } from './redrive';

/*
 * The operators' view (Idempotency Keys node): look up, report, targeted purge. Every statement
 * reads the optional columns through to_jsonb(t), as reserveLeaseSql does, so it runs on the
 * two-column table, the lease table, and one with fingerprints and responses alike. Every scan is
 * bounded by an index: the primary key, first_seen, or the operators' indexes below.
 */

/** The operators' indexes: what each serves and the statement that makes it. */
export type OperatorIndex = 'inProgress' | 'takeover' | 'keyPrefix' | 'deadLetter';

const OPERATOR_INDEX_SUFFIX: Record<OperatorIndex, string> = {
	inProgress: '_in_progress_idx',
	takeover: '_takeover_idx',
	keyPrefix: '_key_c_idx',
	deadLetter: '_dead_letter_idx',
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
 *   keys starting with a prefix need not be next to each other; in "C" they are a range;
 * - deadLetter: only the dead letters (sql/redrive.ts), by first_seen: the report counts them and
 *   Look Up lists them without reading any other key.
 */
export function createOperatorIndexSql(ref: TableRef, index: OperatorIndex): string {
	const name = quoteIdentifier(operatorIndexName(ref, index));
	const target = {
		inProgress: `(lease_until) WHERE status = 'in_progress'`,
		takeover: `(first_seen) WHERE attempts > 1`,
		keyPrefix: `(key COLLATE "C")`,
		deadLetter: `(first_seen) WHERE status = '${DEAD_LETTER}'`,
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
  coalesce(jsonb_typeof(j -> 'delivery'), 'null') <> 'null' AS has_delivery,
  left(encode(sha256(convert_to(j ->> 'owner_token', 'UTF8')), 'hex'), 8) AS holder,
  CASE WHEN ${includeResponse} THEN j -> 'response' END AS response,
  (SELECT coalesce(jsonb_agg(jsonb_build_object('step', s.key, 'recordedAt', s.value ->> 'at')
     ORDER BY s.value ->> 'at', s.key), '[]'::jsonb)
   FROM jsonb_each(CASE WHEN jsonb_typeof(j -> 'steps') = 'object' THEN j -> 'steps' ELSE '{}'::jsonb END) s) AS steps,
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
 * in-progress index. $3: whether to return stored responses. Needs the lease columns. Without
 * `answered`, only keys without a stored delivery: only the sender's retry or an operator finishes
 * them. With it, only answered events (sql/answeredEvents.ts): waiting for the Redrive Trigger.
 */
export function lookUpStuckSql(ref: TableRef, { answered = false } = {}): string {
	return `SELECT t.key, ${keyRowColumns('$3::boolean')}
FROM ${ref.qualified} t CROSS JOIN LATERAL (SELECT to_jsonb(t) AS j) row_json
WHERE t.status = 'in_progress' AND t.lease_until < now() - make_interval(secs => $1::float8)
  AND ${answered ? '' : 'NOT '}${ANSWERED_EVENT}
ORDER BY t.lease_until
LIMIT $2::int`;
}

/** How many dead letters the report names (the oldest); Look Up → Dead Letters lists them all. */
export const REPORT_DEAD_LETTER_KEYS = 10;

/**
 * The report, one statement of scalar subqueries, each a bounded range of one index: every count
 * stops at $1 rows (the caller reads a count of $1 as "at least"), so the report's cost does not
 * grow with the table. $2: the grace after a lease end before a key counts as stuck (seconds);
 * $3: the purge cutoff to preview. With `lease` (the table has the lease columns): in-progress,
 * running, stuck, waiting-for-redrive, takeover and dead-letter counts from their partial indexes
 * (and the oldest dead letters' keys), and the keys a purge keeps (running leases, answered
 * events); without, they are 0. The total is
 * the planner's estimate (pg_class.reltuples, -1 when never analysed): an exact count would read
 * the whole table, and PostgreSQL keeps no exact row count.
 */
export function reportSql(ref: TableRef, { lease }: { lease: boolean }): string {
	const bounded = (where: string, order: string) =>
		`(SELECT count(*)::int FROM (SELECT 1 FROM ${ref.qualified} t WHERE ${where} ORDER BY ${order} LIMIT $1::int) c)`;
	const inProgress = `t.status = 'in_progress'`;
	const deadLetter = `t.status = '${DEAD_LETTER}'`;
	// Stuck: only the sender's retry or an operator finishes it. An answered event whose lease ended
	// waits for the Redrive Trigger instead (sql/answeredEvents.ts): counted apart.
	const stuck = `${inProgress} AND t.lease_until < now() - make_interval(secs => $2::float8) AND NOT ${ANSWERED_EVENT}`;
	const waiting = `${inProgress} AND t.lease_until < now() AND ${ANSWERED_EVENT}`;
	const leaseCounts = lease
		? `${bounded(inProgress, 't.lease_until')} AS in_progress,
  ${bounded(`${inProgress} AND t.lease_until >= now()`, 't.lease_until')} AS running,
  ${bounded(stuck, 't.lease_until')} AS stuck,
  (SELECT extract(epoch FROM min(t.lease_until))::float8 FROM ${ref.qualified} t
    WHERE ${stuck}) AS oldest_stuck_lease_until,
  ${bounded(waiting, 't.lease_until')} AS waiting_for_redrive,
  (SELECT extract(epoch FROM min(t.lease_until))::float8 FROM ${ref.qualified} t
    WHERE ${waiting}) AS oldest_waiting_lease_until,
  ${bounded('t.attempts > 1', 't.first_seen')} AS takeovers,
  ${bounded(`${inProgress} AND t.lease_until > now() AND t.first_seen < $3::timestamptz`, 't.lease_until')} AS purge_kept,
  ${bounded(`${inProgress} AND (t.lease_until IS NULL OR t.lease_until <= now()) AND t.first_seen < $3::timestamptz AND ${ANSWERED_EVENT}`, 't.lease_until')} AS purge_kept_answered,
  ${bounded(deadLetter, 't.first_seen')} AS dead_letters,
  ARRAY(SELECT t.key FROM ${ref.qualified} t WHERE ${deadLetter} ORDER BY t.first_seen LIMIT ${REPORT_DEAD_LETTER_KEYS}) AS dead_letter_keys`
		: `0 AS in_progress, 0 AS running, 0 AS stuck, NULL::float8 AS oldest_stuck_lease_until,
  0 AS waiting_for_redrive, NULL::float8 AS oldest_waiting_lease_until, 0 AS takeovers,
  0 AS purge_kept, 0 AS purge_kept_answered, 0 AS dead_letters, ARRAY[]::text[] AS dead_letter_keys`;
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

/**
 * Dead letters (keys the Redrive Trigger gave up on), oldest first, at most $1. A range of the
 * dead-letter index. $2: whether to return stored responses. Needs the lease columns.
 */
export function lookUpDeadLettersSql(ref: TableRef): string {
	return `SELECT t.key, ${keyRowColumns('$2::boolean')}
FROM ${ref.qualified} t CROSS JOIN LATERAL (SELECT to_jsonb(t) AS j) row_json
WHERE t.status = '${DEAD_LETTER}'
ORDER BY t.first_seen
LIMIT $1::int`;
}

/**
 * What the operator's retry or drop did with the keys in $1 (distinct, sorted): one row per key,
 * whether `changed` holds it, and the key's status before the statement (NULL: no such key;
 * 'legacy': a row without status). The rows are read from the statement's snapshot, so a changed
 * key shows `dead_letter`, the state it was changed from.
 */
function deadLetterOutcomeSql(ref: TableRef, changed: string): string {
	return `, changed AS (
${changed}
)
SELECT u.key, EXISTS (SELECT 1 FROM changed c WHERE c.key = u.key) AS changed,
  (SELECT coalesce(t.status, 'legacy') FROM ${ref.qualified} t WHERE t.key = u.key) AS status
FROM unnest($1::text[]) AS u(key)
ORDER BY u.key`;
}

/**
 * Retry Dead Letters: retryDeadLettersSql (due again at once, a fresh count of attempts, only dead
 * letters change) with each key's outcome. The lock wait is bounded like every write of the package.
 */
export function retryDeadLettersOutcomeSql(ref: TableRef): string {
	const retry = retryDeadLettersSql(ref).replace(/\nWHERE /, '\nFROM lock_bound\nWHERE ');
	// The UPDATE must read lock_bound, or the bound would not be set before its first row wait.
	if (!retry.includes('FROM lock_bound')) throw new Error('retryDeadLettersSql changed shape');
	return `WITH ${LOCK_BOUND_CTE}${deadLetterOutcomeSql(ref, retry)}`;
}

/** Drop Dead Letters: deletes the keys of $1 that are dead letters, and nothing else, with each key's outcome. */
export function dropDeadLettersSql(ref: TableRef): string {
	return `WITH ${LOCK_BOUND_CTE}${deadLetterOutcomeSql(
		ref,
		`DELETE FROM ${ref.qualified} AS t USING lock_bound
WHERE t.key = ANY($1::text[]) AND t.status = '${DEAD_LETTER}'
RETURNING t.key`,
	)}`;
}
