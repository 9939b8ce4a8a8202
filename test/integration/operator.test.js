// What an operator does to a running database: a key row held by someone's open transaction, a
// statement timeout, a read-only database, a privilege taken away. Each fails Reserve with a clear
// NodeApiError (what happened, what to change), nothing routed to `false`, nothing left reserved;
// once fixed, the next execution reserves. The row-lock bound must be short and must not leak.
const { describe, test, expect, beforeAll } = require('@jest/globals');
const { Client } = require('pg');
const { randomBytes } = require('node:crypto');

const { poolFor } = require('../../dist/nodes/shared/transport/poolCache');
const { LOCK_WAIT_MS } = require('../../dist/nodes/shared/store/sql');
const { useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { webhookItem } = require('../support/webhookItems');
const completeWorkflow = require('../fixtures/complete.workflow.json');
const purgeWorkflow = require('../fixtures/purge.workflow.json');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');

const db = useTestDatabase();
const lease = {
	nodeOverrides: { 'Idempotency Reserve': { parameters: { mode: 'lease', leaseSeconds: 60 } } },
};

async function reserve(ids, credentials = db.credential(), options = lease) {
	const started = Date.now();
	const items = [].concat(ids).map((id) => webhookItem({ body: { id } }));
	const run = await runWorkflow(reserveWorkflow, items, { credentials, ...options });
	return { run, ms: Date.now() - started };
}

/** A second session (as an operator's psql) that holds rows in an open transaction until `end`. */
async function openSession() {
	const { host, port, database, user, password } = db.credential();
	const client = new Client({ host, port, database, user, password: password || undefined });
	await client.connect();
	return {
		query: async (text, values) => await client.query(text, values),
		end: async () => {
			await client.query('ROLLBACK').catch(() => undefined);
			await client.end();
		},
	};
}

/**
 * Reserves `id`, lets its lease run out, and opens an operator's session holding that row in an
 * uncommitted DELETE: the next Reserve of the key must take it over and so waits for the row.
 */
async function deadReservationHeldByOperator(id, credentials) {
	await reserve(id, credentials);
	const key = `evt:${id}`;
	await db.query(
		`UPDATE processed_events SET lease_until = now() - interval '1 second' WHERE key = $1`,
		[key],
	);
	const psql = await openSession();
	try {
		await psql.query('BEGIN');
		await psql.query('DELETE FROM processed_events WHERE key = $1', [key]);
	} catch (error) {
		await psql.end();
		throw error;
	}
	return psql;
}

async function keyCount(key) {
	const { rows } = await db.query(
		'SELECT count(*)::int AS n FROM processed_events WHERE key = $1',
		[key],
	);
	return rows[0].n;
}

beforeAll(async () => {
	// The table exists (and has the lease columns) before anyone holds a row of it.
	const { run } = await reserve('op_warm');
	expect(run.status).toBe('success');
});

test(`a key row held by another open transaction: Reserve gives up after at most ${LOCK_WAIT_MS / 1000} s naming the key, other keys are not held up`, async () => {
	const psql = await deadReservationHeldByOperator('op_locked');
	try {
		const [locked, other] = await Promise.all([reserve('op_locked'), reserve('op_free')]);
		expect(locked.run.status).toBe('error');
		expect(locked.run.error.name).toBe('NodeApiError');
		expect(locked.run.error.message).toBe(
			`Key "evt:op_locked" is held by another transaction: gave up waiting for it after the lock timeout (at most ${LOCK_WAIT_MS / 1000} s), so PostgreSQL could not reserve the keys`,
		);
		expect(locked.run.error.description).toMatch(/idle in transaction/);
		expect(locked.ms).toBeGreaterThanOrEqual(LOCK_WAIT_MS - 100);
		expect(locked.ms).toBeLessThan(LOCK_WAIT_MS + 3_000);
		expect(other.run.output('Idempotency Reserve', 0)).toHaveLength(1);
		expect(other.ms).toBeLessThan(LOCK_WAIT_MS);
	} finally {
		await psql.end();
	}
	// The transaction rolled back: the row is there again, its lease over, and the retry takes it over.
	const retry = await reserve('op_locked');
	expect(retry.run.output('Idempotency Reserve', 0)[0].json.idempotency).toMatchObject({
		isNew: true,
		attempt: 2,
	});
}, 30_000);

test('the same bound for a row another transaction has locked FOR UPDATE, and for Complete Key', async () => {
	const { run } = await reserve('op_for_update');
	const [reserved] = run.output('Idempotency Reserve', 0);
	const psql = await openSession();
	try {
		await psql.query('BEGIN');
		await psql.query(`SELECT * FROM processed_events WHERE key = 'evt:op_for_update' FOR UPDATE`);
		const started = Date.now();
		const completed = await runWorkflow(
			completeWorkflow,
			[{ json: { idempotency: reserved.json.idempotency } }],
			{ credentials: db.credential() },
		);
		expect(Date.now() - started).toBeLessThan(LOCK_WAIT_MS + 3_000);
		expect(completed.status).toBe('error');
		expect(completed.error.message).toMatch(
			/^Key "evt:op_for_update" is held by another transaction: .* could not complete the key "evt:op_for_update"$/,
		);
	} finally {
		await psql.end();
	}
}, 30_000);

test('the lock bound is local to each statement: the connection it ran on keeps lock_timeout 0 afterwards', async () => {
	const credentials = db.credential({ maxConnections: 1 });
	const { run } = await reserve('op_no_leak', credentials);
	expect(run.status).toBe('success');
	const { pool } = poolFor(credentials);
	expect(pool.totalCount).toBe(1);
	const { rows } = await pool.query('SHOW lock_timeout');
	expect(rows[0].lock_timeout).toBe('0');
});

test('a shorter lock_timeout already set for the database is kept', async () => {
	await db.query(
		`ALTER DATABASE ${(await db.query('SELECT current_database() AS d')).rows[0].d} SET lock_timeout = '300ms'`,
	);
	const credentials = db.credential({ maxConnections: 3 });
	let psql;
	try {
		psql = await deadReservationHeldByOperator('op_short_lock', credentials);
		const locked = await reserve('op_short_lock', credentials);
		expect(locked.run.status).toBe('error');
		expect(locked.ms).toBeLessThan(1_500);
		expect(locked.run.error.message).toMatch(
			/^Key "evt:op_short_lock" is held by another transaction/,
		);
	} finally {
		await psql?.end();
		await db.query(
			`ALTER DATABASE ${(await db.query('SELECT current_database() AS d')).rows[0].d} RESET lock_timeout`,
		);
	}
}, 30_000);

test('purge keeps an old key whose lease still runs (an old event taken over a moment ago), and deletes old ones whose lease ended', async () => {
	await db.query(`
		INSERT INTO processed_events (key, first_seen, status, owner_token, lease_until) VALUES
		  ('evt:op_old_live', now() - interval '40 days', 'in_progress', 'live', now() + interval '30 seconds'),
		  ('evt:op_old_expired', now() - interval '40 days', 'in_progress', 'dead', now() - interval '1 second'),
		  ('evt:op_old_completed', now() - interval '40 days', 'completed', NULL, NULL),
		  ('evt:op_old_simple', now() - interval '40 days', NULL, NULL, NULL)`);
	const run = await runWorkflow(purgeWorkflow, [{ json: {} }], { credentials: db.credential() });
	expect(run.status).toBe('success');
	const { rows } = await db.query(
		`SELECT key FROM processed_events WHERE key LIKE 'evt:op_old_%' ORDER BY key`,
	);
	expect(rows.map((row) => row.key)).toEqual(['evt:op_old_live']);
});

describe('settings and privileges changed under a running pool', () => {
	let database;
	beforeAll(async () => {
		database = (await db.query('SELECT current_database() AS d')).rows[0].d;
	});
	// Ends the pool's sessions, as a restart or the pool's idle timeout would, so new ones pick up
	// the database's settings; then gives the pool a moment to notice its connections closed.
	const endSessions = async () => {
		await db.query(
			'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
		);
		await new Promise((resolve) => setTimeout(resolve, 300));
	};

	test('a statement_timeout shorter than a row wait: clear error naming the setting; after RESET the next execution reserves', async () => {
		const credentials = db.credential({ maxConnections: 2 });
		await reserve('op_stmt_timeout', credentials);
		await db.query(
			`UPDATE processed_events SET lease_until = now() - interval '1 second' WHERE key = 'evt:op_stmt_timeout'`,
		);
		await db.query(`ALTER DATABASE ${database} SET statement_timeout = '500ms'`);
		await endSessions();
		const psql = await openSession();
		let failed;
		try {
			await psql.query('BEGIN');
			await psql.query(`DELETE FROM processed_events WHERE key = 'evt:op_stmt_timeout'`);
			failed = await reserve('op_stmt_timeout', credentials);
		} finally {
			await psql.end();
			await db.query(`ALTER DATABASE ${database} RESET statement_timeout`);
		}
		expect(failed.run.status).toBe('error');
		expect(failed.run.error.name).toBe('NodeApiError');
		expect(failed.run.error.message).toMatch(
			/^PostgreSQL cancelled the statement to reserve the keys: it ran longer than the statement_timeout set for user ".*" or database ".*"$/,
		);
		expect(failed.run.error.description).toMatch(/RESET statement_timeout/);
		await endSessions();
		const retry = await reserve('op_stmt_timeout', credentials);
		expect(retry.run.output('Idempotency Reserve', 0)).toHaveLength(1);
	}, 30_000);

	test('a read-only database: clear error, nothing reserved; after RESET the next execution reserves', async () => {
		const credentials = db.credential({ maxConnections: 2 });
		await reserve('op_ro_warm', credentials);
		await db.query(`ALTER DATABASE ${database} SET default_transaction_read_only = on`);
		let failed;
		try {
			await endSessions();
			failed = await reserve('op_read_only', credentials);
		} finally {
			await db.query(`ALTER DATABASE ${database} RESET default_transaction_read_only`);
		}
		expect(failed.run.status).toBe('error');
		expect(failed.run.error.name).toBe('NodeApiError');
		expect(failed.run.error.message).toMatch(
			/^PostgreSQL at .* is read-only, so it could not reserve the keys$/,
		);
		expect(failed.run.error.description).toMatch(/RESET default_transaction_read_only/);
		expect(await keyCount('evt:op_read_only')).toBe(0);
		// No n8n restart, no session ended: the pool's read-only connection was dropped with its failure.
		const retry = await reserve('op_read_only', credentials);
		expect(retry.run.output('Idempotency Reserve', 0)).toHaveLength(1);
	}, 30_000);

	test('INSERT revoked from the database user: clear error with the GRANT; after the GRANT the next execution reserves', async () => {
		const role = `idem_op_${randomBytes(4).toString('hex')}`;
		// A password, so the role can log in where the server asks for one (the embedded server of `npm test`).
		const rolePassword = randomBytes(12).toString('hex');
		await db.query(`CREATE ROLE ${role} LOGIN PASSWORD '${rolePassword}'`);
		try {
			await db.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON processed_events TO ${role}`);
			const credentials = db.credential({ user: role, password: rolePassword });
			expect((await reserve('op_priv_warm', credentials)).run.status).toBe('success');
			await db.query(`REVOKE INSERT ON processed_events FROM ${role}`);
			const failed = await reserve('op_privilege', credentials);
			expect(failed.run.status).toBe('error');
			expect(failed.run.error.message).toBe(
				`User "${role}" lacks a privilege to reserve the keys in "public"."processed_events": permission denied for table processed_events`,
			);
			expect(failed.run.error.description).toMatch(
				new RegExp(
					`GRANT SELECT, INSERT, UPDATE, DELETE ON "public"."processed_events" TO "${role}"`,
				),
			);
			expect(await keyCount('evt:op_privilege')).toBe(0);
			await db.query(`GRANT INSERT ON processed_events TO ${role}`);
			const retry = await reserve('op_privilege', credentials);
			expect(retry.run.output('Idempotency Reserve', 0)).toHaveLength(1);
		} finally {
			const { closeAllPools } = require('../../dist/nodes/shared/transport/poolCache');
			await closeAllPools();
			await db.query(`REVOKE ALL ON processed_events FROM ${role}`);
			await db.query(`DROP ROLE ${role}`);
		}
	}, 30_000);
});
