// Reserve 2.2's Answer Problems, through n8n's engine and real PostgreSQL: behind a Webhook, Reserve
// answers a failure itself with the very answer the templates' "Respond 4xx or 500 (problem+json)"
// node gave on version 2.1's error output (test/fixtures/problemRespondNodes.json, the node as shipped
// until 2.2; test/support/respondProbe.js runs its expressions). Each case runs both ways side by
// side and compares status, headers and body. A sender's mistake: 4xx, no output, a hint, the
// execution a success; a failure on our side: 500, then the execution fails. Version 2.1, the
// parameter off, and a run without a Webhook keep the old behaviour.
const { describe, test, expect } = require('@jest/globals');
const { randomUUID } = require('node:crypto');
const { reserveOutputs } = require('../../dist/nodes/shared/reserveRules/reserveOutputs');
const { CLIENT_ERRORS } = require('../../dist/nodes/shared/keys/clientErrors');
const { useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { PROVIDERS } = require('../support/providerVectors');
const { takeAnswers } = require('../support/respondProbe');
const { webhookItem } = require('../support/webhookItems');
require('../support/webhookStandIn');
const RESPOND_NODES = require('../fixtures/problemRespondNodes.json');

const db = useTestDatabase();
const stripe = PROVIDERS.stripe;
const RESERVE = 'Idempotency Reserve';
const WEBHOOK = 'Webhook';

/** @param {number} typeVersion @param {Record<string, unknown>} parameters @param {object} [extra] */
const reserveNode = (typeVersion, parameters, extra = {}) => ({
	id: 'reserve',
	name: RESERVE,
	type: 'n8n-nodes-idempotency.idempotencyReserve',
	typeVersion,
	position: [200, 0],
	parameters: { schema: 'public', table: 'processed_events', createTable: true, ...parameters },
	credentials: {
		idempotencyPostgresApi: { id: '1', name: 'Idempotency Postgres' },
		webhookSigningSecretApi: { id: '2', name: 'Signing secret' },
	},
	...extra,
});

const webhookNode = {
	id: 'webhook',
	name: WEBHOOK,
	type: 'n8n-nodes-base.webhook',
	typeVersion: 2.1,
	position: [0, 0],
	parameters: { responseMode: 'responseNode' },
};

/** Version 2.2 behind a Webhook, no error output: Reserve answers. */
const answering = (parameters, extra = {}) => ({
	name: 'answering',
	nodes: [webhookNode, reserveNode(2.2, parameters, extra)],
	connections: { [WEBHOOK]: { main: [[{ node: RESERVE, type: 'main', index: 0 }]] } },
	settings: { executionOrder: 'v1' },
});

/** The Respond node of the template these parameters come from. */
const respondNodeFor = (parameters) =>
	parameters.keySource === 'idempotencyKeyHeader' ? RESPOND_NODES.api : RESPOND_NODES.webhook;

/** Version 2.1 as the templates shipped it: the error output answered by the Respond node. */
const withRespondNode = (parameters) => {
	const problemRespondNode = respondNodeFor(parameters);
	const errorOutput = reserveOutputs(parameters, 2.1).count;
	const main = Array.from({ length: errorOutput + 1 }, () => []);
	main[errorOutput] = [{ node: problemRespondNode.name, type: 'main', index: 0 }];
	return {
		name: 'respond node',
		nodes: [
			webhookNode,
			reserveNode(2.1, parameters, { onError: 'continueErrorOutput' }),
			{ ...problemRespondNode, id: 'respond', position: [400, 0] },
		],
		connections: {
			[WEBHOOK]: { main: [[{ node: RESERVE, type: 'main', index: 0 }]] },
			[RESERVE]: { main },
		},
		settings: { executionOrder: 'v1' },
	};
};

const runWith = async (workflow, item, credentials = db.credential()) =>
	await runWorkflow(workflow, [item], {
		credentials,
		credentialsByType: { webhookSigningSecretApi: { secret: stripe.secret } },
	});

/** Reserve's hints in the execution. */
const hintsOf = (result) =>
	(result.run.data.resultData.runData[RESERVE]?.[0]?.hints ?? []).map((hint) => hint.message);

/** The answer each way for the same failure: version 2.1's Respond node, then 2.2's Reserve. */
async function bothWays(parameters, itemFor, credentials) {
	takeAnswers();
	const before = await runWith(withRespondNode(parameters), await itemFor('v21'), credentials);
	const [old, ...moreOld] = takeAnswers();
	expect(moreOld).toEqual([]);
	expect(old.node).toBe(respondNodeFor(parameters).name);
	expect(before.ran(old.node)).toBe(true);
	const after = await runWith(answering(parameters), await itemFor('v22'), credentials);
	expect(takeAnswers()).toEqual([]);
	expect(after.webhookResponses).toHaveLength(1);
	const [answer] = after.webhookResponses;
	// The Respond node's answer and Reserve's, field for field and byte for byte.
	expect(answer).toEqual({ statusCode: old.statusCode, headers: old.headers, body: old.body });
	return { answer, problem: JSON.parse(answer.body), after };
}

const unsigned = { mode: 'lease', keySource: 'eventIdOrBodyHash', eventId: '={{ $json.body.id }}' };
const api = {
	mode: 'lease',
	keySource: 'idempotencyKeyHeader',
	fingerprint: 'rawBody',
	onMismatch: 'output',
	namespace: 'orders',
};

/** A client error answered by Reserve: the kind's status, no output, a hint, a successful execution. */
function expectClientError({ answer, problem, after }, kind) {
	expect(answer.statusCode).toBe(CLIENT_ERRORS[kind].status);
	expect(answer.headers).toEqual({ 'content-type': 'application/problem+json' });
	expect(problem.type).toMatch(new RegExp(`/docs/errors\\.md#${kind}$`));
	expect(problem.title).toBe(CLIENT_ERRORS[kind].title);
	expect(after.status).toBe('success');
	for (let output = 0; output < after.outputCount(RESERVE); output++)
		expect(after.output(RESERVE, output)).toEqual([]);
	expect(hintsOf(after).join('\n')).toMatch(
		new RegExp(`Answered ${answer.statusCode} problem\\+json`),
	);
}

describe('Reserve 2.2 answers problems itself behind a Webhook, as the Respond node did', () => {
	test('invalid-key: an id that is an object → 400, nothing reserved', async () => {
		const both = await bothWays(unsigned, () => webhookItem({ body: { id: { a: 1 } } }));
		expectClientError(both, 'invalid-key');
		expect(both.problem.detail).toMatch(/is an object, not a text or number/);
	});

	test('invalid-idempotency-key: no Idempotency-Key header → 400', async () => {
		const both = await bothWays(api, () => webhookItem({ body: { sku: 'A' } }));
		expectClientError(both, 'invalid-idempotency-key');
		expect(both.problem.detail).toMatch(/Idempotency-Key header is missing/);
	});

	test('invalid-fingerprint: the value the fingerprint is made of is missing → 400', async () => {
		const parameters = {
			...api,
			fingerprint: 'expression',
			fingerprintExpression: '={{ $json.body.order }}',
		};
		const both = await bothWays(parameters, () =>
			webhookItem({ body: {}, headers: { 'idempotency-key': `"${randomUUID()}"` } }),
		);
		expectClientError(both, 'invalid-fingerprint');
	});

	test('fingerprint-mismatch: a key reused with another body (On Mismatch: error) → 422', async () => {
		const parameters = { ...api, onMismatch: 'error' };
		// One key both ways, so the two answers can be compared byte for byte (the detail names it).
		const key = randomUUID();
		const itemFor = (sku) =>
			webhookItem({ body: { sku }, headers: { 'idempotency-key': `"${key}"` } });
		const first = await runWith(answering(parameters), itemFor('A'));
		expect(first.output(RESERVE, 0)).toHaveLength(1);
		const both = await bothWays(parameters, () => itemFor('B'));
		expectClientError(both, 'fingerprint-mismatch');
	});

	test('unsupported-media-type: a signed Stripe event sent as text/plain → 415', async () => {
		const parameters = { ...unsigned, signature: 'stripe', toleranceSeconds: 300 };
		const both = await bothWays(parameters, async (way) => {
			const raw = JSON.stringify({ id: `evt_415_${way}`, type: 'x' });
			const signed = await stripe.sign(raw, { secret: stripe.secret });
			return webhookItem({
				body: raw,
				rawBody: raw,
				headers: { ...signed, 'content-type': 'text/plain' },
			});
		});
		expectClientError(both, 'unsupported-media-type');
		const { rows } = await db.query(`SELECT key FROM processed_events WHERE key LIKE '%evt_415%'`);
		expect(rows).toEqual([]);
	});

	test('the key store unreachable (a wrong port) → 500 with a generic detail, then the execution fails', async () => {
		const unreachable = db.credential({ host: '127.0.0.1', port: 1 });
		const { answer, problem, after } = await bothWays(
			unsigned,
			(way) => webhookItem({ body: { id: `evt_down_${way}` } }),
			unreachable,
		);
		expect(answer.statusCode).toBe(500);
		expect(answer.headers).toEqual({ 'content-type': 'application/problem+json' });
		expect(problem).toEqual({
			type: 'about:blank',
			title: 'The request could not be processed',
			status: 500,
			detail: 'A failure on our side, not in your request. Retry later.',
		});
		expect(answer.body).not.toMatch(/127\.0\.0\.1|port|postgres|ECONNREFUSED/i);
		// The execution failed, with the whole error for the operator and the Error Workflow.
		expect(after.status).toBe('error');
		expect(after.nodeError(RESERVE)?.message).toMatch(/127\.0\.0\.1/);
	});

	test('the key store unreachable for a client that sends its own Idempotency-Key → 500 naming the key to retry with', async () => {
		const unreachable = db.credential({ host: '127.0.0.1', port: 1 });
		const { answer, problem, after } = await bothWays(
			api,
			() => webhookItem({ body: { sku: 'A' }, headers: { 'idempotency-key': '"order-down"' } }),
			unreachable,
		);
		expect(answer.statusCode).toBe(500);
		expect(problem.detail).toBe(
			'A failure on our side, not in your request. Retry with the same Idempotency-Key.',
		);
		expect(after.status).toBe('error');
	});

	test('an honest delivery is reserved and goes to new, nothing answered', async () => {
		const result = await runWith(answering(unsigned), webhookItem({ body: { id: 'evt_ok_22' } }));
		expect(result.webhookResponses).toEqual([]);
		expect(result.output(RESERVE, 0).map((item) => item.json.idempotency.key)).toEqual([
			'evt:evt_ok_22',
		]);
	});
});

describe('where Reserve does not answer: the behaviour of version 2.1', () => {
	const bad = () => webhookItem({ body: { id: { a: 1 } } });

	test('version 2.1 without an error output behind a Webhook: no answer, the node fails', async () => {
		const workflow = answering(unsigned);
		workflow.nodes[1] = reserveNode(2.1, unsigned);
		const result = await runWith(workflow, bad());
		expect(result.webhookResponses).toEqual([]);
		expect(result.status).toBe('error');
		expect(result.nodeError(RESERVE)?.message).toMatch(/is an object/);
	});

	test('Answer Problems off: no answer, the node fails', async () => {
		const result = await runWith(answering({ ...unsigned, answerProblems: false }), bad());
		expect(result.webhookResponses).toEqual([]);
		expect(result.status).toBe('error');
	});

	test('On Error set to continue (using error output): the error item goes there, no answer', async () => {
		const workflow = answering(unsigned, { onError: 'continueErrorOutput' });
		const result = await runWith(workflow, bad());
		expect(result.webhookResponses).toEqual([]);
		expect(result.status).toBe('success');
		const errorOutput = reserveOutputs(unsigned, 2.2).count;
		expect(result.output(RESERVE, errorOutput)[0].json.details.kind).toBe('invalid-key');
	});

	test('a Webhook that answers by itself (When Last Node Finishes): no answer from Reserve, the node fails', async () => {
		// n8n answers such a request itself: an answer from Reserve would be dropped, and a client
		// error ending as a success would be answered 200 by n8n.
		const workflow = answering(unsigned);
		workflow.nodes[0] = { ...webhookNode, parameters: { responseMode: 'lastNode' } };
		const result = await runWith(workflow, bad());
		expect(result.webhookResponses).toEqual([]);
		expect(result.status).toBe('error');
		expect(result.nodeError(RESERVE)?.message).toMatch(/is an object/);
	});

	test('no Webhook before Reserve (a queue consumer): no answer, the node fails', async () => {
		const workflow = {
			name: 'queue',
			nodes: [reserveNode(2.2, unsigned)],
			connections: {},
			settings: { executionOrder: 'v1' },
		};
		const result = await runWith(workflow, bad());
		expect(result.webhookResponses).toEqual([]);
		expect(result.status).toBe('error');
		expect(result.nodeError(RESERVE)?.message).toMatch(/is an object/);
	});
});
