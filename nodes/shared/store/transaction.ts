import { checkOut } from '../transport/checkOut';
import { isConnectionLoss } from '../transport/connectionRetry';
import type { Pool, PoolClient } from '../transport/pg';

/**
 * Runs `work` between BEGIN and COMMIT (or ROLLBACK, when it asks for it or fails) on one pooled
 * connection. A connection that was lost, or whose ROLLBACK failed, is dropped by the pool, never
 * reused mid-transaction.
 */
export async function inTransaction<T>(
	pool: Pool,
	work: (client: PoolClient) => Promise<{ commit: boolean; value: T }>,
): Promise<T> {
	const { client, release } = await checkOut(pool);
	let failure: unknown;
	let broken: Error | undefined;
	try {
		await client.query('BEGIN');
		const { commit, value } = await work(client);
		await client.query(commit ? 'COMMIT' : 'ROLLBACK');
		release();
		return value;
	} catch (error) {
		failure = error;
	}
	// A lost connection is dropped at once, never handed to the next execution.
	if (isConnectionLoss(failure)) broken = failure as Error;
	else {
		try {
			await client.query('ROLLBACK');
		} catch (rollbackError) {
			broken = rollbackError as Error;
		}
	}
	release(broken);
	throw failure;
}
