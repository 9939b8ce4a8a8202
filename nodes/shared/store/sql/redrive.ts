import type { TableRef } from '../identifiers';

/**
 * Answer first (Reserve's Store Delivery): the sender was answered 2xx once the delivery was stored
 * with its key, so if the execution dies before Complete Key, nobody resends it. The Redrive Trigger
 * runs such keys again from the stored delivery once their lease has ended (and a backoff that
 * doubles with each attempt), and gives up on a key after a number of attempts: its status becomes
 * `dead_letter`, which an operator retries or drops from the Keys node.
 */

/** A key's status once the Redrive Trigger gave up on it. */
export const DEAD_LETTER = 'dead_letter';

/**
 * Claims due keys in one statement. $1 a token for this claim (each key's owner token is $1 + '.' +
 * the md5 of its key, so every claimed key has its own), $2 the lease in seconds, $3 the attempts
 * after which a key is a dead letter, $4 how many keys at most, $5 the backoff's first step in
 * seconds (doubled per attempt, at most an hour), $6 the claiming workflow's id, $7 whether keys
 * whose delivery names no workflow are claimed too.
 * - due: in progress, a stored delivery that this workflow stored (each names its workflow: two
 *   workflows on one table never run each other's events; one stored before deliveries named a
 *   workflow only when told, $7), lease ended at least the backoff ago. FOR UPDATE SKIP
 *   LOCKED: two triggers (two n8n mains, or a trigger beside a sender's retry that Reserve is taking
 *   over) never claim one key twice; the UPDATE re-checks the lease on the row it locked.
 * - claimed: a new owner and lease, attempts + 1, exactly as Reserve's takeover, so a sender's late
 *   retry meets a running lease ("in flight") and Complete Key / Release / Step check this owner.
 * - dead: due keys that used up their attempts: `dead_letter`, no owner, no lease.
 * Rows: [outcome ('claimed' | 'dead'), key, owner_token, attempts, lease_until (s since 1970), delivery].
 */
export function claimRedrivesSql(ref: TableRef): string {
	return `WITH due AS (
  SELECT t.key, t.attempts FROM ${ref.qualified} t
  WHERE t.status = 'in_progress' AND t.delivery IS NOT NULL
    AND (t.delivery ->> 'workflowId' = $6::text OR ($7::boolean AND NOT t.delivery ? 'workflowId'))
    AND t.lease_until + make_interval(secs => least(3600, $5::float8 * power(2, greatest(t.attempts - 1, 0)))) <= now()
  ORDER BY t.lease_until
  LIMIT $4
  FOR UPDATE SKIP LOCKED
), claimed AS (
  UPDATE ${ref.qualified} AS t
  SET owner_token = $1::text || '.' || md5(t.key), lease_until = now() + make_interval(secs => $2::float8),
    attempts = t.attempts + 1
  FROM due
  WHERE t.key = due.key AND due.attempts < $3 AND t.lease_until <= now()
  RETURNING t.key, t.owner_token, t.attempts, t.lease_until, t.delivery
), dead AS (
  UPDATE ${ref.qualified} AS t
  SET status = '${DEAD_LETTER}', owner_token = NULL, lease_until = NULL
  FROM due
  WHERE t.key = due.key AND due.attempts >= $3
  RETURNING t.key, t.attempts
)
SELECT 'claimed' AS outcome, key, owner_token, attempts, extract(epoch FROM lease_until)::float8, delivery FROM claimed
UNION ALL
SELECT 'dead', key, NULL, attempts, NULL::float8, NULL::jsonb FROM dead`;
}

/**
 * Dead letters ($1) made due again at once, with a fresh count of attempts: the next claim runs them.
 * Keys that are not dead letters are left alone. Returns the keys it changed.
 */
export function retryDeadLettersSql(ref: TableRef): string {
	return `UPDATE ${ref.qualified}
SET status = 'in_progress', attempts = 0, lease_until = now() - interval '1 hour', owner_token = NULL
WHERE key = ANY($1::text[]) AND status = '${DEAD_LETTER}'
RETURNING key`;
}
