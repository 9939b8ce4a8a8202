// "Create table if missing" on an empty database, tables made by hand, and names that must never reach SQL.
const { describe, test, expect, afterAll } = require('@jest/globals');
const { closeAllPools, poolFor } = require('../../dist/nodes/shared/transport/poolCache');
const { createTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { webhookItem } = require('../support/webhookItems');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');

const databases = [];

async function freshDatabase() {
	const db = await createTestDatabase();
	databases.push(db);
	return db;
}

afterAll(async () => {
	await closeAllPools();
	for (const db of databases) await db.drop();
});

const withTable = (parameters) => ({ nodeOverrides: { 'Idempotency Reserve': { parameters } } });

test('8 executions at once on an empty database create the table and index without error', async () => {
	const db = await freshDatabase();
	// Eight credentials with different pool sizes: eight pools, so each one tries to create the table.
	const runs = await Promise.all(
		Array.from(
			{ length: 8 },
			async (_, i) =>
				await runWorkflow(reserveWorkflow, [webhookItem({ body: { id: `evt_create_${i}` } })], {
					credentials: db.credential({ maxConnections: i + 2 }),
				}),
		),
	);
	expect(runs.map((run) => run.status)).toEqual(Array(8).fill('success'));
	expect(runs.every((run) => run.output('Idempotency Reserve', 0).length === 1)).toBe(true);
	const { rows } = await db.query(
		`SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = 'processed_events' ORDER BY indexname`,
	);
	expect(rows.map((row) => row.indexdef).join('\n')).toMatch(/\(first_seen\)/);
	const count = await db.query('SELECT count(*)::int AS n FROM processed_events');
	expect(count.rows[0].n).toBe(8);
});

test('simple mode: a table created by hand with only key and first_seen works', async () => {
	const db = await freshDatabase();
	await db.query(
		`CREATE TABLE processed_events (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())`,
	);
	await db.query(
		`INSERT INTO processed_events (key, first_seen) VALUES ('evt:handmade_old', '2026-01-02T03:04:05.678Z')`,
	);
	const credentials = db.credential();
	const run = await runWorkflow(
		reserveWorkflow,
		[webhookItem({ body: { id: 'handmade_old' } }), webhookItem({ body: { id: 'handmade_new' } })],
		{ credentials, ...withTable({ createTable: false, mode: 'simple' }) },
	);
	expect(run.output('Idempotency Reserve', 0).map((item) => item.json.idempotency.key)).toEqual([
		'evt:handmade_new',
	]);
	const [duplicate] = run.output('Idempotency Reserve', 1);
	expect(duplicate.json.idempotency.key).toBe('evt:handmade_old');
	expect(duplicate.json.idempotency.firstSeenAt).toBe('2026-01-02T03:04:05.678Z');
});

/**
 * Runs `work` as a fresh login role of a fresh database where only that role's grants apply (CREATE on
 * public revoked), then drops the role (roles are cluster-wide).
 */
async function asLimitedRole(db, label, grants, work) {
	const role = `idem_${label}_${db.name.slice(-8)}`;
	await db.query(`CREATE ROLE ${role} LOGIN PASSWORD 'limited'`);
	try {
		await db.query(`REVOKE CREATE ON SCHEMA public FROM PUBLIC`);
		await db.query(`GRANT USAGE ON SCHEMA public TO ${role}`);
		for (const grant of grants) await db.query(`${grant} TO ${role}`);
		await work(db.credential({ user: role, password: 'limited' }));
	} finally {
		await closeAllPools();
		await db.query(`DROP OWNED BY ${role}`);
		await db.query(`DROP ROLE ${role}`);
	}
}

test('simple mode: a user with only SELECT, INSERT, DELETE on a hand-made table without index works with Create Table on', async () => {
	const db = await freshDatabase();
	await db.query(
		`CREATE TABLE processed_events (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())`,
	);
	await asLimitedRole(
		db,
		'limited',
		['GRANT SELECT, INSERT, DELETE ON processed_events'],
		async (credentials) => {
			const simple = { credentials, ...withTable({ mode: 'simple' }) };
			const first = await runWorkflow(
				reserveWorkflow,
				[webhookItem({ body: { id: 'evt_limited' } })],
				simple,
			);
			expect(first.error).toBeUndefined();
			expect(first.output('Idempotency Reserve', 0)).toHaveLength(1);
			const again = await runWorkflow(
				reserveWorkflow,
				[webhookItem({ body: { id: 'evt_limited' } })],
				simple,
			);
			expect(again.output('Idempotency Reserve', 1)).toHaveLength(1);
			const { rows } = await db.query(
				`SELECT count(*)::int AS n FROM pg_indexes WHERE tablename = 'processed_events'`,
			);
			expect(rows[0].n).toBe(1); // only the primary key: the index could not be added, and that is fine
		},
	);
});

test('a user who may not create the missing table gets a clear error, never a route', async () => {
	const db = await freshDatabase();
	await asLimitedRole(db, 'nocreate', [], async (credentials) => {
		const run = await runWorkflow(
			reserveWorkflow,
			[webhookItem({ body: { id: 'evt_nocreate' } })],
			{ credentials },
		);
		expect(run.status).toBe('error');
		expect(run.error.name).toBe('NodeApiError');
		expect(run.error.message).toMatch(/permission denied for schema public/);
		const { rows } = await db.query(`SELECT to_regclass('public.processed_events') AS table`);
		expect(rows[0].table).toBeNull();
	});
});

test('a custom schema and table are created and used', async () => {
	const db = await freshDatabase();
	await db.query('CREATE SCHEMA webhooks');
	const run = await runWorkflow(reserveWorkflow, [webhookItem({ body: { id: 'evt_schema' } })], {
		credentials: db.credential(),
		...withTable({ schema: 'webhooks', table: 'Stripe_Events_2026' }),
	});
	expect(run.status).toBe('success');
	const { rows } = await db.query(`SELECT key FROM webhooks."Stripe_Events_2026"`);
	expect(rows).toEqual([{ key: 'evt:evt_schema' }]);
});

describe.each([
	['a quote', 'processed_events"; DROP TABLE processed_events; --', 'table'],
	['a semicolon', 'events;drop', 'table'],
	['a comment', 'events--', 'table'],
	['a dot', 'public.events', 'table'],
	['a space', 'processed events', 'table'],
	['64 bytes', 'x'.repeat(64), 'table'],
	['a hostile schema', 'public"; DROP SCHEMA public CASCADE; --', 'schema'],
])('a %s in the %s name', (_label, name, what) => {
	test('is refused with a clear error before any SQL runs', async () => {
		const db = await freshDatabase();
		const credentials = db.credential({ maxConnections: 3 });
		const { pool } = poolFor(credentials);
		let statements = 0;
		const count = () => (statements += 1);
		pool.on('acquire', count);
		const run = await runWorkflow(reserveWorkflow, [webhookItem({ body: { id: 'evt_hostile' } })], {
			credentials,
			...withTable({ [what]: name }),
		});
		pool.off('acquire', count);
		expect(run.status).toBe('error');
		expect(run.error.name).toBe('NodeOperationError');
		expect(run.error.message).toMatch(what === 'schema' ? /schema name/ : /table name/);
		expect(statements).toBe(0);
		const { rows } = await db.query(
			`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`,
		);
		expect(rows[0].n).toBe(0);
	});
});

test('lease mode adds its columns to a two-column table in place; old rows count as completed', async () => {
	const db = await freshDatabase();
	await db.query(
		`CREATE TABLE processed_events (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())`,
	);
	await db.query(`INSERT INTO processed_events (key) VALUES ('evt:before_upgrade')`);
	const items = [
		webhookItem({ body: { id: 'before_upgrade' } }),
		webhookItem({ body: { id: 'after_upgrade' } }),
	];
	const run = await runWorkflow(reserveWorkflow, items, {
		credentials: db.credential(),
		...withTable({ mode: 'lease' }),
	});
	expect(run.error).toBeUndefined();
	expect(run.output('Idempotency Reserve', 0).map((item) => item.json.idempotency.key)).toEqual([
		'evt:after_upgrade',
	]);
	expect(run.output('Idempotency Reserve', 1)[0].json.idempotency.status).toBe('completed');
	const { rows } = await db.query(
		`SELECT column_name FROM information_schema.columns WHERE table_name = 'processed_events' ORDER BY ordinal_position`,
	);
	expect(rows.map((row) => row.column_name)).toEqual([
		'key',
		'first_seen',
		'status',
		'owner_token',
		'lease_until',
		'completed_at',
		'attempts',
		'fingerprint',
	]);
});

test('lease mode without the right to add its columns: the exact ALTER TABLE to run, nothing routed; then it works', async () => {
	const db = await freshDatabase();
	await db.query(
		`CREATE TABLE processed_events (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())`,
	);
	await db.query(`CREATE INDEX ON processed_events (first_seen)`);
	const grants = ['GRANT SELECT, INSERT, UPDATE, DELETE ON processed_events'];
	await asLimitedRole(db, 'noalter', grants, async (credentials) => {
		const item = () => [webhookItem({ body: { id: 'evt_noalter' } })];
		const refused = await runWorkflow(reserveWorkflow, item(), {
			credentials,
			...withTable({ mode: 'lease' }),
		});
		expect(refused.status).toBe('error');
		expect(refused.error.name).toBe('NodeApiError');
		expect(refused.error.message).toMatch(
			/lacks the lease and fingerprint columns, and this database user may not add them/,
		);
		expect(refused.error.description).toContain(
			'ALTER TABLE "public"."processed_events"\n  ADD COLUMN IF NOT EXISTS status text,',
		);
		expect(refused.error.description).toContain('  ADD COLUMN IF NOT EXISTS fingerprint text;');
		expect(refused.error.description).toMatch(/Or set Mode to Simple.*Or set Fingerprint to None/s);
		const stored = await db.query(`SELECT key FROM processed_events`);
		expect(stored.rows).toHaveLength(0);

		const simple = await runWorkflow(reserveWorkflow, item(), {
			credentials,
			...withTable({ mode: 'simple' }),
		});
		expect(simple.output('Idempotency Reserve', 0)).toHaveLength(1);

		// The owner runs the statement the error gave; the next execution works in lease mode.
		await db.query(refused.error.description.split('\n').slice(1, 8).join('\n'));
		const leased = await runWorkflow(
			reserveWorkflow,
			[webhookItem({ body: { id: 'evt_after_alter' } })],
			{
				credentials,
				...withTable({ mode: 'lease' }),
			},
		);
		expect(leased.error).toBeUndefined();
		expect(leased.output('Idempotency Reserve', 0)[0].json.idempotency).toMatchObject({
			isNew: true,
			attempt: 1,
		});
	});
});

test('the key table dropped or recreated without its lease columns while n8n runs: the next execution prepares it again', async () => {
	const db = await freshDatabase();
	const credentials = db.credential();
	const reserve = async (id) =>
		await runWorkflow(reserveWorkflow, [webhookItem({ body: { id } })], {
			credentials,
			...withTable({ mode: 'lease' }),
		});
	expect((await reserve('evt_before_drop')).output('Idempotency Reserve', 0)).toHaveLength(1);

	// A DBA's cleanup: the pool still marks the table as prepared.
	await db.query('DROP TABLE processed_events');
	const afterDrop = await reserve('evt_after_drop');
	expect(afterDrop.error).toBeUndefined();
	expect(afterDrop.output('Idempotency Reserve', 0)[0].json.idempotency).toMatchObject({
		key: 'evt:evt_after_drop',
		isNew: true,
	});

	// A restore of an old two-column copy: the lease and fingerprint columns are added again in the same execution.
	await db.query('DROP TABLE processed_events');
	await db.query(
		`CREATE TABLE processed_events (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())`,
	);
	await db.query(`INSERT INTO processed_events (key) VALUES ('evt:evt_restored')`);
	const afterRestore = await reserve('evt_restored');
	expect(afterRestore.error).toBeUndefined();
	expect(afterRestore.output('Idempotency Reserve', 1)[0].json.idempotency).toMatchObject({
		isNew: false,
		status: 'completed',
	});
	const { rows } = await db.query(
		`SELECT count(*)::int AS n FROM information_schema.columns WHERE table_name = 'processed_events'`,
	);
	expect(rows[0].n).toBe(8);
});

test('with Create Table If Missing off, a dropped table is a clear error, never a route', async () => {
	const db = await freshDatabase();
	const credentials = db.credential();
	const options = { credentials, ...withTable({ mode: 'simple', createTable: false }) };
	await db.query(
		`CREATE TABLE processed_events (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())`,
	);
	expect(
		(await runWorkflow(reserveWorkflow, [webhookItem({ body: { id: 'evt_x' } })], options)).error,
	).toBeUndefined();
	await db.query('DROP TABLE processed_events');
	const run = await runWorkflow(reserveWorkflow, [webhookItem({ body: { id: 'evt_y' } })], options);
	expect(run.status).toBe('error');
	expect(run.error.name).toBe('NodeApiError');
	expect(run.error.message).toMatch(/relation "public.processed_events" does not exist/);
});
