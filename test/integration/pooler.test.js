// The nodes behind PgBouncer in transaction mode, as production PostgreSQL is often reached: each
// transaction may run on another server connection, so nothing may rely on session state (named
// prepared statements, session SETs, session advisory locks, temp tables). Real PostgreSQL, Debian's
// pgbouncer in front of it, the nodes run through n8n's WorkflowExecute. Skipped, saying so, only
// when pgbouncer is not installed (CI installs it).
const { test, expect, beforeAll, afterAll } = require('@jest/globals');
const { mkdtempSync, rmSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const {
	idempotencyPostgresConnectionTest,
} = require('../../dist/nodes/shared/credentialTests/connectionTest');
const { closeAllPools } = require('../../dist/nodes/shared/transport/poolCache');
const { createTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { webhookItem } = require('../support/webhookItems');
const completeWorkflow = require('../fixtures/complete.workflow.json');
const releaseWorkflow = require('../fixtures/release.workflow.json');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');

// Fewer server connections than the package's pool (10): clients queue in PgBouncer.
const DEFAULT_POOL_SIZE = 2;

let pgbouncerInstalled = false;
let db;
let workDir;
const bouncers = [];

beforeAll(async () => {
	const { pgbouncerBinary } = await import('../../scripts/harness/pgbouncer.mjs');
	pgbouncerInstalled = Boolean(pgbouncerBinary());
	if (!pgbouncerInstalled) {
		process.stdout.write(
			'\npooler.test.js: pgbouncer is not installed (apt-get install -y pgbouncer): skipping the PgBouncer tests\n',
		);
		return;
	}
	db = await createTestDatabase();
	workDir = mkdtempSync(path.join(os.tmpdir(), 'idem-pgbouncer-'));
}, 60_000);

afterAll(async () => {
	await closeAllPools();
	for (const started of bouncers) await started.stop();
	await db?.drop();
	if (workDir) rmSync(workDir, { recursive: true, force: true });
});

/** PgBouncer in front of the test server; the credential of db's database through it. */
async function bouncer(options = {}) {
	const { startPgBouncer } = await import('../../scripts/harness/pgbouncer.mjs');
	const server = new URL(db.url);
	const started = await startPgBouncer({
		workDir,
		name: `pgbouncer-${bouncers.length}`,
		server: { host: server.hostname, port: Number(server.port || 5432) },
		login: {
			user: decodeURIComponent(server.username) || 'postgres',
			password: decodeURIComponent(server.password),
		},
		poolMode: 'transaction',
		defaultPoolSize: DEFAULT_POOL_SIZE,
		...options,
	});
	bouncers.push(started);
	const credential = (overrides) =>
		db.credential({
			host: started.host,
			port: started.port,
			user: started.login.user,
			password: started.login.password,
			...overrides,
		});
	return { ...started, credential };
}

let shared;
async function sharedBouncer() {
	shared ??= await bouncer();
	return shared;
}

/** A jest test that runs only where pgbouncer is installed (the file says once when it is not). */
const pooled = (name, fn, timeout) =>
	test(
		name,
		async () => {
			if (!pgbouncerInstalled) return;
			await fn();
		},
		timeout,
	);

const item = (id) => webhookItem({ body: { id } });
const lease = (table) => ({
	'Idempotency Reserve': { parameters: { mode: 'lease', leaseSeconds: 60, table } },
});
const simple = (table) => ({ 'Idempotency Reserve': { parameters: { mode: 'simple', table } } });

pooled(
	'the credential test goes through PgBouncer, and its login failures read as one sentence each',
	async () => {
		const pooler = await sharedBouncer();
		const connectionTest = async (credential) =>
			await idempotencyPostgresConnectionTest.call({}, { data: credential });
		expect(await connectionTest(pooler.credential())).toEqual({
			status: 'OK',
			message: 'Connection successful',
		});
		// PgBouncer answers these itself, with SQLSTATE 08P01 and its own words.
		expect(
			(await connectionTest(pooler.credential({ password: 'wrong-password' }))).message,
		).toMatch(
			new RegExp(
				`^PostgreSQL at 127\\.0\\.0\\.1:${pooler.port} refused the password for user "${pooler.login.user}"`,
			),
		);
		expect(
			(await connectionTest(pooler.credential({ database: 'no_such_database' }))).message,
		).toMatch(/^Database "no_such_database" does not exist/);
	},
);

pooled(
	'lease mode, empty database: 32 executions at once through 2 server connections create the table once, exactly one is new',
	async () => {
		const pooler = await sharedBouncer();
		const credentials = pooler.credential({ maxConnections: 10 });
		const before = await pooler.transactions(db.name);
		const runs = await Promise.all(
			Array.from(
				{ length: 32 },
				async () =>
					await runWorkflow(reserveWorkflow, [item('evt_pooled')], {
						credentials,
						nodeOverrides: lease('pooled_lease'),
					}),
			),
		);

		// Every execution prepared the table (a pool's first statement) and reserved through PgBouncer.
		expect(runs.map((run) => run.error?.message)).toEqual(runs.map(() => undefined));
		expect(runs.filter((run) => run.output('Idempotency Reserve', 0).length === 1)).toHaveLength(1);
		const duplicates = runs.flatMap((run) => run.output('Idempotency Reserve', 1));
		expect(duplicates).toHaveLength(31);
		expect(
			duplicates.every((duplicate) => duplicate.json.idempotency.status === 'in_progress'),
		).toBe(true);
		const { rows } = await db.query(`SELECT key, status, attempts FROM pooled_lease`);
		expect(rows).toEqual([{ key: 'evt:evt_pooled', status: 'in_progress', attempts: 1 }]);
		// It really went through PgBouncer (each execution: at least its reserve statement).
		expect((await pooler.transactions(db.name)) - before).toBeGreaterThanOrEqual(32);
	},
	60_000,
);

pooled(
	'lease mode: Complete Key and Release Key through PgBouncer; the released event is new again, the completed one a duplicate',
	async () => {
		const credentials = (await sharedBouncer()).credential();
		const reserve = async (id) =>
			(
				await runWorkflow(reserveWorkflow, [item(id)], {
					credentials,
					nodeOverrides: lease('pooled_lease'),
				})
			).output('Idempotency Reserve', 0)[0];

		const done = await reserve('evt_complete');
		const completed = await runWorkflow(completeWorkflow, [done], {
			credentials,
			nodeOverrides: { 'Complete Key': { parameters: { table: 'pooled_lease' } } },
		});
		expect(completed.error).toBeUndefined();
		const failed = await reserve('evt_release');
		const released = await runWorkflow(releaseWorkflow, [failed], {
			credentials,
			nodeOverrides: { 'Release Key': { parameters: { table: 'pooled_lease' } } },
		});
		expect(released.error).toBeUndefined();
		expect(released.output('Release Key', 0)[0].json.idempotency).toEqual({
			key: 'evt:evt_release',
			released: true,
		});

		const { rows } = await db.query(
			`SELECT key, status FROM pooled_lease WHERE key IN ('evt:evt_complete', 'evt:evt_release')`,
		);
		expect(rows).toEqual([{ key: 'evt:evt_complete', status: 'completed' }]);
		// The retry of the released event is new again; the completed one is a completed duplicate.
		expect(await reserve('evt_release')).toBeDefined();
		const repeat = await runWorkflow(reserveWorkflow, [item('evt_complete')], {
			credentials,
			nodeOverrides: lease('pooled_lease'),
		});
		expect(repeat.output('Idempotency Reserve', 1)[0].json.idempotency).toMatchObject({
			isNew: false,
			status: 'completed',
		});
	},
);

pooled(
	'lease mode: a key whose lease ended is taken over through PgBouncer (attempt 2), and the old token cannot complete it',
	async () => {
		const credentials = (await sharedBouncer()).credential();
		const reserve = async () =>
			(
				await runWorkflow(reserveWorkflow, [item('evt_takeover')], {
					credentials,
					nodeOverrides: lease('pooled_lease'),
				})
			).output('Idempotency Reserve', 0)[0];
		const dead = await reserve();
		// What an execution that died leaves once its lease has run out.
		await db.query(
			`UPDATE pooled_lease SET lease_until = now() - interval '1 second' WHERE key = 'evt:evt_takeover'`,
		);
		const takeover = await reserve();
		expect(takeover.json.idempotency).toMatchObject({ isNew: true, attempt: 2 });
		expect(takeover.json.idempotency.token).not.toBe(dead.json.idempotency.token);

		const late = await runWorkflow(completeWorkflow, [dead], {
			credentials,
			nodeOverrides: { 'Complete Key': { parameters: { table: 'pooled_lease' } } },
		});
		expect(late.error.message).toMatch(
			/The key "evt:evt_takeover" was taken over by another execution/,
		);
		const { rows } = await db.query(
			`SELECT status, owner_token, attempts FROM pooled_lease WHERE key = 'evt:evt_takeover'`,
		);
		expect(rows).toEqual([
			{ status: 'in_progress', owner_token: takeover.json.idempotency.token, attempts: 2 },
		]);
	},
);

pooled(
	'simple mode, empty database: 32 executions at once through PgBouncer create the two-column table once, exactly one is new',
	async () => {
		const credentials = (await sharedBouncer()).credential();
		const runs = await Promise.all(
			Array.from(
				{ length: 32 },
				async () =>
					await runWorkflow(reserveWorkflow, [item('evt_pooled_simple')], {
						credentials,
						nodeOverrides: simple('pooled_simple'),
					}),
			),
		);
		expect(runs.map((run) => run.error?.message)).toEqual(runs.map(() => undefined));
		expect(runs.filter((run) => run.output('Idempotency Reserve', 0).length === 1)).toHaveLength(1);
		expect(runs.filter((run) => run.output('Idempotency Reserve', 1).length === 1)).toHaveLength(
			31,
		);
		const { rows } = await db.query(
			`SELECT count(*)::int AS columns FROM information_schema.columns WHERE table_name = 'pooled_simple'`,
		);
		expect(rows[0].columns).toBe(2);
		expect((await db.query(`SELECT key FROM pooled_simple`)).rows).toEqual([
			{ key: 'evt:evt_pooled_simple' },
		]);
	},
	60_000,
);

pooled(
	'max_client_conn below Max Pool Size: executions PgBouncer turns away fail with a sentence saying so, reserve nothing, and none hangs',
	async () => {
		// 3 clients at most (the harness's own admin check counts while it runs); the pool would open 10.
		const pooler = await bouncer({ name: 'pgbouncer-small', maxClientConn: 3 });
		const credentials = pooler.credential({ maxConnections: 10 });
		const ids = Array.from({ length: 12 }, (_, i) => `evt_crowded_${i}`);
		const started = Date.now();
		const runs = await Promise.all(
			ids.map(
				async (id) =>
					await runWorkflow(reserveWorkflow, [item(id)], {
						credentials,
						nodeOverrides: lease('pooled_crowded'),
					}),
			),
		);
		expect(Date.now() - started).toBeLessThan(30_000);

		const failed = runs.filter((run) => run.status === 'error');
		expect(failed.length).toBeGreaterThan(0);
		expect(failed.length).toBeLessThan(runs.length);
		for (const run of failed) {
			expect(run.error.name).toBe('NodeApiError');
			expect(run.error.message).toMatch(
				/pooler at 127\.0\.0\.1:\d+ refused a new connection: it already serves its max_client_conn clients/,
			);
		}
		// A turned-away execution reserved nothing (its retry will be new); the others are new once.
		const { rows } = await db.query(`SELECT key FROM pooled_crowded ORDER BY key`);
		const succeeded = ids.filter((_, i) => runs[i].status === 'success');
		expect(rows.map((row) => row.key)).toEqual(succeeded.map((id) => `evt:${id}`).sort());
		for (const i of succeeded.map((id) => ids.indexOf(id)))
			expect(runs[i].output('Idempotency Reserve', 0)).toHaveLength(1);
	},
	60_000,
);

pooled(
	'PostgreSQL behind PgBouncer unreachable: the node fails after the connect timeout with a sentence that points at the pooler',
	async () => {
		const { freePort } = require('../support/postgres');
		const pooler = await bouncer({
			name: 'pgbouncer-no-server',
			server: { host: '127.0.0.1', port: await freePort() },
		});
		const started = Date.now();
		const run = await runWorkflow(reserveWorkflow, [item('evt_no_server')], {
			credentials: pooler.credential(),
			nodeOverrides: lease('pooled_lease'),
		});
		// PgBouncer holds the login open while it cannot reach its server: the driver's 10 s connect timeout ends it.
		expect(Date.now() - started).toBeLessThan(25_000);
		expect(run.status).toBe('error');
		expect(run.error.name).toBe('NodeApiError');
		expect(run.error.message).toMatch(
			new RegExp(`^Could not reach PostgreSQL at 127\\.0\\.0\\.1:${pooler.port} in time`),
		);
		expect(run.error.description).toMatch(
			/Behind a pooler such as PgBouncer, check that the pooler reaches PostgreSQL/,
		);
	},
	60_000,
);
