import { checkOut, type CheckedOutClient } from '../transport/checkOut';
import type { Pool } from '../transport/pg';
import type { TableRef } from './identifiers';
import { existingKeysSql, lockableKeysSql } from './sql/lockBound';

const LOCK_NOT_AVAILABLE = '55P03';

function sqlState(error: unknown): string | undefined {
	return (error as { code?: string } | undefined)?.code;
}

/** How long naming the locked keys after a lock timeout may itself wait (a whole table may be locked). */
const DIAGNOSIS_LOCK_WAIT = '200ms';

/**
 * Runs one statement of the key nodes; after a lock timeout, looks up which of its keys another
 * transaction holds, for the error message. (A connection that failed, read-only or timed out,
 * is dropped by the pool, so a setting it started with cannot outlive its first failed write.)
 */
export async function withLockDiagnosis<T>(
	pool: Pool,
	ref: TableRef,
	run: () => Promise<T>,
	keys: readonly string[] = [],
): Promise<T> {
	let failure: unknown;
	try {
		return await run();
	} catch (error) {
		failure = error;
	}
	if (sqlState(failure) === LOCK_NOT_AVAILABLE && keys.length > 0) {
		(failure as { lockedKeys?: string[] }).lockedKeys = await keysLockedByOthers(pool, ref, keys);
	}
	throw failure;
}

/**
 * The keys that exist and that another transaction holds right now, in a transaction of its own
 * that locks nothing it keeps (rolled back) and waits for nothing long. Undefined when that
 * could not be told (the table itself locked, the database gone).
 */
async function keysLockedByOthers(
	pool: Pool,
	ref: TableRef,
	keys: readonly string[],
): Promise<string[] | undefined> {
	const distinct = [...new Set(keys)].sort();
	// Naming the keys is worth no wait for a connection: with none free, the error says less.
	if (pool.idleCount === 0 && pool.totalCount >= (pool.options.max ?? 10)) return undefined;
	let checkedOut: CheckedOutClient;
	try {
		checkedOut = await checkOut(pool);
	} catch {
		return undefined;
	}
	const { client } = checkedOut;
	let failure: unknown;
	let locked: string[] | undefined;
	try {
		await client.query('BEGIN');
		await client.query(`SET LOCAL lock_timeout = '${DIAGNOSIS_LOCK_WAIT}'`);
		const existing = await client.query<{ key: string }>(existingKeysSql(ref), [distinct]);
		const lockable = await client.query<{ key: string }>(lockableKeysSql(ref), [distinct]);
		const free = new Set(lockable.rows.map((row) => row.key));
		locked = existing.rows.map((row) => row.key).filter((key) => !free.has(key));
		await client.query('ROLLBACK');
	} catch (error) {
		failure = error;
	}
	// A failed diagnosis leaves the transaction open: the pool must drop that connection.
	checkedOut.release(failure instanceof Error ? failure : undefined);
	return failure === undefined ? locked : undefined;
}
