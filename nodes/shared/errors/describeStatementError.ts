import { LOCK_WAIT_MS } from '../transport/lockWait';

/** What a failed statement tells the operator, in one sentence, and what to change. */
export interface StatementProblem {
	message: string;
	hint: string;
}

interface StatementError {
	code?: string;
	message?: string;
	/** Set by KeyStore on a lock timeout: the keys another transaction held, where it could tell. */
	lockedKeys?: string[];
}

interface Context {
	host: string;
	port: number;
	database: string;
	user: string;
	/** The key table, quoted (`"public"."processed_events"`). */
	table: string;
	/** Completes "could not …": `reserve the keys`. */
	action: string;
}

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

function listKeys(keys: readonly string[]): string {
	const shown = keys.slice(0, 3).map((key) => JSON.stringify(key));
	return keys.length > 3 ? `${shown.join(', ')} and ${keys.length - 3} more` : shown.join(', ');
}

/**
 * `the key "evt:1"`, `the keys "a", "b", "c" and 2 more` (each once, sorted), or `the keys` for none:
 * completes "could not complete …" so that an Error Workflow can read the key from the message
 * (workflows/idempotency-errors.json matches `key "…"`).
 */
export function namedKeys(keys: readonly string[]): string {
	const distinct = [...new Set(keys)].sort();
	if (distinct.length === 0) return 'the keys';
	return `the ${distinct.length === 1 ? 'key' : 'keys'} ${listKeys(distinct)}`;
}

/**
 * Maps what an operator can do to a running database (make it read-only, set a timeout, hold a
 * row, take a privilege away) to one sentence and the change that fixes it. Undefined for any other
 * error, which is then reported with PostgreSQL's own message.
 */
export function describeStatementError(
	error: unknown,
	context: Context,
): StatementProblem | undefined {
	const { code, message = '', lockedKeys } = (error ?? {}) as StatementError;
	const where = `${context.host}:${context.port}`;
	const user = quoted(context.user);
	const database = quoted(context.database);
	const retried = 'Nothing was changed; the sender gets an error and retries.';
	if (code === '25006') {
		return {
			message: `PostgreSQL at ${where} is read-only, so it could not ${context.action}`,
			hint: `The server is a standby (after a failover?) or default_transaction_read_only is on for database ${database} or user ${user}. Point the credential at the primary, or turn it off: ALTER DATABASE ${database} RESET default_transaction_read_only; ALTER ROLE ${user} RESET default_transaction_read_only; ${retried}`,
		};
	}
	if (code === '57014' && /statement timeout/i.test(message)) {
		return {
			message: `PostgreSQL cancelled the statement to ${context.action}: it ran longer than the statement_timeout set for user ${user} or database ${database}`,
			hint: `These statements take milliseconds, but may wait up to ${LOCK_WAIT_MS / 1000} s for a key another transaction holds: keep statement_timeout above that, or remove it (ALTER ROLE ${user} RESET statement_timeout; ALTER DATABASE ${database} RESET statement_timeout;). ${retried}`,
		};
	}
	if (code === '57014') {
		return {
			message: `PostgreSQL cancelled the statement to ${context.action} (${message})`,
			hint: `Someone cancelled it (pg_cancel_backend) or the server is shutting down. ${retried}`,
		};
	}
	if (code === '55P03') {
		const who =
			lockedKeys && lockedKeys.length > 0
				? `${lockedKeys.length === 1 ? 'Key' : 'Keys'} ${listKeys(lockedKeys)} ${lockedKeys.length === 1 ? 'is' : 'are'} held by another transaction`
				: `A row or table of ${context.table} is held by another transaction`;
		return {
			message: `${who}: gave up waiting for it after the lock timeout (at most ${LOCK_WAIT_MS / 1000} s), so PostgreSQL could not ${context.action}`,
			hint: `Another session keeps it locked in an open transaction (a manual BEGIN; DELETE … not committed, a long job). Find it: SELECT pid, state, xact_start, query FROM pg_stat_activity WHERE state LIKE 'idle in transaction%'; then COMMIT or ROLLBACK it, or SELECT pg_terminate_backend(pid);. Other keys are not held up. ${retried}`,
		};
	}
	if (code === '42501' && /for schema/i.test(message)) {
		const schema = context.table.slice(0, context.table.indexOf('"."') + 1);
		return {
			message: `User ${user} lacks a privilege on schema ${schema} to ${context.action}: ${message}`,
			hint: `As the schema's owner: GRANT USAGE, CREATE ON SCHEMA ${schema} TO ${user}; or create ${context.table} as its owner and GRANT SELECT, INSERT, UPDATE, DELETE ON ${context.table} TO ${user};. ${retried}`,
		};
	}
	if (code === '42501') {
		return {
			message: `User ${user} lacks a privilege to ${context.action} in ${context.table}: ${message}`,
			hint: `Grant what the nodes need, as the table's owner: GRANT SELECT, INSERT, UPDATE, DELETE ON ${context.table} TO ${user}; (and USAGE on its schema). ${retried}`,
		};
	}
	return undefined;
}
