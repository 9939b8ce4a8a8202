// Reserve's Wait While In Flight (lease mode), through the engine: a key another execution holds
// turns into a duplicate when that execution completes, into new when its lease ends, and stays in
// flight when the wait runs out; off (0), in flight is answered at once as before.
const { test, expect } = require('@jest/globals');
const { useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { webhookItem } = require('../support/webhookItems');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');

const db = useTestDatabase();

/**
 * One Reserve (version 2: new, duplicate, in flight) in lease mode; what it answered and how long it took.
 * @param {string} id @param {Record<string, unknown>} [parameters]
 */
async function reserve(id, parameters = {}) {
	const started = Date.now();
	const run = await runWorkflow(reserveWorkflow, [webhookItem({ body: { id } })], {
		credentials: db.credential(),
		nodeOverrides: {
			'Idempotency Reserve': {
				typeVersion: 2,
				parameters: { mode: 'lease', leaseSeconds: 60, ...parameters },
			},
		},
	});
	const ms = Date.now() - started;
	if (run.error !== undefined) return { error: run.error, ms };
	const outputs = ['new', 'duplicate', 'in flight'];
	const index = outputs.findIndex((_, i) => run.output('Idempotency Reserve', i).length === 1);
	return {
		output: outputs[index],
		idempotency: run.output('Idempotency Reserve', index)[0].json.idempotency,
		ms,
	};
}

const wait = (seconds) => ({ options: { waitInFlightSeconds: seconds } });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

test('off by default: a held key is in flight at once', async () => {
	expect((await reserve('w_off')).output).toBe('new');
	const second = await reserve('w_off');
	expect(second.output).toBe('in flight');
	expect(second.ms).toBeLessThan(1000);
});

test('the wait runs out: in flight after about the wait, no sooner', async () => {
	await reserve('w_out');
	const second = await reserve('w_out', wait(1.5));
	expect(second.output).toBe('in flight');
	expect(second.ms).toBeGreaterThanOrEqual(1500);
	expect(second.ms).toBeLessThan(5000);
});

test('the first execution completes meanwhile: a duplicate, as soon as it is done', async () => {
	await reserve('w_done');
	const waiting = reserve('w_done', wait(20));
	await sleep(700);
	await db.query(
		`UPDATE processed_events SET status = 'completed', owner_token = NULL WHERE key = 'evt:w_done'`,
	);
	const second = await waiting;
	expect(second.output).toBe('duplicate');
	expect(second.idempotency.status).toBe('completed');
	// Backoff from 200 ms doubling to 2 s: done within a few seconds, not the 20 s wait.
	expect(second.ms).toBeLessThan(5000);
});

test('the lease ends meanwhile: this execution takes the key over as new', async () => {
	await reserve('w_lease', { leaseSeconds: 2 });
	const second = await reserve('w_lease', { leaseSeconds: 60, ...wait(10) });
	expect(second.output).toBe('new');
	expect(second.idempotency.attempt).toBe(2);
	expect(second.ms).toBeGreaterThanOrEqual(1000);
	const { rows } = await db.query(
		`SELECT attempts, owner_token FROM processed_events WHERE key = 'evt:w_lease'`,
	);
	expect(rows).toEqual([{ attempts: 2, owner_token: second.idempotency.token }]);
});

test('several waiters on one expiring key: exactly one takes it over', async () => {
	await reserve('w_race', { leaseSeconds: 2 });
	const answers = await Promise.all(
		Array.from({ length: 4 }, () => reserve('w_race', { leaseSeconds: 60, ...wait(6) })),
	);
	const outputs = answers.map((answer) => answer.output).sort();
	expect(outputs).toEqual(['in flight', 'in flight', 'in flight', 'new']);
});

test('a wait outside 0 to 300 seconds is an error that names the limits', async () => {
	const { error } = await reserve('w_bad', wait(301));
	expect(error.message).toMatch(/Wait While In Flight must be from 0 to 300 seconds/);
	const { rows } = await db.query(`SELECT 1 FROM processed_events WHERE key = 'evt:w_bad'`);
	expect(rows).toEqual([]);
});
