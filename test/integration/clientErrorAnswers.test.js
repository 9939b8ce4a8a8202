// The templates' answer to an item error as shipped up to Reserve 2.1, through n8n's engine: Reserve
// continuing on its error output (On Error: continue using error output) into the Respond node the
// templates had (test/fixtures/problemRespondNodes.json), what saved workflows still do; Reserve 2.2
// // gives the same answers itself (reserveAnswers.test.js). The Respond node's expressions run in the
// engine (test/support/respondProbe.js stands in for n8n's node). A sender's mistake gets 4xx problem+json naming it;
// a database failure gets 500 with nothing internal in it.
const { describe, test, expect } = require('@jest/globals');
const {
	CLIENT_ERROR_DOCS,
	INVALID_SIGNATURE_DETAIL,
} = require('../../dist/nodes/shared/keys/clientErrors');
const { useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { PROVIDERS } = require('../support/providerVectors');
const { takeAnswers, RESPOND_TYPE } = require('../support/respondProbe');
const { RESERVE_TYPE, reserveAndErrorAnswer } = require('../support/templateBranches');
require('../support/webhookStandIn');
const { webhookItem } = require('../support/webhookItems');

const stripe = PROVIDERS.stripe;

const db = useTestDatabase();

/** Every key in the template's table, none when Reserve never got to create it. */
async function reservedKeys() {
	const { rows } = await db.query(`SELECT to_regclass('processed_events') IS NOT NULL AS made`);
	if (!rows[0].made) return [];
	return (await db.query('SELECT key FROM processed_events ORDER BY key')).rows.map(
		(row) => row.key,
	);
}

async function signedDelivery(rawBody) {
	return webhookItem({
		body: JSON.parse(rawBody),
		rawBody,
		headers: await stripe.sign(rawBody, { secret: stripe.secret }),
	});
}

const webhookTemplate = require('../../workflows/idempotent-webhook.json');

describe('workflows/idempotent-webhook.json', () => {
	const { reserve, errorTarget, workflow } = reserveAndErrorAnswer(webhookTemplate);
	const run = async (items, credentials = db.credential()) =>
		await runWorkflow(workflow, items, {
			credentials,
			credentialsByType: { webhookSigningSecretApi: { secret: stripe.secret } },
		});

	test('Reserve 2.1 as shipped until 2.2: its error output answered by one Respond node', () => {
		// The shipped template now has Reserve 2.2 answer itself (reserveAnswers.test.js); this suite
		// runs the error-output shape saved workflows keep (test/support/templateBranches.js).
		expect(
			webhookTemplate.nodes.find((node) => node.name === reserve.name).onError,
		).toBeUndefined();
		expect(reserve.onError).toBe('continueErrorOutput');
		expect(workflow.nodes.find((node) => node.name === errorTarget).type).toBe(RESPOND_TYPE);
	});

	test('a signed delivery whose id is an object: 400 problem+json naming the reason, nothing reserved', async () => {
		takeAnswers();
		const result = await run([await signedDelivery('{"id":{"a":1},"type":"x"}')]);
		expect(result.status).toBe('success');
		const [answer, ...more] = takeAnswers();
		expect(more).toEqual([]);
		expect(answer.node).toBe(errorTarget);
		expect(answer.statusCode).toBe(400);
		expect(answer.headers['content-type']).toBe('application/problem+json');
		const problem = JSON.parse(answer.body);
		expect(problem).toEqual({
			type: `${CLIENT_ERROR_DOCS}#invalid-key`,
			title: 'The event id cannot be an idempotency key',
			status: 400,
			detail: expect.stringMatching(/is an object/),
		});
		for (const output of [0, 1, 2, 3]) expect(result.output(reserve.name, output)).toEqual([]);
		expect(await reservedKeys()).toEqual([]);
	});

	test('an honest delivery beside it is reserved and goes to new, not to the answer', async () => {
		takeAnswers();
		const result = await run([await signedDelivery('{"id":"evt_honest_1","type":"x"}')]);
		expect(takeAnswers()).toEqual([]);
		expect(result.output(reserve.name, 0).map((item) => item.json.idempotency.key)).toEqual([
			'evt:evt_honest_1',
		]);
	});

	test('the key store unreachable: 500 problem+json with a generic detail that names nothing internal', async () => {
		takeAnswers();
		const unreachable = db.credential({ host: '127.0.0.1', port: 1 });
		const result = await run(
			[await signedDelivery('{"id":"evt_db_down","type":"x"}')],
			unreachable,
		);
		const [answer] = takeAnswers();
		expect(answer.statusCode).toBe(500);
		expect(answer.headers['content-type']).toBe('application/problem+json');
		const problem = JSON.parse(answer.body);
		expect(problem).toEqual({
			type: 'about:blank',
			title: 'The request could not be processed',
			status: 500,
			detail: expect.any(String),
		});
		expect(answer.body).not.toMatch(/127\.0\.0\.1|port|postgres|ECONNREFUSED/i);
		// The item on the error output still says what happened, for the execution and the Error Workflow.
		const [failed] = result.output(reserve.name, 4);
		expect(failed.json.error).toMatch(/127\.0\.0\.1/);
		expect(failed.json.details).toBeUndefined();
		for (const output of [0, 1, 2, 3]) expect(result.output(reserve.name, output)).toEqual([]);
	});
});

const SIGNING_TEMPLATES = [
	'idempotent-webhook.json',
	'exactly-once-postgres.json',
	'idempotent-http-call.json',
	'multi-step.json',
	'answer-first.json',
];

describe.each(SIGNING_TEMPLATES)('workflows/%s: a signature that fails', (file) => {
	const template = require(`../../workflows/${file}`);
	// The template's Webhook (Respond: Using 'Respond to Webhook' Node) and Reserve as shipped:
	// Reserve 2.3 answers the 401 itself (answerRepeats.ts), as the removed Respond 401 did.
	const webhook = template.nodes.find((node) => node.type === 'n8n-nodes-base.webhook');
	const reserve = template.nodes.find((node) => node.type === RESERVE_TYPE);
	const workflow = {
		name: template.name,
		nodes: [webhook, reserve],
		connections: { [webhook.name]: { main: [[{ node: reserve.name, type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	};
	const run = async (items) =>
		await runWorkflow(workflow, items, {
			credentials: db.credential(),
			credentialsByType: { webhookSigningSecretApi: { secret: stripe.secret } },
		});

	test('forged, stale, unsigned: each 401 problem+json of kind invalid-signature with the same detail; the reason only in the execution', async () => {
		const rawBody = `{"id":"evt_forged_${file.length}","type":"x"}`;
		const now = Math.floor(Date.now() / 1000);
		/** @type {Array<[string, Record<string, string>]>} */
		const deliveries = [
			['mismatch', await stripe.sign(rawBody, { secret: 'whsec_not_the_one' })],
			[
				'timestamp_out_of_tolerance',
				await stripe.sign(rawBody, { secret: stripe.secret, timestamp: now - 3600 }),
			],
			['missing_header', {}],
			['malformed', { 'stripe-signature': 'garbage' }],
		];
		for (const [reason, headers] of deliveries) {
			takeAnswers();
			const result = await run([webhookItem({ body: JSON.parse(rawBody), rawBody, headers })]);
			expect(result.status).toBe('success');
			expect(takeAnswers()).toEqual([]);
			const [answer, ...more] = result.webhookResponses;
			expect(more).toEqual([]);
			expect([reason, answer.statusCode, answer.headers]).toEqual([
				reason,
				401,
				{ 'content-type': 'application/problem+json' },
			]);
			expect(JSON.parse(answer.body)).toEqual({
				type: `${CLIENT_ERROR_DOCS}#invalid-signature`,
				title: 'The signature of the request could not be verified',
				status: 401,
				detail: INVALID_SIGNATURE_DETAIL,
			});
			expect(answer.body).not.toContain(reason);
			// Which check failed stays on Reserve's output item, for the operator.
			const [refused] = result.output(reserve.name, 3);
			expect(refused.json.signature).toMatchObject({ valid: false, reason });
		}
		expect((await reservedKeys()).filter((key) => key.includes('forged'))).toEqual([]);
	});
});

describe('workflows/idempotent-api.json', () => {
	const template = require('../../workflows/idempotent-api.json');
	const { reserve, workflow } = reserveAndErrorAnswer(template, ['Respond 409', 'Respond 422']);
	/** A request as n8n's Webhook node hands it on with JWT Auth on: the verified token's payload. */
	const request = (body, headers, sub) => {
		const item = webhookItem({ body, headers });
		return { ...item, json: { ...item.json, jwtPayload: { sub, iat: 1 } } };
	};
	const run = async (item) => await runWorkflow(workflow, [item], { credentials: db.credential() });

	test('a request without an Idempotency-Key: 400 problem+json of kind invalid-idempotency-key', async () => {
		takeAnswers();
		const result = await run(request({ sku: 'A' }, {}, 'alice'));
		const [answer] = takeAnswers();
		expect(answer.statusCode).toBe(400);
		expect(JSON.parse(answer.body)).toEqual({
			type: `${CLIENT_ERROR_DOCS}#invalid-idempotency-key`,
			title: 'The Idempotency-Key header is missing or malformed',
			status: 400,
			detail: expect.stringMatching(/Idempotency-Key header is missing/),
		});
		expect(result.output(reserve.name, 0)).toEqual([]);
	});

	test("keys are scoped by the token's subject, as it is (any text, ':' included): two callers, one key value, two keys", async () => {
		const headers = { 'idempotency-key': '"order-42"' };
		const keys = [];
		for (const sub of ['alice', 'bob', 'tenant:7/user 1'])
			keys.push(
				(await run(request({ sku: 'A' }, headers, sub))).output(reserve.name, 0)[0].json.idempotency
					.key,
			);
		expect(keys).toEqual([
			'orders-alice:idk:order-42',
			'orders-bob:idk:order-42',
			'orders-tenant%3A7%2Fuser%201:idk:order-42',
		]);
		// Nothing secret is stored: the rows hold the subject, not a credential or a hash of one.
		const { rows } = await db.query(`SELECT key FROM processed_events WHERE key LIKE 'orders-%'`);
		expect(rows.map((row) => row.key).sort()).toEqual([...keys].sort());
	});

	test('the same key while the first runs: 409 of type in-flight; with another body: 422 of kind fingerprint-mismatch', async () => {
		const headers = { 'idempotency-key': '"order-409"' };
		const first = await run(request({ sku: 'A' }, headers, 'carol'));
		expect(first.output(reserve.name, 0)).toHaveLength(1);
		takeAnswers();
		await run(request({ sku: 'A' }, headers, 'carol'));
		const [inFlight] = takeAnswers();
		expect([inFlight.node, inFlight.statusCode, inFlight.headers['content-type']]).toEqual([
			'Respond 409',
			409,
			'application/problem+json',
		]);
		expect(Number(inFlight.headers['retry-after'])).toBeGreaterThan(0);
		expect(JSON.parse(inFlight.body)).toEqual({
			type: `${CLIENT_ERROR_DOCS}#in-flight`,
			title: 'A request with this Idempotency-Key is still being processed',
			status: 409,
			detail: `Retry after ${inFlight.headers['retry-after']} seconds with the same key.`,
		});
		await run(request({ sku: 'A', qty: 99 }, headers, 'carol'));
		const [reused] = takeAnswers();
		expect([reused.node, reused.statusCode, reused.headers['content-type']]).toEqual([
			'Respond 422',
			422,
			'application/problem+json',
		]);
		expect(JSON.parse(reused.body)).toEqual({
			type: `${CLIENT_ERROR_DOCS}#fingerprint-mismatch`,
			title: 'The idempotency key was used with another payload',
			status: 422,
			detail: expect.stringMatching(/different body/),
		});
	});
});
