// The key store goes away for a few seconds while Complete Key, Release Key or the exactly-once step
// runs: a failover (primary lost, standby promoted, the endpoint or pooler re-pointed). These
// statements are safe to repeat under the owner's token, so a lost or refused connection is retried
// for CONNECTION_RETRY_MS; past that the node fails naming its keys, and the key is left as it was.
// Real PostgreSQL, the nodes through n8n's WorkflowExecute; the way to the server is cut with a TCP
// proxy (refused and dropped connections) or, behind a real PgBouncer, at the server itself.
const { describe, test, expect, beforeAll, afterAll } = require('@jest/globals');
const { appendFileSync, mkdtempSync, rmSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { CONNECTION_RETRY_MS } = require('../../dist/nodes/shared/transport/connectionRetry');
const { useTestDatabase, withClient } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { startTcpProxy } = require('../support/tcpProxy');
const { sleep, waitFor } = require('../support/waitFor');
const { webhookItem } = require('../support/webhookItems');
const completeWorkflow = require('../fixtures/complete.workflow.json');
const exactlyOnceWorkflow = require('../fixtures/exactly-once.workflow.json');
const releaseWorkflow = require('../fixtures/release.workflow.json');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');
const alertTemplate = require('../../workflows/idempotency-errors.json');

const STEP = 'Business Step (exactly once)';
const TABLE = 'processed_events';

const db = useTestDatabase(async (database) => {
	await database.query(`CREATE TABLE business_log (
		id bigserial PRIMARY KEY,
		event_key text NOT NULL,
		event_type text,
		created_at timestamptz NOT NULL DEFAULT now()
	)`);
});

let proxy;
beforeAll(async () => {
	const server = new URL(process.env.IDEMPOTENCY_TEST_SERVER_URL);
	proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
});
afterAll(async () => {
	await proxy?.stop();
});

/** The credential through the proxy (`maxConnections` small: the pool's clients are reused). */
const viaProxy = () => db.credential({ host: proxy.host, port: proxy.port, maxConnections: 4 });

async function reserve(id) {
	const run = await runWorkflow(reserveWorkflow, [webhookItem({ body: { id } })], {
		credentials: db.credential(),
		nodeOverrides: {
			'Idempotency Reserve': { parameters: { mode: 'lease', leaseSeconds: 60, table: TABLE } },
		},
	});
	expect(run.error).toBeUndefined();
	return run.output('Idempotency Reserve', 0)[0];
}

async function keyRow(key) {
	const { rows } = await db.query(
		`SELECT status, owner_token, attempts FROM ${TABLE} WHERE key = $1`,
		[key],
	);
	return rows[0];
}

/** Runs `workflow` on `item` through `credentials`; resolves to the run and its wall time. */
async function timed(workflow, item, credentials, nodeOverrides = {}) {
	const started = Date.now();
	const run = await runWorkflow(workflow, [item], { credentials, nodeOverrides });
	return { run, ms: Date.now() - started };
}

/** The key the alert template (workflows/idempotency-errors.json) reads from an error message. */
function alertKey(message) {
	const assignment = alertTemplate.nodes
		.find((node) => node.type === 'n8n-nodes-base.set')
		.parameters.assignments.assignments.find((entry) => entry.name === 'key');
	const [, source, flags] = /\.match\(\/(.+)\/([a-z]*)\)/.exec(assignment.value);
	return (message.match(new RegExp(source, flags)) ?? [])[1] ?? '';
}

/** Warms the proxy pool so the outage meets pooled connections, not only new ones. */
async function warmPool() {
	const warm = await reserve(`warm_${Date.now()}`);
	const run = await runWorkflow(releaseWorkflow, [warm], { credentials: viaProxy() });
	expect(run.error).toBeUndefined();
}

describe('an outage shorter than the retry bound', () => {
	test('Complete Key: the way to the key store is cut for 1.5 s while it runs; it completes the key once', async () => {
		const reserved = await reserve('outage_complete');
		await warmPool();
		await proxy.cut();
		const restored = sleep(1_500).then(async () => await proxy.restore());
		const { run, ms } = await timed(completeWorkflow, reserved, viaProxy());
		await restored;
		process.stdout.write(`\nComplete Key across a 1.5 s outage: answered after ${ms} ms\n`);

		expect(run.error).toBeUndefined();
		expect(run.output('Complete Key', 0)[0].json.idempotency).toEqual({
			key: 'evt:outage_complete',
			completed: true,
		});
		expect(ms).toBeGreaterThanOrEqual(1_400);
		expect(ms).toBeLessThan(CONNECTION_RETRY_MS);
		expect(await keyRow('evt:outage_complete')).toEqual({
			status: 'completed',
			owner_token: reserved.json.idempotency.token,
			attempts: 1,
		});
	});

	test('Release Key: the same outage; it releases the key, and the retry of the event is new again', async () => {
		const reserved = await reserve('outage_release');
		await warmPool();
		await proxy.cut();
		const restored = sleep(1_500).then(async () => await proxy.restore());
		const { run, ms } = await timed(releaseWorkflow, reserved, viaProxy());
		await restored;
		process.stdout.write(`\nRelease Key across a 1.5 s outage: answered after ${ms} ms\n`);

		expect(run.error).toBeUndefined();
		expect(run.output('Release Key', 0)[0].json.idempotency).toEqual({
			key: 'evt:outage_release',
			released: true,
		});
		expect(ms).toBeLessThan(CONNECTION_RETRY_MS);
		expect(await keyRow('evt:outage_release')).toBeUndefined();
		expect((await reserve('outage_release')).json.idempotency.isNew).toBe(true);
	});
});

describe('an outage longer than the retry bound', () => {
	test('Complete Key fails within the bound, names the key, says what was left and what to do; the key keeps its owner', async () => {
		const reserved = await reserve('outage_long_complete');
		await proxy.cut();
		let timing;
		try {
			timing = await timed(completeWorkflow, reserved, viaProxy());
		} finally {
			await proxy.restore();
		}
		const { run, ms } = timing;
		process.stdout.write(
			`\nComplete Key, key store unreachable throughout: failed after ${ms} ms (bound ${CONNECTION_RETRY_MS} ms)\n`,
		);

		expect(ms).toBeGreaterThanOrEqual(CONNECTION_RETRY_MS);
		expect(ms).toBeLessThan(CONNECTION_RETRY_MS + 1_500);
		expect(run.status).toBe('error');
		expect(run.error.name).toBe('NodeApiError');
		expect(run.error.message).toMatch(
			new RegExp(
				`^Could not complete the key "evt:outage_long_complete": the key store at 127\\.0\\.0\\.1:${proxy.port} stayed unreachable for [5-6]\\.\\d s \\(\\d+ attempts\\)$`,
			),
		);
		const { description } = run.error;
		expect(description).toMatch(
			/^The business step's effect has committed and the key is not completed: it stays in progress, held by this execution's reservation until its lease ends at \d{4}-\d\d-\d\dT/,
		);
		expect(description).toContain(reserved.json.idempotency.leaseUntil);
		expect(description).toMatch(/Releasing it .* would run the step again at once/);
		expect(description).toMatch(/keeping it runs the step again after the lease ends/);
		expect(description).toMatch(/the Exactly-Once SQL node is the real answer/);
		expect(description).toMatch(/The last attempt failed with: Nothing is listening at/);
		expect(alertKey(run.error.message)).toBe('evt:outage_long_complete');

		expect(await keyRow('evt:outage_long_complete')).toEqual({
			status: 'in_progress',
			owner_token: reserved.json.idempotency.token,
			attempts: 1,
		});
	});

	test('Release Key fails within the bound and names the key for the alert template; the key stays reserved', async () => {
		const first = await reserve('outage_long_release_a');
		const second = await reserve('outage_long_release_b');
		await proxy.cut();
		let timing;
		try {
			timing = await timed(releaseWorkflow, first, viaProxy());
			// Two keys in one batch: the message names both, the template reads the first.
			const batch = await runWorkflow(releaseWorkflow, [first, second], {
				credentials: viaProxy(),
			});
			expect(batch.error.message).toMatch(
				/^Could not release the keys "evt:outage_long_release_a", "evt:outage_long_release_b": the key store at/,
			);
			expect(alertKey(batch.error.message)).toBe('evt:outage_long_release_a');
		} finally {
			await proxy.restore();
		}
		const { run, ms } = timing;
		expect(ms).toBeLessThan(CONNECTION_RETRY_MS + 1_500);
		expect(run.error.message).toMatch(
			/^Could not release the key "evt:outage_long_release_a": the key store at 127\.0\.0\.1:\d+ stayed unreachable for/,
		);
		expect(run.error.description).toMatch(
			/^The key is not released: it stays in progress until its lease ends at .*Nothing ran twice\./,
		);
		expect(alertKey(run.error.message)).toBe('evt:outage_long_release_a');
		expect((await keyRow('evt:outage_long_release_a')).status).toBe('in_progress');
	});
});

describe('what is not retried', () => {
	test('a statement error (lock timeout) fails after one attempt, and a lost lease at once', async () => {
		const reserved = await reserve('not_retried');
		// A session of the test's own holds the key's row past the nodes' lock timeout.
		const holder = await db.connect();
		await holder.query('BEGIN');
		await holder.query(`SELECT key FROM ${TABLE} WHERE key = 'evt:not_retried' FOR UPDATE`);
		let locked;
		try {
			locked = await timed(completeWorkflow, reserved, viaProxy());
		} finally {
			await holder.query('ROLLBACK');
			await holder.end();
		}
		// One attempt waits the lock timeout (2 s); retried, it would run until the bound (5 s).
		expect(locked.run.error.message).toMatch(
			/^Key "evt:not_retried" is held by another transaction: gave up waiting for it after the lock timeout \(at most 2 s\), so PostgreSQL could not complete the key "evt:not_retried"$/,
		);
		expect(locked.ms).toBeLessThan(3_500);

		// Taken over by a retry after the lease ended: the late Complete Key fails at once.
		await db.query(
			`UPDATE ${TABLE} SET lease_until = now() - interval '1 second' WHERE key = 'evt:not_retried'`,
		);
		const takeover = await reserve('not_retried');
		const late = await timed(completeWorkflow, reserved, viaProxy());
		expect(late.run.error.message).toMatch(
			/^The key "evt:not_retried" was taken over by another execution \(attempt 2\)/,
		);
		expect(late.ms).toBeLessThan(1_000);
		expect(await keyRow('evt:not_retried')).toEqual({
			status: 'in_progress',
			owner_token: takeover.json.idempotency.token,
			attempts: 2,
		});
	});
});

describe('the exactly-once step', () => {
	/** Reserve → the step, through the proxy; the step sleeps after its INSERT when told to. */
	async function deliver(id, query) {
		return await runWorkflow(exactlyOnceWorkflow, [webhookItem({ body: { id } })], {
			credentials: viaProxy(),
			nodeOverrides: query
				? { [STEP]: { parameters: { query, queryParameters: '={{ [$json.idempotency.key] }}' } } }
				: {},
		});
	}

	async function businessRows(key) {
		const { rows } = await db.query('SELECT event_key FROM business_log WHERE event_key = $1', [
			key,
		]);
		return rows.length;
	}

	test("its COMMIT's answer is lost: the retry finds the key completed by this execution and runs nothing again", async () => {
		let answerLost = false;
		const lost = proxy.loseAnswerTo('COMMIT\u0000').then(() => (answerLost = true));
		const run = await deliver('eo_commit_lost');
		expect(answerLost).toBe(true);
		await lost;
		expect(run.error).toBeUndefined();
		expect(run.output(STEP, 0)[0].json.idempotency).toEqual({
			key: 'evt:eo_commit_lost',
			completed: true,
			alreadyCompleted: true,
		});
		expect(await businessRows('evt:eo_commit_lost')).toBe(1);
		expect((await keyRow('evt:eo_commit_lost')).status).toBe('completed');
	});

	test('the connection drops in the middle of its transaction: rolled back, retried, the effect happens once', async () => {
		// The INSERT runs, then the session sleeps; the way is cut meanwhile and restored 1 s later.
		const query =
			'WITH inserted AS (INSERT INTO business_log (event_key) VALUES ($1) RETURNING id) SELECT id, pg_sleep(0.6) FROM inserted';
		const running = deliver('eo_dropped', query);
		await waitFor(
			'the step sleeping after its INSERT',
			async () =>
				(
					await db.query(
						`SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE 'WITH inserted AS%' AND state = 'active'`,
					)
				).rows[0].n > 0,
		);
		await proxy.cut();
		await sleep(1_000);
		await proxy.restore();
		const run = await running;
		expect(run.error).toBeUndefined();
		expect(run.output(STEP, 0)[0].json.idempotency).toEqual({
			key: 'evt:eo_dropped',
			completed: true,
		});
		expect(await businessRows('evt:eo_dropped')).toBe(1);
		expect((await keyRow('evt:eo_dropped')).status).toBe('completed');
	});
});

describe('behind PgBouncer, the server goes away under a running Complete Key and Release Key', () => {
	let pooler;
	let workDir;
	let database;

	beforeAll(async () => {
		const { pgbouncerBinary, startPgBouncer } = await import('../../scripts/harness/pgbouncer.mjs');
		if (!pgbouncerBinary()) {
			process.stdout.write('\nkeyStoreOutage.test.js: pgbouncer is not installed: skipping\n');
			return;
		}
		database = (await db.query('SELECT current_database() AS name')).rows[0].name;
		workDir = mkdtempSync(path.join(os.tmpdir(), 'idem-outage-'));
		const server = new URL(process.env.IDEMPOTENCY_TEST_SERVER_URL);
		pooler = await startPgBouncer({
			workDir,
			name: 'pgbouncer-outage',
			server: { host: server.hostname, port: Number(server.port || 5432) },
			login: {
				user: decodeURIComponent(server.username) || 'postgres',
				password: decodeURIComponent(server.password),
			},
			poolMode: 'transaction',
			defaultPoolSize: 2,
		});
		// PgBouncer waits server_login_retry (15 s by default) after a failed server login; 1 s is
		// what docs/production.md recommends for failover.
		appendFileSync(
			path.join(path.dirname(pooler.logFile), 'pgbouncer.ini'),
			'server_login_retry = 1\n',
		);
		await pooler.admin('RELOAD');
	}, 60_000);

	/** ALTER DATABASE … ALLOW_CONNECTIONS: from the server's own database, not the one it changes. */
	const allowConnections = async (allow) =>
		await withClient(
			process.env.IDEMPOTENCY_TEST_SERVER_URL,
			async (admin) => await admin.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS ${allow}`),
		);

	afterAll(async () => {
		if (database) await allowConnections(true);
		await pooler?.stop();
		if (workDir) rmSync(workDir, { recursive: true, force: true });
	});

	const viaPooler = () =>
		db.credential({
			host: pooler.host,
			port: pooler.port,
			user: pooler.login.user,
			password: pooler.login.password,
			maxConnections: 4,
		});

	/**
	 * While `workflow` waits for the key's row (held by the test), the server ends every session of
	 * the database and refuses new ones for 1.5 s: PgBouncer's server connection breaks under the
	 * statement, and its new logins fail until the server takes them again.
	 */
	async function acrossServerOutage(workflow, item) {
		const holder = await db.connect();
		holder.on('error', () => undefined);
		const holderPid = (await holder.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
		await holder.query('BEGIN');
		await holder.query(`SELECT key FROM ${TABLE} WHERE key = $1 FOR UPDATE`, [
			item.json.idempotency.key,
		]);
		const started = Date.now();
		const running = runWorkflow(workflow, [item], { credentials: viaPooler() });
		await waitFor('the node waiting for the row', async () => {
			const { rows } = await db.query(
				`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
			);
			return rows[0].n > 0;
		});
		await allowConnections(false);
		await db.query(
			`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			 WHERE datname = current_database() AND pid <> pg_backend_pid() AND pid <> $1`,
			[holderPid],
		);
		await holder.query('ROLLBACK');
		await holder.end();
		await sleep(1_500);
		await allowConnections(true);
		const run = await running;
		return { run, ms: Date.now() - started };
	}

	test('Complete Key survives it and completes the key once; Release Key releases its key', async () => {
		if (!pooler) return;
		const toComplete = await reserve('pooler_outage_complete');
		const completed = await acrossServerOutage(completeWorkflow, toComplete);
		process.stdout.write(
			`\nBehind PgBouncer, Complete Key across a 1.5 s server outage: answered after ${completed.ms} ms\n`,
		);
		expect(completed.run.error).toBeUndefined();
		expect(completed.run.output('Complete Key', 0)[0].json.idempotency.completed).toBe(true);
		expect(await keyRow('evt:pooler_outage_complete')).toEqual({
			status: 'completed',
			owner_token: toComplete.json.idempotency.token,
			attempts: 1,
		});

		const toRelease = await reserve('pooler_outage_release');
		const released = await acrossServerOutage(releaseWorkflow, toRelease);
		process.stdout.write(
			`Behind PgBouncer, Release Key across a 1.5 s server outage: answered after ${released.ms} ms\n`,
		);
		expect(released.run.error).toBeUndefined();
		expect(released.run.output('Release Key', 0)[0].json.idempotency).toEqual({
			key: 'evt:pooler_outage_release',
			released: true,
		});
		expect(await keyRow('evt:pooler_outage_release')).toBeUndefined();
	}, 60_000);
});
