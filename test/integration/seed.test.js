// The experiment from the design note, through n8n's engine and a real PostgreSQL.
const { test, expect } = require('@jest/globals');
const { useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { sha256Hex, webhookItem } = require('../support/webhookItems');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');

const db = useTestDatabase();
const credentials = () => db.credential();

// The hand-built pattern's sequence, in simple mode (what it did); lease mode has its own tests.
const simpleMode = { nodeOverrides: { 'Idempotency Reserve': { parameters: { mode: 'simple' } } } };
const reserve = async (item) =>
	await runWorkflow(reserveWorkflow, [item], { credentials: credentials(), ...simpleMode });

test('A, A again with another signature, then B: two new, one duplicate', async () => {
	const eventA = { id: 'evt_seed_A', type: 'payment_intent.succeeded' };
	const first = await reserve(
		webhookItem({ body: eventA, headers: { 'stripe-signature': 't=1,v1=aaa' } }),
	);
	const repeat = await reserve(
		webhookItem({ body: eventA, headers: { 'stripe-signature': 't=2,v1=bbb' } }),
	);
	const eventB = await reserve(
		webhookItem({ body: { id: 'evt_seed_B', type: 'charge.refunded' } }),
	);

	expect(first.status).toBe('success');
	expect(first.output('Idempotency Reserve', 0)).toHaveLength(1);
	expect(first.output('Idempotency Reserve', 1)).toHaveLength(0);
	expect(first.output('Idempotency Reserve', 0)[0].json.idempotency).toEqual({
		key: 'evt:evt_seed_A',
		isNew: true,
	});

	expect(repeat.output('Idempotency Reserve', 0)).toHaveLength(0);
	const [duplicate] = repeat.output('Idempotency Reserve', 1);
	expect(duplicate.json.idempotency).toMatchObject({ key: 'evt:evt_seed_A', isNew: false });
	expect(Date.parse(duplicate.json.idempotency.firstSeenAt)).not.toBeNaN();
	// The duplicate carries the request as it came in, headers included.
	expect(duplicate.json.headers['stripe-signature']).toBe('t=2,v1=bbb');

	expect(eventB.output('Idempotency Reserve', 0)[0].json.idempotency).toEqual({
		key: 'evt:evt_seed_B',
		isNew: true,
	});

	const { rows } = await db.query('SELECT key FROM processed_events ORDER BY key');
	expect(rows.map((row) => row.key)).toEqual(['evt:evt_seed_A', 'evt:evt_seed_B']);
});

test('a body without id sent twice is keyed by the SHA-256 of its exact bytes', async () => {
	const rawBody = '{ "type" :  "ping",\n\t"n": 1 }  ';
	const bytes = Buffer.from(rawBody);
	const body = JSON.parse(rawBody);
	const first = await reserve(webhookItem({ body, rawBody: bytes }));
	const second = await reserve(webhookItem({ body, rawBody: bytes }));

	const expectedKey = `sha256:${sha256Hex(bytes)}`;
	expect(first.output('Idempotency Reserve', 0)[0].json.idempotency).toEqual({
		key: expectedKey,
		isNew: true,
	});
	expect(second.output('Idempotency Reserve', 0)).toHaveLength(0);
	expect(second.output('Idempotency Reserve', 1)[0].json.idempotency.key).toBe(expectedKey);
	// The binary (raw body) is passed on untouched.
	expect(
		Buffer.from(second.output('Idempotency Reserve', 1)[0].binary.data.data, 'base64').equals(
			bytes,
		),
	).toBe(true);
});
