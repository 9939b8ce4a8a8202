// The answer-first built-in workflow stores what Reserve's Answer First stores
// (planner/builtIn/builtInDelivery.ts): its Stored Delivery node, evaluated with n8n-workflow's own
// expression engine, against the package's storedDeliveryOf and toStorableJson as the oracle, on any
// headers (secret ones, the sender's id and signed ones, odd case), body (secret fields at any depth,
// NUL, lone surrogates) and query (credential names), for every provider the built-in path expresses;
// over the record cap, nothing is stored. Event to Run reads a stored delivery back as it was.
const { describe, test, expect } = require('@jest/globals');
const fc = require('fast-check');

const { builtIn, settings, node } = require('../support/builtInWorkflow');
const {
	expressionsOf,
	isOneWholeExpression,
	storedExpressions,
} = require('../support/n8nExpressions');
const { storedDeliveryOf } = require('../../dist/nodes/shared/delivery/storedDelivery');
const { toStorableJson } = require('../../dist/nodes/shared/store/storableJson');
const { NEVER_STORED_HEADERS } = require('../../dist/nodes/shared/delivery/secretParts');

/** @type {string[]} */
const EXPRESSIBLE = builtIn.answerFirstProviders();
const OPTIONS = builtIn.ANSWER_FIRST_DEFAULTS;
/** The id n8nExpressions' Workflow carries: $workflow.id. */
const WORKFLOW_ID = 'expressions';

const workflowOf = (/** @type {string} */ provider) =>
	builtIn.builtInWorkflow(settings({ keySource: provider }), { provider, answerFirst: OPTIONS });

/** What the Stored Delivery node gives for this Webhook item: the jsonb text ('' when over the cap) and its size. */
function storedByWorkflow(/** @type {any} */ workflow, /** @type {any} */ webhookJson) {
	const stored = node(workflow, 'Stored Delivery');
	const evaluate = expressionsOf(workflow).evaluate;
	const [text, bytes] = stored.parameters.assignments.assignments.map((/** @type {any} */ a) =>
		evaluate('Stored Delivery', a.value, { json: {} }, { Webhook: { json: webhookJson } }),
	);
	return { text, bytes };
}

/** The package's: storedDeliveryOf with the headers Reserve names for this provider, as stored text. */
function storedByPackage(/** @type {string} */ provider, /** @type {any} */ webhookJson) {
	const names = builtIn.storedHeadersFor(settings({ keySource: provider }), provider);
	const outcome = storedDeliveryOf(webhookJson, names, { workflowId: WORKFLOW_ID });
	return 'delivery' in outcome ? toStorableJson(outcome.delivery) : '';
}

const headerName = fc.oneof(
	fc.constantFrom(
		'Content-Type',
		'content-type',
		'X-Slack-Signature',
		'X-Slack-Request-Timestamp',
		'Stripe-Signature',
		'X-GitHub-Delivery',
		'X-Shopify-Event-Id',
		'Authorization',
		'Cookie',
		'X-Api-Key',
		'X-Webhook-Secret',
		'webhook-id',
		'X-Zm-Request-Timestamp',
		'Linear-Delivery',
	),
	fc.string({ maxLength: 12 }),
);
const anyText = fc.string({ unit: 'binary', maxLength: 12 });
const secretishKey = fc.oneof(
	fc.constantFrom('token', 'verification_token', 'signature', 'value', 'clientState', 'type', 'id'),
	fc.string({ maxLength: 6 }),
);
const body = fc.letrec((tie) => ({
	value: fc.oneof(
		{ depthSize: 'small' },
		anyText,
		fc.integer(),
		fc.boolean(),
		fc.constant(null),
		fc.array(tie('value'), { maxLength: 3 }),
		fc.dictionary(secretishKey, tie('value'), { maxKeys: 4 }),
	),
})).value;
const query = fc.dictionary(
	fc.oneof(fc.constantFrom('token', 'access_token', 'key', 'sig', 'page', 'api-key', 'q'), anyText),
	anyText,
	{ maxKeys: 4 },
);
const webhookJson = fc.record({
	headers: fc.dictionary(headerName, fc.string({ maxLength: 10 }), { maxKeys: 6 }),
	params: fc.constant({}),
	query,
	body,
});

