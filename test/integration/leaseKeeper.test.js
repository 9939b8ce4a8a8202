// A lease that lives as long as its execution (store/leaseKeeper.ts): a step slower than the lease
// keeps its key from a sender's retry and from the Redrive Trigger while the execution runs; the key
// is free for a takeover once the execution ended without completing, once Max Run passed, or with
// Keep the Lease While Running off (the lease as it was). The Redrive Trigger's claim takes only the
// keys its own workflow stored. All through n8n-core's WorkflowExecute and a real PostgreSQL.
const { afterAll, beforeAll, describe, expect, test } = require('@jest/globals');
const { setTimeout: sleep } = require('node:timers/promises');
const { useTestDatabase } = require('../support/database');
const { PACKAGE, registerTestNode, runWorkflow } = require('../support/engine');
const { startTcpProxy } = require('../support/tcpProxy');
const { webhookItem } = require('../support/webhookItems');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');
const { KeyStore } = require('../../dist/nodes/shared/store/KeyStore');
const { tableRef } = require('../../dist/nodes/shared/store/identifiers');
const { poolFor } = require('../../dist/nodes/shared/transport/poolCache');
const { keptLeaseCount } = require('../../dist/nodes/shared/store/leaseKeeper');

const db = useTestDatabase();
const ref = tableRef('public', 'processed_events');

// The business step: waits `ms`, then fails when told to; counts its runs per event id.
const runsOf = new Map();
registerTestNode(
	'slowStep',
	async function () {
		const items = this.getInputData();
		for (const item of items) {
			const id = /** @type {any} */ (item.json.body).id;
			runsOf.set(id, (runsOf.get(id) ?? 0) + 1);
		}
		await sleep(Number(this.getNodeParameter('ms', 0)));
		if (this.getNodeParameter('fail', 0)) throw new Error('the business step failed');
		return [items];
	},
	[
		{ displayName: 'ms', name: 'ms', type: 'number', default: 0 },
		{ displayName: 'fail', name: 'fail', type: 'boolean', default: false },
	],
);

const credentials = { idempotencyPostgresApi: { id: '1', name: 'Idempotency Postgres' } };

