// Lease mode: an execution that dies never loses its event. Takeover after the lease, exactly one
// winner, owner-only Complete and Release, lost leases reported, hand-built rows counted as done.
const { test, expect } = require('@jest/globals');
const { useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { webhookItem } = require('../support/webhookItems');
const completeWorkflow = require('../fixtures/complete.workflow.json');
const releaseWorkflow = require('../fixtures/release.workflow.json');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');

const db = useTestDatabase();

/** @param {Record<string, unknown>} [parameters] Reserve's, over lease mode with 60 s. */
const leaseMode = (parameters = {}) => ({
	nodeOverrides: {
		'Idempotency Reserve': { parameters: { mode: 'lease', leaseSeconds: 60, ...parameters } },
	},
});

/**
 * @param {string} id
 * @param {{ credentials?: object, [parameter: string]: unknown }} [options]
 */
async function reserve(id, { credentials = db.credential(), ...parameters } = {}) {
	const run = await runWorkflow(reserveWorkflow, [webhookItem({ body: { id } })], {
		credentials,
		...leaseMode(parameters),
	});
	expect(run.error).toBeUndefined();
	const [isNew] = run.output('Idempotency Reserve', 0);
	const [duplicate] = run.output('Idempotency Reserve', 1);
	return (isNew ?? duplicate).json.idempotency;
}

/** What a dead execution leaves behind once its lease has run out, without waiting for it. */
async function expireLease(key) {
	await db.query(
		`UPDATE processed_events SET lease_until = now() - interval '1 second' WHERE key = $1`,
		[key],
	);
}

const complete = async (items, options = {}) =>
	await runWorkflow(completeWorkflow, items, { credentials: db.credential(), ...options });
const release = async (items) =>
	await runWorkflow(releaseWorkflow, items, { credentials: db.credential() });
const asItem = (idempotency) => ({ json: { idempotency } });

test('a new key is reserved in progress with a token, a lease end on the database clock and attempt 1', async () => {
	const reserved = await reserve('lease_new');
	expect(reserved).toEqual({
		key: 'evt:lease_new',
		isNew: true,
		token: expect.stringMatching(/^[0-9a-f-]{36}$/),
		leaseUntil: expect.any(String),
		attempt: 1,
	});
	const { rows } = await db.query(
		`SELECT status, owner_token, attempts, round(extract(epoch FROM lease_until - now()))::int AS left_s
		 FROM processed_events WHERE key = 'evt:lease_new'`,
	);
	expect(rows[0]).toEqual({
		status: 'in_progress',
		owner_token: reserved.token,
		attempts: 1,
		left_s: 60,
	});
});

test('in flight: a retry is a duplicate with status in_progress and the seconds until the lease ends', async () => {
	await reserve('lease_inflight');
	const retry = await reserve('lease_inflight');
	expect(retry).toMatchObject({ key: 'evt:lease_inflight', isNew: false, status: 'in_progress' });
	expect(retry.retryAfterSeconds).toBeGreaterThan(55);
	expect(retry.retryAfterSeconds).toBeLessThanOrEqual(60);
	expect(Date.parse(retry.firstSeenAt)).not.toBeNaN();
});

test('a lease that really runs out (1 s) is taken over by the next retry: new token, attempt 2', async () => {
	const first = await reserve('lease_expires', { leaseSeconds: 1 });
	await new Promise((resolve) => setTimeout(resolve, 1300));
	const takeover = await reserve('lease_expires', { leaseSeconds: 1 });
	expect(takeover).toMatchObject({ key: 'evt:lease_expires', isNew: true, attempt: 2 });
	expect(takeover.token).not.toBe(first.token);
});

test('64 executions racing for one expired key: exactly one takes it over', async () => {
	await reserve('lease_race');
	await expireLease('evt:lease_race');
	const credentials = db.credential({ maxConnections: 32 });
	const results = await Promise.all(
		Array.from({ length: 64 }, async () => await reserve('lease_race', { credentials })),
	);
	const winners = results.filter((result) => result.isNew);
	expect(winners).toHaveLength(1);
	expect(winners[0].attempt).toBe(2);
	expect(results.filter((result) => !result.isNew && result.status === 'in_progress')).toHaveLength(
		63,
	);
	const { rows } = await db.query(
		`SELECT owner_token, attempts FROM processed_events WHERE key = 'evt:lease_race'`,
	);
	expect(rows[0]).toEqual({ owner_token: winners[0].token, attempts: 2 });
});

test('Complete by the owner: retries are duplicates with status completed, even after the lease time', async () => {
	const reserved = await reserve('lease_complete');
	const run = await complete([asItem(reserved)]);
	expect(run.error).toBeUndefined();
	expect(run.output('Complete Key')[0].json.idempotency).toEqual({
		key: 'evt:lease_complete',
		completed: true,
	});
	await expireLease('evt:lease_complete');
	const retry = await reserve('lease_complete');
	expect(retry).toMatchObject({ isNew: false, status: 'completed' });
	expect(retry.retryAfterSeconds).toBeUndefined();
	// Completing twice with the same token changes nothing and is not an error.
	expect((await complete([asItem(reserved)])).error).toBeUndefined();
});

test('Complete after the lease was taken over fails, naming the key and the attempt that holds it', async () => {
	const dead = await reserve('lease_lost');
	await expireLease('evt:lease_lost');
	const takeover = await reserve('lease_lost');
	expect(takeover.isNew).toBe(true);

	const late = await complete([asItem(dead)]);
	expect(late.status).toBe('error');
	expect(late.error.name).toBe('NodeOperationError');
	expect(late.error.message).toMatch(
		/"evt:lease_lost" was taken over by another execution \(attempt 2\)/,
	);
	expect(late.error.description).toMatch(/idempotent/);
	const { rows } = await db.query(
		`SELECT status, owner_token FROM processed_events WHERE key = 'evt:lease_lost'`,
	);
	expect(rows[0]).toEqual({ status: 'in_progress', owner_token: takeover.token });
});

test('Complete after the key was released or purged fails clearly; with error output the other items complete', async () => {
	const gone = await reserve('lease_gone');
	const kept = await reserve('lease_kept');
	await db.query(`DELETE FROM processed_events WHERE key = 'evt:lease_gone'`);

	const stopped = await complete([asItem(gone)]);
	expect(stopped.error.message).toMatch(
		/"evt:lease_gone" is no longer reserved: it was released or purged/,
	);

	const continued = await complete([asItem(gone), asItem(kept)], {
		nodeOverrides: { 'Complete Key': { onError: 'continueErrorOutput' } },
	});
	expect(continued.error).toBeUndefined();
	expect(continued.output('Complete Key', 0).map((item) => item.json.idempotency.key)).toEqual([
		'evt:lease_kept',
	]);
	expect(continued.output('Complete Key', 1)[0].json.error).toMatch(/evt:lease_gone/);
	const { rows } = await db.query(
		`SELECT status FROM processed_events WHERE key = 'evt:lease_kept'`,
	);
	expect(rows[0].status).toBe('completed');
});

test('Complete refuses an item without a token instead of completing a key it does not hold', async () => {
	await reserve('lease_no_token');
	const run = await complete([asItem({ key: 'evt:lease_no_token' })]);
	expect(run.error.message).toMatch(/comes without the token of its reservation/);
	const { rows } = await db.query(
		`SELECT status FROM processed_events WHERE key = 'evt:lease_no_token'`,
	);
	expect(rows[0].status).toBe('in_progress');
});

test('Release by a late execution does not free a key that a retry took over; its owner can', async () => {
	const dead = await reserve('lease_release');
	await expireLease('evt:lease_release');
	const takeover = await reserve('lease_release');

	const late = await release([asItem(dead)]);
	expect(late.output('Release Key')[0].json.idempotency).toEqual({
		key: 'evt:lease_release',
		released: false,
		reason: 'not_owner',
	});
	const owner = await release([asItem(takeover)]);
	expect(owner.output('Release Key')[0].json.idempotency).toEqual({
		key: 'evt:lease_release',
		released: true,
	});
	const retry = await reserve('lease_release');
	expect(retry).toMatchObject({ isNew: true, attempt: 1 });
});

test('rows written in simple mode or by the hand-built pattern (no status) are completed events', async () => {
	await reserve('lease_prepare_table');
	await db.query(
		`INSERT INTO processed_events (key, first_seen) VALUES ('evt:legacy', '2026-01-02T03:04:05Z')`,
	);
	const retry = await reserve('legacy');
	expect(retry).toEqual({
		key: 'evt:legacy',
		isNew: false,
		status: 'completed',
		firstSeenAt: '2026-01-02T03:04:05.000Z',
	});
});

test('one execution: the first item of a key is new, its repeats are in progress, completed keys are done', async () => {
	await reserve('lease_batch_done');
	await db.query(
		`UPDATE processed_events SET status = 'completed' WHERE key = 'evt:lease_batch_done'`,
	);
	const items = ['lease_batch_a', 'lease_batch_done', 'lease_batch_a'].map((id) =>
		webhookItem({ body: { id } }),
	);
	const run = await runWorkflow(reserveWorkflow, items, {
		credentials: db.credential(),
		...leaseMode(),
	});
	const [fresh] = run.output('Idempotency Reserve', 0);
	expect(fresh.pairedItem).toEqual({ item: 0 });
	const duplicates = run
		.output('Idempotency Reserve', 1)
		.map((item) => [item.pairedItem.item, item.json.idempotency.status]);
	expect(duplicates).toEqual([
		[1, 'completed'],
		[2, 'in_progress'],
	]);
});

test('a lease out of range is a clear error; with Continue On Fail it is an error item, never a route to true', async () => {
	const items = [webhookItem({ body: { id: 'lease_bad_setting' } })];
	const stopped = await runWorkflow(reserveWorkflow, items, {
		credentials: db.credential(),
		...leaseMode({ leaseSeconds: 0 }),
	});
	expect(stopped.status).toBe('error');
	expect(stopped.error.message).toMatch(/Lease must be from 1 to 604800 seconds, not 0/);

	const continued = await runWorkflow(reserveWorkflow, items, {
		credentials: db.credential(),
		nodeOverrides: {
			'Idempotency Reserve': {
				onError: 'continueRegularOutput',
				parameters: { mode: 'lease', leaseSeconds: 0 },
			},
		},
	});
	const routed = continued.output('Idempotency Reserve', 0);
	expect(routed).toHaveLength(1);
	expect(routed[0].json.error).toMatch(/Lease must be from 1/);
	expect(routed[0].json.idempotency).toBeUndefined();
	const { rows } = await db
		.query(`SELECT count(*)::int AS n FROM processed_events WHERE key = 'evt:lease_bad_setting'`)
		.catch(() => ({ rows: [{ n: 0 }] }));
	expect(rows[0].n).toBe(0);
});

test("an in-flight duplicate's Retry-After never exceeds the lease, even when its transaction began before the reservation", async () => {
	// now() is the start of the transaction: one that began before the reserving execution, and
	// takes its snapshot after that commit, sees the row with a lease end more than a lease away.
	const { tableRef } = require('../../dist/nodes/shared/store/identifiers');
	const { reserveLeaseSql } = require('../../dist/nodes/shared/store/sql');
	await reserve('lease_prepare_table');
	const early = await db.connect();
	try {
		await early.query('BEGIN');
		await early.query('SELECT now()');
		await new Promise((resolve) => setTimeout(resolve, 1500));
		const reserved = await reserve('lease_early_snapshot');
		expect(reserved.isNew).toBe(true);
		const { rows } = await early.query({
			text: reserveLeaseSql(tableRef('public', 'processed_events')),
			values: [['evt:lease_early_snapshot'], 'another-token', 60],
			rowMode: 'array',
		});
		await early.query('COMMIT');
		const [, state, , , , retryAfter] = rows[0];
		expect(state).toBe('in_progress');
		expect(retryAfter).toBeGreaterThanOrEqual(58);
		expect(retryAfter).toBeLessThanOrEqual(60);
	} finally {
		await early.end();
	}
});
