import type { TableRef } from '../identifiers';

/**
 * The lease keeper's one statement (store/leaseKeeper.ts): renews, for every key a process keeps
 * ($1 keys, $2 their owner tokens, $3 their leases in seconds, aligned), the lease of each key that
 * token still owns while it is in progress and its lease has not ended yet, to now() + its lease.
 * - Not ended yet: a lease that ended is never brought back. Release Key reopens a key by ending its
 *   lease (sql/ownedKeys.ts), and a key whose lease ended may already be another execution's.
 * - FOR UPDATE SKIP LOCKED, in key order: a row another transaction holds (Complete Key, Release,
 *   a step record) is skipped, never waited for; the next renewal gets it, and the statement
 *   cannot deadlock with a batch that locks the same keys.
 * - greatest(): a renewal never shortens a lease.
 * Rows: [key, state] for every key asked: 'renewed'; 'busy' (locked by another transaction: try
 * again); 'gone' (completed, released, purged, ended or owned by another token: stop keeping it).
 */
export function renewLeasesSql(ref: TableRef): string {
	return `WITH asked AS MATERIALIZED (
  SELECT k.key, k.owner_token, k.lease FROM unnest($1::text[], $2::text[], $3::float8[]) AS k(key, owner_token, lease)
), mine AS (
  SELECT t.key, asked.lease FROM ${ref.qualified} t JOIN asked ON t.key = asked.key
  WHERE t.owner_token = asked.owner_token AND t.status = 'in_progress' AND t.lease_until > now()
  ORDER BY t.key
  FOR UPDATE OF t SKIP LOCKED
), renewed AS (
  UPDATE ${ref.qualified} AS t
  SET lease_until = greatest(t.lease_until, now() + make_interval(secs => mine.lease))
  FROM mine WHERE t.key = mine.key
  RETURNING t.key
)
SELECT asked.key,
  CASE WHEN EXISTS (SELECT 1 FROM renewed r WHERE r.key = asked.key) THEN 'renewed'
       WHEN EXISTS (SELECT 1 FROM ${ref.qualified} t WHERE t.key = asked.key AND t.owner_token = asked.owner_token
         AND t.status = 'in_progress' AND t.lease_until > now()) THEN 'busy'
       ELSE 'gone' END AS state
FROM asked`;
}
