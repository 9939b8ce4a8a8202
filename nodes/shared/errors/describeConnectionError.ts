import { CONNECT_TIMEOUT_MS, maxConnections } from '../transport/connectionOptions';

/** What a driver error tells the user, in one sentence, and what to do about it. */
export interface ConnectionProblem {
	message: string;
	hint: string;
}

interface DriverError {
	code?: string;
	message?: string;
}

interface Target {
	host: string;
	port: number;
	database: string;
	user: string;
	maxConnections?: number;
}

/**
 * PgBouncer's 08P01 messages when its server is gone: a login that keeps failing (it then refuses
 * clients for server_login_retry), a server connection that broke under a client, a database
 * dropped by KILL or RELOAD, a client that waited query_wait_timeout for a server.
 */
const POOLER_LOST_SERVER =
	/server login has been failing|server conn crashed|pgbouncer cannot connect to server|database removed|query_wait_timeout|server_login_retry/i;

/**
 * Maps the usual connection failures to one clear sentence each. Returns undefined for errors that
 * are not about reaching or logging in to the server (those are reported with the server's own message).
 */
export function describeConnectionError(
	error: unknown,
	target: Target,
): ConnectionProblem | undefined {
	const { code, message = '' } = (error ?? {}) as DriverError;
	const where = `${target.host}:${target.port}`;
	// A pooler (PgBouncer) reports its own login failures with the generic protocol-violation code
	// 08P01 and its own words: recognised by the words.
	const poolerSays = code === '08P01' ? message : '';
	if (
		code === '28P01' ||
		(code === '28000' && !/pg_hba/.test(message)) ||
		/^(SASL|password) authentication failed/.test(poolerSays)
	) {
		return {
			message: `PostgreSQL at ${where} refused the password for user "${target.user}"`,
			hint: 'Check the user and password in the Idempotency Postgres credential.',
		};
	}
	if (code === '28000') {
		return {
			message: `PostgreSQL at ${where} does not accept this connection (pg_hba.conf)`,
			hint: /no encryption/.test(message)
				? 'The server requires TLS: set SSL to Require or Verify Full.'
				: 'Ask the database administrator to allow this host, user and database in pg_hba.conf.',
		};
	}
	if (code === '3D000' || /^database ".*" does not exist$/.test(poolerSays)) {
		return {
			message: `Database "${target.database}" does not exist on ${where}`,
			hint: 'Check the database name in the credential, or create the database.',
		};
	}
	if (/max_client_conn/.test(poolerSays)) {
		return {
			message: `The connection pooler at ${where} refused a new connection: it already serves its max_client_conn clients`,
			hint: `Set Max Pool Size in the credential (now ${maxConnections(target)}) to at most the pooler's max_client_conn divided by the number of n8n processes using it, or raise max_client_conn. This delivery was not reserved: the sender gets an error and retries.`,
		};
	}
	// PgBouncer's words while it cannot log in to (or lost) its PostgreSQL: the server behind it is
	// down, restarting, or being replaced by a standby; the pooler itself answers.
	if (POOLER_LOST_SERVER.test(poolerSays)) {
		return {
			message: `The key store behind the pooler at ${where} is unreachable or failing over (the pooler says: ${message})`,
			hint: 'The pooler (PgBouncer) cannot reach its PostgreSQL: the server is down, restarting, or a standby is being promoted. It recovers by itself once the pooler reaches a primary; PgBouncer retries its server every server_login_retry (15 s by default: 1 s shortens the outage). If it lasts, check PostgreSQL and where the pooler points.',
		};
	}
	if (code === 'ECONNREFUSED') {
		return {
			message: `Nothing is listening at ${where} (connection refused)`,
			hint: 'Check host and port, and that PostgreSQL is running and listens on that address.',
		};
	}
	if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
		return {
			message: `Host "${target.host}" could not be resolved`,
			hint: 'Check the host name in the credential.',
		};
	}
	// pg-pool's own words when no client became free within connectionTimeoutMillis.
	if (/timeout exceeded when trying to connect/i.test(message)) {
		return {
			message: `All ${maxConnections(target)} pooled connections to ${where} stayed busy for ${CONNECT_TIMEOUT_MS / 1000} s`,
			hint: 'Raise Max Pool Size in the Idempotency Postgres credential, or run fewer executions at once. This delivery was not reserved: the sender gets an error and retries.',
		};
	}
	if (
		code === 'ETIMEDOUT' ||
		code === 'EHOSTUNREACH' ||
		code === 'ENETUNREACH' ||
		/timeout/i.test(message)
	) {
		return {
			message: `Could not reach PostgreSQL at ${where} in time`,
			// A pooler whose PostgreSQL is down keeps the login waiting: it ends here, not in "refused".
			hint: 'Check that the host is reachable from n8n (firewall, network) and that the pool is not exhausted. Behind a pooler such as PgBouncer, check that the pooler reaches PostgreSQL.',
		};
	}
	if (/does not support SSL/i.test(message)) {
		return {
			message: `PostgreSQL at ${where} does not accept TLS connections`,
			hint: 'Set SSL to Disable, or enable ssl on the server.',
		};
	}
	if (
		/certificate|self[- ]signed/i.test(message) ||
		(code !== undefined && /^(CERT_|ERR_TLS_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED)/.test(code))
	) {
		return {
			message: `The TLS certificate of PostgreSQL at ${where} could not be verified: ${message}`,
			hint: "Paste the server's CA certificate into the credential, or (SSL: Require only) turn on Ignore Certificate Errors.",
		};
	}
	if (
		code === 'ECONNRESET' ||
		code === '57P01' ||
		code === '57P03' ||
		/Connection terminated/i.test(message)
	) {
		return {
			message: `The connection to PostgreSQL at ${where} was lost`,
			hint: 'PostgreSQL may be restarting or was stopped. Answer the sender with an error so it retries once the database is back.',
		};
	}
	return undefined;
}
