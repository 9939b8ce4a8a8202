import { LOCK_WAIT_MS } from '../../transport/lockWait';
import type { TableRef } from '../identifiers';

/**
 * A CTE that sets lock_timeout for the rest of this statement's implicit transaction (is_local:
 * reset at its end, so nothing leaks to the connection's next statement; works behind PgBouncer in
 * transaction mode, where session SET and startup options do not). The row source of every write
 * reads from it, so it runs before the first row can be waited on. A shorter lock_timeout already
 * set for the user or database is kept. Table locks are taken before any of it runs (when the
 * statement is parsed): only a lock_timeout on the role bounds those.
 */
export function lockBoundCte(source = ''): string {
	return `lock_bound AS MATERIALIZED (
  SELECT set_config('lock_timeout',
    CASE WHEN current_setting('lock_timeout')::interval > interval '0'
          AND current_setting('lock_timeout')::interval < interval '${LOCK_WAIT_MS} milliseconds'
      THEN current_setting('lock_timeout') ELSE '${LOCK_WAIT_MS}ms' END, true) AS lock_timeout${source}
)`;
}

export const LOCK_BOUND_CTE = lockBoundCte();

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
