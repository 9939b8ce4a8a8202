import type { Pool, PoolClient } from './pg';

export interface CheckedOutClient {
	client: PoolClient;
	/** Back to the pool; with an error, or after its connection was lost, the client is dropped. */
	release: (error?: Error) => void;
}

/**
 * A client of `pool` for several statements (a transaction). pg-pool listens for a client's
 * connection errors only while it is idle: a checked-out client whose connection ends (a failover, a
 * restart) emits 'error' with nobody listening, an uncaught exception that takes n8n down. This
 * listens while the client is out, and drops a client whose connection was lost instead of handing
 * it to the next execution. (The statement that was running fails with that error anyway.)
 */
export async function checkOut(pool: Pool): Promise<CheckedOutClient> {
	const client = await pool.connect();
	let lost: Error | undefined;
	const onError = (error: Error) => {
		lost ??= error;
	};
	client.on('error', onError);
	return {
		client,
		release: (error) => {
			client.removeListener('error', onError);
			client.release(error ?? lost);
		},
	};
}
