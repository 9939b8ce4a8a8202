// When pools are closed, and where their errors go: an unused pool is closed (not while a client is
// out), an edited credential's old pool is closed once its last execution is done, and an idle
// connection's failure is written to n8n's logger without the password. Real engine, real PostgreSQL;
// only the lifetimes are shortened (setPoolTimings), so the tests take seconds instead of minutes.
// Pools are checked when an execution asks for one (n8n Cloud forbids timers in nodes), so the tests
// run another execution where n8n would simply be running other workflows.
const { test, expect, afterAll, afterEach } = require('@jest/globals');
const { randomBytes } = require('node:crypto');
const { poolFor } = require('../../dist/nodes/shared/transport/poolCache');
const { setPoolTimings } = require('../../dist/nodes/shared/transport/poolTimings');
const { useTestDatabase, withClient } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { watchN8nLogger } = require('../support/n8nLogger');
const { sleep, waitFor } = require('../support/waitFor');
const { webhookItem } = require('../support/webhookItems');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');

const suffix = randomBytes(4).toString('hex');
// Two login roles stand for "the credential before and after the edit": pg_stat_activity tells
// their connections apart. Role B may use what role A creates.
const roleA = { user: `idem_pool_a_${suffix}`, password: `pw-a-${suffix}` };
const roleB = { user: `idem_pool_b_${suffix}`, password: `pw-b-${suffix}` };

const db = useTestDatabase(async (database) => {
	for (const role of [roleA, roleB]) {
		await database.query(`CREATE ROLE ${role.user} LOGIN PASSWORD '${role.password}'`);
		await database.query(`GRANT ALL ON SCHEMA public TO ${role.user}`);
	}
	await database.query(
		`ALTER DEFAULT PRIVILEGES FOR ROLE ${roleA.user} IN SCHEMA public GRANT ALL ON TABLES TO ${roleB.user}`,
	);
});

afterAll(async () => {
	// Roles belong to the server, not to the test database: remove them and what they were granted.
	await withClient(process.env.IDEMPOTENCY_TEST_SERVER_URL, async (admin) => {
		for (const role of [roleA, roleB]) {
			await admin.query(`DROP ROLE IF EXISTS ${role.user}`).catch(async () => {
				await db.query(`DROP OWNED BY ${role.user}`);
				await admin.query(`DROP ROLE IF EXISTS ${role.user}`);
			});
		}
	});
});

let restoreTimings;
afterEach(() => restoreTimings?.());

const reserve = async (credentials, id, credentialId = 'pool-lifetime') =>
	await runWorkflow(reserveWorkflow, [webhookItem({ body: { id } })], {
		credentials,
		nodeOverrides: {
			'Idempotency Reserve': {
				credentials: { idempotencyPostgresApi: { id: credentialId, name: 'Pool lifetime' } },
			},
		},
	});

/** The package's connections to this test database, by login role. */
async function connectedRoles() {
	const { rows } = await db.query(
		`SELECT usename::text AS role FROM pg_stat_activity
		  WHERE datname = current_database() AND application_name = 'n8n-nodes-idempotency'`,
	);
	return rows.map((row) => row.role);
}

/** pg's client knows its server process id; its type declarations leave it out. */
const processIdOf = (client) =>
	/** @type {{ processID: number }} */ (/** @type {unknown} */ (client)).processID;