describe('Stored Delivery: the package stores the same', () => {
	test.each(EXPRESSIBLE)('%s: any headers, body and query', (provider) => {
		const workflow = workflowOf(provider);
		fc.assert(
			fc.property(webhookJson, (json) => {
				const { text } = storedByWorkflow(workflow, json);
				expect(text).toBe(storedByPackage(provider, json));
			}),
			{ numRuns: 60 },
		);
	});

	test('nothing secret is stored: signature and credential headers, secret body fields, credential query names', () => {
		const json = {
			headers: {
				'content-type': 'application/json',
				'x-slack-signature': 'v0=abc',
				'x-slack-request-timestamp': '1700000000',
				authorization: 'Bearer x',
				'x-webhook-secret': 's',
			},
			query: { token: 't', page: '2' },
			body: { token: 'legacy', type: 'event_callback', event: { verification_token: 'n' } },
		};
		const stored = JSON.parse(storedByWorkflow(workflowOf('slack'), json).text);
		expect(stored).toEqual({
			v: 1,
			headers: { 'content-type': 'application/json', 'x-slack-request-timestamp': '1700000000' },
			body: { type: 'event_callback', event: { verification_token: 'n' } },
			query: { page: '2' },
			workflowId: WORKFLOW_ID,
		});
		for (const header of NEVER_STORED_HEADERS) expect(stored.headers).not.toHaveProperty(header);
	});

	test('a NUL or a lone surrogate: stored in the wrapper jsonb takes, as the package stores it', () => {
		const json = { headers: {}, query: {}, body: { id: 'evt_1', note: 'a\u0000b\ud800' } };
		const { text } = storedByWorkflow(workflowOf('stripe'), json);
		expect(text).toBe(storedByPackage('stripe', json));
		expect(JSON.parse(text)).toHaveProperty(['$idempotencyJson']);
	});

	test('over the record cap (256 KiB in UTF-8 bytes): not stored, so answered last', () => {
		const workflow = workflowOf('stripe');
		for (const [fill, stored] of [
			['é'.repeat(120_000), true],
			['é'.repeat(140_000), false],
			['😀'.repeat(60_000), true],
			['😀'.repeat(70_000), false],
		]) {
			const json = { headers: {}, query: {}, body: { id: 'evt_big', fill } };
			const { text, bytes } = storedByWorkflow(workflow, json);
			expect([text !== '', text]).toEqual([stored, storedByPackage('stripe', json)]);
			expect(bytes).toBe(
				Buffer.byteLength(
					toStorableJson(
						JSON.parse(
							JSON.stringify({
								v: 1,
								headers: {},
								body: json.body,
								query: {},
								workflowId: WORKFLOW_ID,
							}),
						),
					),
					'utf8',
				),
			);
		}
	});
});

describe('Event to Run reads the stored delivery back', () => {
	const workflow = workflowOf('stripe');
	const event = node(workflow, 'Event to Run');
	const evaluate = expressionsOf(workflow).evaluate;
	const field = (/** @type {string} */ name, /** @type {any} */ claimRow) =>
		evaluate(
			'Event to Run',
			event.parameters.assignments.assignments.find((/** @type {any} */ a) => a.name === name)
				.value,
			{ json: claimRow },
		);

	test("a claimed key: its key, the claim's owner token, the stored body, headers and query; answered", () => {
		fc.assert(
			fc.property(webhookJson, (json) => {
				const text = storedByPackage('stripe', json);
				if (text === '') return;
				const stored = JSON.parse(text);
				const row = {
					outcome: 'claimed',
					key: 'evt:x',
					owner_token: 'redrive-1.abc',
					attempts: 2,
					delivery: stored,
				};
				const original = /** @type {any} */ (
					storedDeliveryOf(
						json,
						builtIn.storedHeadersFor(settings({ keySource: 'stripe' }), 'stripe'),
						{ workflowId: WORKFLOW_ID },
					)
				).delivery;
				expect(field('key', row)).toBe('evt:x');
				expect(field('ownerToken', row)).toBe('redrive-1.abc');
				expect(field('answered', row)).toBe(true);
				expect(field('body', row)).toEqual(original.body);
				expect(field('headers', row)).toEqual(original.headers);
				expect(field('query', row)).toEqual(original.query);
			}),
			{ numRuns: 60 },
		);
	});
});

test('every expression of every answer-first workflow is one whole {{ … }}: n8n cuts none short', () => {
	for (const provider of EXPRESSIBLE)
		for (const { at, text } of storedExpressions(workflowOf(provider)))
			expect([provider, at, isOneWholeExpression(text)]).toEqual([provider, at, true]);
});
