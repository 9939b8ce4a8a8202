import { sleep } from 'n8n-workflow';

/**
 * How long a statement that is safe to repeat keeps being retried while the key store cannot be
 * reached: no new attempt starts later than this after the first one began. A managed failover
 * (primary lost, standby promoted, pooler or DNS re-pointed) takes a few seconds; a sender gives up
 * on a webhook after 10 s or more, so the answer must come before that.
 */
export const CONNECTION_RETRY_MS = 5_000;

/** The first wait between attempts; each next one is twice as long, at most RETRY_WAIT_CAP_MS. */
const FIRST_RETRY_WAIT_MS = 150;
const RETRY_WAIT_CAP_MS = 1_000;

/** What the retry did, attached to the error it gives up with (`connectionRetry`). */
export interface ConnectionRetryReport {
	attempts: number;
	/** From the start of the first attempt to the failure of the last. */
	elapsedMs: number;
}

interface DriverError {
	code?: string;
	message?: string;
	/** PostgreSQL's severity of an error it sent (ERROR, FATAL, PANIC); none for the driver's own. */
	severity?: string;
}

/** The driver's own codes for a socket that closed, was refused or never answered. */
const SOCKET_CODES = new Set([
	'ECONNREFUSED',
	'ECONNRESET',
	'EPIPE',
	'ETIMEDOUT',
	'EHOSTUNREACH',
	'ENETUNREACH',
	'EAI_AGAIN',
]);

/**
 * node-postgres and pg-pool report a lost connection in words, without a code: the socket closed
 * ("Connection terminated unexpectedly"), the login did not finish in connectionTimeoutMillis
 * ("Connection terminated due to connection timeout"), or the client was used after its connection
 * broke. ("timeout exceeded when trying to connect" is a full pool, not a lost connection.)
 */
const LOST_CONNECTION_WORDS =
	/Connection terminated|connection error and is not queryable|Client was closed and is not queryable/i;

/**
 * SQLSTATEs of a session that ended or could not start: class 08 (connection exception, PgBouncer
 * reports all its own failures as 08P01), admin_shutdown, crash_shutdown, cannot_connect_now.
 */
function lostSessionState(code: string): boolean {
	return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03';
}

/** PgBouncer's 08P01 for a wrong password, a missing database or a full pooler: retrying cannot help. */
const POOLER_REFUSALS =
	/authentication failed|database ".*" does not exist|no more connections allowed|max_client_conn/i;

/**
 * Did the statement fail because the connection to the key store was lost or refused, rather than
 * because of what it asked (a constraint, a privilege, a lock timeout)? Only then may a statement
 * that is safe to repeat be run again.
 */
export function isConnectionLoss(error: unknown): boolean {
	const { code, message = '', severity } = (error ?? {}) as DriverError;
	if (code !== undefined && SOCKET_CODES.has(code)) return true;
	if (code !== undefined && lostSessionState(code)) {
		return !(code === '08P01' && POOLER_REFUSALS.test(message));
	}
	if (code === undefined && severity === undefined) return LOST_CONNECTION_WORDS.test(message);
	return false;
}

/**
 * Did the session itself end (the socket, or a FATAL from the server or pooler), as opposed to a
 * statement answering with a class-08 error on a healthy connection (dblink, postgres_fdw)? The
 * exactly-once step asks this of the user's own SQL: an ended session is the key store's outage.
 */
export function sessionEnded(error: unknown): boolean {
	const { code, severity } = (error ?? {}) as DriverError;
	if (!isConnectionLoss(error)) return false;
	if (code === undefined || SOCKET_CODES.has(code)) return true;
	return severity === 'FATAL' || severity === 'PANIC';
}

/**
 * Runs `attempt` and, while it fails with a lost or refused connection (isConnectionLoss), runs it
 * again after a growing wait (150 ms, doubling, at most 1 s), as long as CONNECTION_RETRY_MS has not
 * passed since the first attempt began. Only for statements that may run twice with the same result:
 * the caller must know that an attempt whose answer was lost may have committed. Any other error is
 * thrown at once. The error it gives up with carries `connectionRetry` (attempts, elapsed time).
 *
 * A broken connection is never reused: pg-pool drops a client that failed a query, and the
 * transaction path releases it with the error.
 */
export async function retryOnConnectionLoss<T>(
	attempt: () => Promise<T>,
	budgetMs: number = CONNECTION_RETRY_MS,
): Promise<T> {
	const startedMs = Date.now();
	let attempts = 0;
	let waitMs = FIRST_RETRY_WAIT_MS;
	for (;;) {
		attempts += 1;
		let failure: unknown;
		try {
			return await attempt();
		} catch (error) {
			failure = error;
		}
		const lost = isConnectionLoss(failure);
		const remainingMs = startedMs + budgetMs - Date.now();
		if (lost && remainingMs > 0) {
			await sleep(Math.min(waitMs, remainingMs));
			waitMs = Math.min(waitMs * 2, RETRY_WAIT_CAP_MS);
			continue;
		}
		if (lost && failure !== null && typeof failure === 'object') {
			const report: ConnectionRetryReport = { attempts, elapsedMs: Date.now() - startedMs };
			(failure as { connectionRetry?: ConnectionRetryReport }).connectionRetry = report;
		}
		throw failure;
	}
}

/** The retry report an error was given up with, if it went through retryOnConnectionLoss. */
export function connectionRetryOf(error: unknown): ConnectionRetryReport | undefined {
	return (error as { connectionRetry?: ConnectionRetryReport } | undefined)?.connectionRetry;
}