/** Reserve (lease mode) → the slow step → Complete Key (its Key left empty: this execution's). */
function slowWorkflow({ ms, fail = false, reserve = {} }) {
	const [reserveNode] = reserveWorkflow.nodes;
	return {
		name: 'slow step',
		nodes: [
			{
				...reserveNode,
				parameters: { ...reserveNode.parameters, mode: 'lease', leaseSeconds: 3, ...reserve },
			},
			{
				id: 'slow',
				name: 'Slow Step',
				type: 'test.slowStep',
				typeVersion: 1,
				position: [200, 0],
				parameters: { ms, fail },
			},
			{
				id: 'complete',
				name: 'Complete Key',
				type: `${PACKAGE}.idempotencyComplete`,
				typeVersion: 1,
				position: [400, 0],
				parameters: { key: '', reservation: '', schema: 'public', table: 'processed_events' },
				credentials,
			},
		],
		connections: {
			'Idempotency Reserve': { main: [[{ node: 'Slow Step', type: 'main', index: 0 }], []] },
			'Slow Step': { main: [[{ node: 'Complete Key', type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
	};
}

/** A sender's retry: Reserve alone, lease mode; what it found. */
async function retry(id, parameters = {}) {
	const run = await runWorkflow(reserveWorkflow, [webhookItem({ body: { id } })], {
		credentials: db.credential(),
		nodeOverrides: {
			'Idempotency Reserve': { parameters: { mode: 'lease', leaseSeconds: 3, ...parameters } },
		},
	});
	expect(run.error).toBeUndefined();
	const [isNew] = run.output('Idempotency Reserve', 0);
	const [held] = run.output('Idempotency Reserve', 1);
	return (isNew ?? held).json.idempotency;
}

const rowOf = async (key) =>
	(
		await db.query(
			`SELECT status, attempts, lease_until > now() AS leased FROM processed_events WHERE key = $1`,
			[key],
		)
	).rows[0];

/** The lease's end as the database holds it, in microseconds since the epoch. */
const leaseUntilOf = async (key) =>
	Number(
		(
			await db.query(
				`SELECT (extract(epoch FROM lease_until) * 1000000)::bigint AS until FROM processed_events WHERE key = $1`,
				[key],
			)
		).rows[0].until,
	);

/** The database's clock, in the same unit as leaseUntilOf. */
const databaseNow = async () =>
	Number(
		(await db.query(`SELECT (extract(epoch FROM now()) * 1000000)::bigint AS now`)).rows[0].now,
	);

/** Polls `check` every 100 ms; fails the test if it is not true within `ms`. */
async function waitFor(check, ms) {
	const giveUpAt = Date.now() + ms;
	while (!(await check())) {
		if (Date.now() > giveUpAt) throw new Error(`not true within ${ms} ms: ${check}`);
		await sleep(100);
	}
}

const slowRun = (id, options) =>
	runWorkflow(slowWorkflow(options), [webhookItem({ body: { id } })], {
		credentials: db.credential(),
	});

describe('Keep the Lease While Running', () => {
	test('a step three times longer than the lease: the retry in the middle is in flight, the step runs once, the key completes', async () => {
		const slow = slowRun('keep_slow', { ms: 9000 });
		await sleep(6000); // twice the lease: without the keeper the retry would take the key over
		expect(await retry('keep_slow')).toMatchObject({ isNew: false, status: 'in_progress' });
		expect(await rowOf('evt:keep_slow')).toEqual({
			status: 'in_progress',
			attempts: 1,
			leased: true,
		});
		const run = await slow;
		expect(run.error).toBeUndefined();
		expect(run.output('Complete Key', 0)[0].json.idempotency).toMatchObject({ completed: true });
		expect(runsOf.get('keep_slow')).toBe(1);
		expect(await retry('keep_slow')).toMatchObject({ isNew: false, status: 'completed' });
		// Completed: nothing left to renew in this process.
		expect(keptLeaseCount(poolFor(db.credential()), ref)).toBe(0);
	});

	test('an execution that ends in a failure without Release stops renewing: the retry takes the key over once the lease ends', async () => {
		const run = await slowRun('keep_failed', { ms: 0, fail: true });
		expect(run.error?.message).toMatch(/the business step failed/);
		await sleep(3500);
		expect(await retry('keep_failed')).toMatchObject({ isNew: true, attempt: 2 });
	});

	test('Max Run is a ceiling: past it the lease ends as if the execution had died', async () => {
		const slow = slowRun('keep_ceiling', { ms: 9000, reserve: { maxRunSeconds: 2 } });
		await sleep(7000);
		expect(await retry('keep_ceiling')).toMatchObject({ isNew: true, attempt: 2 });
		await slow;
	});

	test('off, the lease ends Lease seconds after Reserve, as before', async () => {
		const slow = slowRun('keep_off', { ms: 8000, reserve: { keepLease: false } });
		// Until the reservation's own lease has ended, however late the engine reached Reserve.
		await waitFor(async () => (await rowOf('evt:keep_off'))?.leased === false, 7000);
		expect(await retry('keep_off')).toMatchObject({ isNew: true, attempt: 2 });
		const run = await slow;
		// The first execution's Complete Key is fenced out: the retry owns the key now.
		expect(run.error?.message).toMatch(/taken over/);
	});

	test('a Max Run out of range is a node error naming the setting, nothing reserved', async () => {
		const run = await runWorkflow(reserveWorkflow, [webhookItem({ body: { id: 'keep_bad' } })], {
			credentials: db.credential(),
			nodeOverrides: {
				'Idempotency Reserve': { parameters: { mode: 'lease', maxRunSeconds: 0 } },
			},
		});
		expect(run.error?.message).toMatch(/^Max Run must be from 1 to 604800 seconds, not 0/);
		expect(await rowOf('evt:keep_bad')).toBeUndefined();
	});
});

describe('a renewal that fails (the key store away)', () => {
	let proxy;
	beforeAll(async () => {
		const server = new URL(process.env.IDEMPOTENCY_TEST_SERVER_URL);
		proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
	});
	afterAll(async () => {
		await proxy?.stop();
	});

	test('takes no key from the live execution and is tried again: once the store is back the lease is renewed', async () => {
		// Timed by the database's own lease_until, not by sleeps: under a busy CI a sleep-timed
		// check raced the one tick between the restore and the lease's end.
		const { key, token } = await retry('keep_outage', { leaseSeconds: 6 });
		const reservedUntil = await leaseUntilOf(key);
		const viaProxy = db.credential({ host: proxy.host, port: proxy.port, maxConnections: 2 });
		/** @type {(value?: unknown) => void} */
		let done = () => undefined;
		await proxy.cut(); // every renewal fails until the restore
		new KeyStore(poolFor(viaProxy), ref).keepLeases([{ key, token }], {
			leaseSeconds: 6,
			maxRunSeconds: 60,
			until: new Promise((resolve) => (done = resolve)),
		});
		await sleep(3200); // the renewal due at 2 s has failed
		expect(await rowOf(key)).toEqual({ status: 'in_progress', attempts: 1, leased: true });
		expect(await leaseUntilOf(key)).toBe(reservedUntil);
		await proxy.restore();
		// Renewed after the outage, before the reservation's own lease ended.
		await waitFor(async () => (await leaseUntilOf(key)) > reservedUntil, 2500);
		expect(await retry('keep_outage', { leaseSeconds: 6 })).toMatchObject({
			isNew: false,
			status: 'in_progress',
		});
		done();
		await waitFor(async () => !(await rowOf(key)).leased, 10000);
		expect(await retry('keep_outage', { leaseSeconds: 6 })).toMatchObject({
			isNew: true,
			attempt: 2,
		});
	});
});

describe("the Redrive Trigger's claim", () => {
	const store = () => new KeyStore(poolFor(db.credential()), ref);
	const claim = async (workflowId, options = {}) =>
		await store().claimRedrives({
			token: `claim-${workflowId}`,
			leaseSeconds: 60,
			maxAttempts: 5,
			limit: 100,
			backoffSeconds: 0,
			workflowId,
			...options,
		});
	const stored = async (key, delivery) =>
		await db.query(
			`INSERT INTO processed_events (key, status, owner_token, lease_until, delivery)
			 VALUES ($1, 'in_progress', 'dead', now() - interval '1 hour', $2)`,
			[key, delivery],
		);

	test("takes only keys its own workflow stored: two workflows on one table never run each other's events", async () => {
		await retry('scope_setup'); // the table with its columns
		await stored('a:evt:1', { v: 1, body: { id: '1' }, workflowId: 'wf-a' });
		await stored('b:evt:1', { v: 1, body: { id: '1' }, workflowId: 'wf-b' });
		await stored('old:evt:1', { v: 1, body: { id: '1' } });
		expect((await claim('wf-a')).claimed.map(({ key }) => key)).toEqual(['a:evt:1']);
		expect((await claim('wf-b')).claimed.map(({ key }) => key)).toEqual(['b:evt:1']);
		// Stored before deliveries named a workflow: claimed by no workflow unless it is told to.
		expect((await claim('wf-c')).claimed).toEqual([]);
		expect((await claim('wf-c', { claimUnscoped: true })).claimed.map(({ key }) => key)).toEqual([
			'old:evt:1',
		]);
	});

	test('a claimed key is kept while its redriven execution runs, and let go when it is done', async () => {
		// Timed by the database's own lease_until, not by sleeps: with a 2 s lease one late tick on a
		// loaded machine (both cores busy) let the lease end between two renewals.
		await stored('kept:evt:1', { v: 1, body: { id: '1' }, workflowId: 'wf-k' });
		const [claimed] = (await claim('wf-k', { leaseSeconds: 6 })).claimed;
		const claimedUntil = await leaseUntilOf(claimed.key);
		/** @type {(value?: unknown) => void} */
		let done = () => undefined;
		store().keepLeases([{ key: claimed.key, token: claimed.token }], {
			leaseSeconds: 6,
			maxRunSeconds: 60,
			until: new Promise((resolve) => (done = resolve)),
		});
		// Renewed past the claim's own lease, and still held once that lease would have ended.
		await waitFor(async () => (await leaseUntilOf(claimed.key)) > claimedUntil, 10000);
		await waitFor(async () => (await databaseNow()) > claimedUntil, 10000);
		expect(await rowOf('kept:evt:1')).toEqual({ status: 'in_progress', attempts: 2, leased: true });
		expect((await claim('wf-k')).claimed).toEqual([]);
		done();
		await waitFor(async () => !(await rowOf('kept:evt:1')).leased, 15000);
		expect((await claim('wf-k')).claimed.map(({ key }) => key)).toEqual(['kept:evt:1']);
	});
});
