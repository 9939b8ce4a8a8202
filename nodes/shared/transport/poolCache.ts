import {
	clientConfig,
	maxConnections,
	poolFingerprint,
	type IdempotencyPostgresCredential,
} from './connectionOptions';
import { Pool } from './pg';

/** Idle clients are closed by the pool itself, so a quiet workflow holds no connections. */
export const IDLE_TIMEOUT_MS = 10_000;

export interface PoolEntry {
	pool: Pool;
	/** Tables already checked or created through this pool (`"schema"."table"`), each settled once. */
	preparedTables: Map<string, Promise<void>>;
	/** The last error an idle client reported (server restart, network drop); kept for diagnostics. */
	lastIdleError?: Error;
}

const pools = new Map<string, PoolEntry>();

/**
 * One pool per distinct credential, kept for the life of the n8n process so executions reuse
 * connections instead of opening one each.
 */
export function poolFor(credential: IdempotencyPostgresCredential): PoolEntry {
	const fingerprint = poolFingerprint(credential);
	let entry = pools.get(fingerprint);
	if (entry === undefined) {
		const pool = new Pool({
			...clientConfig(credential),
			max: maxConnections(credential),
			idleTimeoutMillis: IDLE_TIMEOUT_MS,
		});
		const created: PoolEntry = { pool, preparedTables: new Map() };
		// Without a listener, an idle client's error (e.g. PostgreSQL restarting) is an unhandled
		// 'error' event and takes the whole n8n process down. The pool drops that client itself.
		pool.on('error', (error: Error) => {
			created.lastIdleError = error;
		});
		pools.set(fingerprint, created);
		entry = created;
	}
	return entry;
}

/** Closes every pool. For tests and benchmarks that must let the process exit. */
export async function closeAllPools(): Promise<void> {
	const entries = [...pools.values()];
	pools.clear();
	await Promise.all(entries.map(async (entry) => await entry.pool.end()));
}