const backendAlive = async (pid) =>
	(await db.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rowCount === 1;

test('a pool without a checkout for the unused time is closed at the next execution, but not while a client is out', async () => {
	restoreTimings = setPoolTimings({ unusedPoolMs: 300 });
	// A pool size no other test uses: a pool opened now, under the short timing.
	const credentials = db.credential({ ...roleA, maxConnections: 7 });
	const other = db.credential({ ...roleA, maxConnections: 8 });
	const first = await reserve(credentials, 'unused_1', 'unused-pool');
	expect(first.status).toBe('success');
	const { pool } = poolFor(credentials);

	const held = await pool.connect();
	await sleep(600);
	// Another workflow's execution looks at every pool: this one has a client out, so it stays.
	expect((await reserve(other, 'unused_other_1', 'other-pool')).status).toBe('success');
	// Not closing (pg's pool sets `ending` at end() and `ended` only once the last client is back).
	expect(pool.ending).toBe(false);
	expect(await backendAlive(processIdOf(held))).toBe(true);
	held.release();

	await sleep(600);
	expect(pool.ending).toBe(false);
	expect((await reserve(other, 'unused_other_2', 'other-pool')).status).toBe('success');
	await waitFor('the unused pool is closed', () => pool.ended);
	await waitFor(
		'its connection is gone from the server',
		async () => !(await backendAlive(processIdOf(held))),
	);
	// Its own next execution opens a new pool and works.
	const next = await reserve(credentials, 'unused_2', 'unused-pool');
	expect(next.status).toBe('success');
	expect(next.output('Idempotency Reserve', 0)).toHaveLength(1);
	expect(poolFor(credentials).pool).not.toBe(pool);
});

test('an edited credential: the next execution uses the new settings, the old pool closes by itself after its last checkout', async () => {
	// Short idle-connection timeout for the pools opened here: the old pool closes when its last
	// connection does, with no further execution needed.
	restoreTimings = setPoolTimings({ retiredPoolGraceMs: 200, idleClientMs: 300 });
	const before = db.credential({ ...roleA, maxConnections: 4 });
	const after = db.credential({ ...roleB, maxConnections: 4 });

	const first = await reserve(before, 'edit_1', 'edited-credential');
	expect(first.status).toBe('success');
	const oldPool = poolFor(before).pool;
	expect(await connectedRoles()).toContain(roleA.user);
	// An execution that started before the edit still has a statement to run on the old pool.
	const inFlight = await oldPool.connect();

	const edited = await reserve(after, 'edit_2', 'edited-credential');
	expect(edited.status).toBe('success');
	expect(edited.output('Idempotency Reserve', 0)).toHaveLength(1);
	expect(await connectedRoles()).toContain(roleB.user);
	expect(poolFor(after).pool).not.toBe(oldPool);

	await sleep(600);
	expect((await reserve(after, 'edit_3', 'edited-credential')).status).toBe('success');
	// Still open for that execution: its next checkout works (a closing pool refuses checkouts).
	expect(oldPool.ending).toBe(false);
	await oldPool.query('SELECT 1');
	inFlight.release();

	await waitFor('the old pool is closed', () => oldPool.ended);
	expect(oldPool.totalCount).toBe(0);
	await waitFor(
		'its connection is gone from the server',
		async () => !(await backendAlive(processIdOf(inFlight))),
	);
	// All reservations are in the table: the edit lost nothing.
	const { rows } = await db.query(
		`SELECT key FROM processed_events WHERE key LIKE 'evt:edit_%' ORDER BY key`,
	);
	expect(rows.map((row) => row.key)).toEqual(['evt:edit_1', 'evt:edit_2', 'evt:edit_3']);
});

test('an edit to a credential whose old settings another credential still uses keeps that pool', async () => {
	restoreTimings = setPoolTimings({ retiredPoolGraceMs: 100 });
	const shared = db.credential({ ...roleA, maxConnections: 5 });
	expect((await reserve(shared, 'shared_1', 'first-credential')).status).toBe('success');
	expect((await reserve(shared, 'shared_2', 'second-credential')).status).toBe('success');
	const sharedPool = poolFor(shared).pool;

	const edited = db.credential({ ...roleB, maxConnections: 5 });
	expect((await reserve(edited, 'shared_3', 'first-credential')).status).toBe('success');
	await sleep(500);
	expect((await reserve(edited, 'shared_4', 'first-credential')).status).toBe('success');
	expect(sharedPool.ending).toBe(false);
	expect(
		(await reserve(shared, 'shared_5', 'second-credential')).output('Idempotency Reserve', 0),
	).toHaveLength(1);
	expect(poolFor(shared).pool).toBe(sharedPool);
});

test("an idle connection's failure is written to n8n's logger, without the password", async () => {
	const credentials = db.credential({ ...roleA, maxConnections: 6 });
	const run = await reserve(credentials, 'logged_1', 'logged-credential');
	expect(run.status).toBe('success');
	const errors = watchN8nLogger('error');
	try {
		// What a DBA's pg_terminate_backend, a failover or a restart does to the pool's idle clients.
		const { rowCount } = await db.query(
			`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			  WHERE datname = current_database() AND usename = $1 AND application_name = 'n8n-nodes-idempotency'`,
			[roleA.user],
		);
		expect(rowCount).toBeGreaterThan(0);
		// Other pools of this role (earlier tests) lose their idle clients too: look for this pool's line.
		const line = new RegExp(
			`^Idempotency Postgres: an idle connection to 127\\.0\\.0\\.1:\\d+/\\w+ as ${roleA.user} failed: terminating connection`,
		);
		await waitFor('the failure is logged', () =>
			errors.messages().some(({ message }) => line.test(message)),
		);
		expect(errors.messages().find(({ message }) => line.test(message)).meta).toEqual({
			code: '57P01',
		});
		expect(JSON.stringify(errors.messages())).not.toContain(roleA.password);
	} finally {
		errors.stop();
	}
	// The pool drops the dead clients (each reports its error): then the next execution works.
	const { pool } = poolFor(credentials);
	await waitFor('the pool dropped its dead clients', () => pool.totalCount === 0);
	expect(
		(await reserve(credentials, 'logged_2', 'logged-credential')).output('Idempotency Reserve', 0),
	).toHaveLength(1);
});
