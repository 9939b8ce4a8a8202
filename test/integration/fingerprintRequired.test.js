// A fingerprint made of Fingerprint Fields (the Expression source) is required: a request whose
// fields are missing or empty is an item error of kind invalid-fingerprint (400), not "no
// fingerprint", which never mismatches and so handed the first request's stored answer to any body
// sent with the same key. A reused key with On Mismatch = Fail the Item is kind fingerprint-mismatch
// (422). The raw-body source is unchanged. Reserve as an API endpoint has it, in n8n's engine,
// against PostgreSQL.
const { beforeAll, describe, test, expect } = require('@jest/globals');
const { randomUUID } = require('node:crypto');
const { CLIENT_ERROR_DOCS } = require('../../dist/nodes/shared/keys/clientErrors');
const { useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { webhookItem } = require('../support/webhookItems');
const completeWorkflow = require('../fixtures/complete.workflow.json');

const db = useTestDatabase();

const RESERVE = 'Idempotency Reserve';
// Reserve's outputs here (lease mode, On Mismatch: reused key output); the error output comes last.
const [NEW, DUPLICATE, IN_FLIGHT, REUSED] = [0, 1, 2, 3];
const ERROR = 'error';

/** Reserve keyed on the Idempotency-Key header, fingerprinted by `{{ $json.body.order }}`. */
function reserveWorkflow(parameters = {}) {
	return {
		name: 'Reserve with an Expression fingerprint',
		nodes: [
			{
				parameters: {
					mode: 'lease',
					leaseSeconds: 60,
					keySource: 'idempotencyKeyHeader',
					rawBodyProperty: 'data',
					fingerprint: 'expression',
					fingerprintExpression: '={{ $json.body.order }}',
					onMismatch: 'output',
					namespace: 'orders',
					schema: 'public',
					table: 'processed_events',
					createTable: true,
					...parameters,
				},
				id: 'a7f0c0de-0000-4000-8000-000000000001',
				name: RESERVE,
				type: 'n8n-nodes-idempotency.idempotencyReserve',
				typeVersion: 2,
				position: [0, 0],
				onError: 'continueErrorOutput',
				credentials: { idempotencyPostgresApi: { name: 'Idempotency Postgres' } },
			},
		],
		connections: {},
		settings: { executionOrder: 'v1' },
	};
}

const request = (key, body) => webhookItem({ body, headers: { 'idempotency-key': `"${key}"` } });

/** Where one request went: its output (ERROR for the error output, the last) and item. */
async function send(item, parameters) {
	const run = await runWorkflow(reserveWorkflow(parameters), [item], {
		credentials: db.credential(),
	});
	expect(run.error).toBeUndefined();
	const count = run.outputCount(RESERVE);
	const routed = [...Array(count).keys()].filter(
		(output) => run.output(RESERVE, output).length > 0,
	);
	expect(routed).toHaveLength(1);
	return {
		output: routed[0] === count - 1 ? ERROR : routed[0],
		json: run.output(RESERVE, routed[0])[0].json,
	};
}

async function completeWithAnswer(idempotency) {
	const done = await runWorkflow(completeWorkflow, [{ json: { idempotency } }], {
		credentials: db.credential(),
		nodeOverrides: {
			'Complete Key': {
				parameters: { storeResponse: true, responseStatusCode: 201, responseBody: '{"order":1}' },
			},
		},
	});
	expect(done.error).toBeUndefined();
}

const invalidFingerprint = {
	kind: 'invalid-fingerprint',
	status: 400,
	title: 'The request lacks what its fingerprint is made of',
	type: `${CLIENT_ERROR_DOCS}#invalid-fingerprint`,
};

describe('Fingerprint: Expression is required', () => {
	const key = randomUUID();
	const order = { sku: 'A-1', qty: 2 };

	// The honest request, new and completed with a stored answer (what the attack is after).
	beforeAll(async () => {
		const first = await send(request(key, { order }));
		expect(first.output).toBe(NEW);
		await completeWithAnswer(first.json.idempotency);
	});

	test('its repeat gets the stored answer; another order is a reused key', async () => {
		const repeat = await send(request(key, { order: { qty: 2, sku: 'A-1' }, sentAt: 2 }));
		expect(repeat.output).toBe(DUPLICATE);
		expect(repeat.json.idempotency.response).toMatchObject({
			statusCode: 201,
			body: '{"order":1}',
		});
		const other = await send(request(key, { order: { sku: 'B-2', qty: 1 } }));
		expect(other.output).toBe(REUSED);
		expect(other.json.idempotency.response).toBeUndefined();
	});

	test.each([
		['an empty body', {}, /are missing for this request/],
		['order null', { order: null }, /are null for this request/],
		['order empty text', { order: '' }, /are empty text for this request/],
	])(
		'the same key with %s: 400 invalid-fingerprint on the error output, never the stored answer',
		async (_label, body, message) => {
			const attack = await send(request(key, body));
			expect(attack.output).toBe(ERROR);
			expect(attack.json.details).toEqual(invalidFingerprint);
			expect(attack.json.error).toMatch(message);
			expect(attack.json.idempotency).toBeUndefined();
		},
	);

	test('an empty object is a value: hashed and compared, so here a reused key', async () => {
		const empty = await send(request(key, { order: {} }));
		expect(empty.output).toBe(REUSED);
	});

	test('a new key without the fields reserves nothing', async () => {
		const fresh = randomUUID();
		const attempt = await send(request(fresh, { amount: 1 }));
		expect([attempt.output, attempt.json.details.kind]).toEqual([ERROR, 'invalid-fingerprint']);
		const { rows } = await db.query(`SELECT key FROM processed_events WHERE key LIKE $1`, [
			`%${fresh}`,
		]);
		expect(rows).toEqual([]);
	});

	test('On Mismatch = Fail the Item: the reused key is an item error of kind fingerprint-mismatch (422)', async () => {
		const mismatch = await send(request(key, { order: { sku: 'C-3' } }), { onMismatch: 'error' });
		expect(mismatch.output).toBe(ERROR);
		expect(mismatch.json.details).toEqual({
			kind: 'fingerprint-mismatch',
			status: 422,
			title: 'The idempotency key was used with another payload',
			type: `${CLIENT_ERROR_DOCS}#fingerprint-mismatch`,
		});
		expect(mismatch.json.error).toMatch(/was reserved for another request/);
	});
});

describe('Fingerprint: Raw Body is unchanged', () => {
	test('an empty JSON object has a raw body, so it is fingerprinted and reserved', async () => {
		const key = randomUUID();
		const first = await send(request(key, {}), { fingerprint: 'rawBody' });
		expect(first.output).toBe(NEW);
		const again = await send(request(key, {}), { fingerprint: 'rawBody' });
		expect(again.output).toBe(IN_FLIGHT);
	});
});
