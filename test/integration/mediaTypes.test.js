// No honest media type refused (docs/signatures.md, "Media types"), through n8n-core's
// WorkflowExecute and a real PostgreSQL, in Reserve (verifying) and Verify Webhook Signature:
// - a sender of JSON under a structured-syntax `+json` type (RFC 6839): taken, read as JSON; n8n's
//   Webhook node parses only application/json and leaves `$json.body` empty, so the node fills it
//   from the signed bytes and the preset's id is read from them;
// - Generic HMAC takes the media types the user lists (text/plain, any +json), JSON by default;
// - anything else is still 415 (unsupported-media-type) naming what was expected and what came,
//   nothing reserved.
const { describe, test, expect } = require('@jest/globals');
const { createHmac } = require('node:crypto');
const { useTestDatabase } = require('../support/database');
const { registerTestNode, runWorkflow } = require('../support/engine');
const { signDelivery, signerFor } = require('../support/signDelivery');
const { reserveNode, verifyNode, RESERVE, VERIFY } = require('../support/signatureNodes');
const { webhookItem } = require('../support/webhookItems');
const { PROVIDERS } = require('../../dist/nodes/shared/webhook/providers');
const { STRUCTURED_JSON } = require('../../dist/nodes/shared/webhook/signedParse');

const db = useTestDatabase();

registerTestNode('afterMediaType', async function () {
	return [this.getInputData()];
});

/** @type {any} */
const STRIPE = PROVIDERS.find(({ value }) => value === 'stripe');

function workflowFor(node, outputCount) {
	const after = Array.from({ length: outputCount }, (_, index) => ({
		id: `after-${index}`,
		name: `After ${index}`,
		type: 'test.afterMediaType',
		typeVersion: 1,
		position: [300, index * 100],
		parameters: {},
	}));
	return {
		name: `${node.name} (media types)`,
		nodes: [{ ...node, onError: 'continueErrorOutput' }, ...after],
		connections: {
			[node.name]: { main: after.map(({ name }) => [{ node: name, type: 'main', index: 0 }]) },
		},
		settings: { executionOrder: 'v1' },
	};
}

/**
 * A signed delivery as n8n's Webhook node emits it under `contentType`: `n8nBody` is what n8n's
 * parser made of it (undefined for a type it does not parse).
 */
function delivery(provider, signer, raw, contentType, n8nBody) {
	const bytes = Buffer.from(raw);
	const headers =
		provider === GENERIC
			? { 'x-signature': createHmac('sha256', GENERIC_SECRET).update(bytes).digest('hex') }
			: signDelivery(provider, signer, {
					bytes,
					headers: {},
					nowSeconds: Math.floor(Date.now() / 1000),
				});
	const item = webhookItem({ body: n8nBody, rawBody: bytes, headers });
	item.json.headers['content-type'] = contentType;
	item.binary.data.mimeType = contentType;
	if (n8nBody === undefined) delete item.json.body;
	return item;
}

/** Generic HMAC: SHA-256 hex of the body in X-Signature. */
const GENERIC = { value: 'hmac' };
const GENERIC_SECRET = 'generic-hmac-secret';

/** Each node, set to `provider` (Generic HMAC's settings in `parameters`), over `items`. */
async function through(which, provider, items, secret, parameters = {}) {
	const { node, outputs } =
		which === RESERVE
			? reserveNode(provider, {
					mode: 'simple',
					keySource: provider === 'stripe' ? 'stripe' : 'eventIdOrBodyHash',
					...parameters,
				})
			: verifyNode(provider);
	if (which === VERIFY) Object.assign(node.parameters, parameters);
	const run = await runWorkflow(workflowFor(node, outputs.count), items, {
		credentials: db.credential(),
		credentialsByType: { webhookSigningSecretApi: { secret } },
	});
	return { run, outputs, node: which };
}

async function keys() {
	const { rows } = await db.query(
		"SELECT to_regclass('public.processed_events') IS NOT NULL AS present",
	);
	if (!rows[0].present) return [];
	const found = await db.query('SELECT key FROM processed_events ORDER BY key');
	return found.rows.map(({ key }) => key);
}

/** The item errors of a run, on whichever output they went (n8n's error output included). */
const refusals = ({ run, node, outputs }) =>
	Array.from({ length: outputs.count + 1 }, (_, output) => run.output(node, output))
		.flat()
		.filter((item) => item.json.details !== undefined)
		.map((item) => [item.pairedItem.item, item.json.details.kind, item.json.error]);

describe.each([RESERVE, VERIFY])('through %s', (which) => {
	test('a Stripe event under application/cloudevents+json and application/vnd.api+json: taken as JSON, $json.body filled from the signed bytes', async () => {
		await db.query('DROP TABLE IF EXISTS processed_events');
		const signer = signerFor(STRIPE.signing);
		const events = ['evt_ce_1', 'evt_api_1'].map((id) => ({ id, type: 'invoice.paid' }));
		const items = [
			delivery(STRIPE, signer, JSON.stringify(events[0]), 'application/cloudevents+json'),
			// Another n8n might parse it one day: the same parse is taken too.
			delivery(
				STRIPE,
				signer,
				JSON.stringify(events[1]),
				'application/vnd.api+json; charset=utf-8',
				{},
			),
		];
		const result = await through(which, 'stripe', items, signer.secret);
		expect(result.run.status).toBe('success');
		const taken = result.run.output(which, 0);
		expect(taken.map((item) => [item.pairedItem.item, item.json.body])).toEqual([
			[0, events[0]],
			[1, events[1]],
		]);
		expect(refusals(result)).toEqual([]);
		// The preset's id is read from the signed body, as for application/json.
		expect(await keys()).toEqual(which === RESERVE ? ['evt:evt_api_1', 'evt:evt_ce_1'] : []);
	});

	test('bad input: text/plain, an unknown type, none: 415 naming what Stripe sends and what came; nothing reserved', async () => {
		await db.query('DROP TABLE IF EXISTS processed_events');
		const signer = signerFor(STRIPE.signing);
		const raw = JSON.stringify({ id: 'evt_bad_1', type: 'x' });
		const items = [
			delivery(STRIPE, signer, raw, 'text/plain', raw),
			delivery(STRIPE, signer, raw, 'application/xml'),
			delivery(STRIPE, signer, raw, 'application/json+xml'),
		];
		const result = await through(which, 'stripe', items, signer.secret);
		const expected = 'Stripe sends application/json or any +json media type (RFC 6839)';
		expect(refusals(result)).toEqual([
			[
				0,
				'unsupported-media-type',
				`${expected}; this delivery's Content-Type is "text/plain". The signature covers the bytes, not the Content-Type, so the body is not read under another media type`,
			],
			[
				1,
				'unsupported-media-type',
				expect.stringContaining(`${expected}; this delivery's Content-Type is "application/xml"`),
			],
			[2, 'unsupported-media-type', expect.stringContaining(`"application/json+xml"`)],
		]);
		expect(result.run.output(which, 0)).toEqual([]);
		expect(await keys()).toEqual([]);
	});

	test('Generic HMAC: text/plain and any +json once listed in Media Types; refused by default, naming JSON', async () => {
		await db.query('DROP TABLE IF EXISTS processed_events');
		const signer = { secret: GENERIC_SECRET };
		const hmac = { signatureHeader: 'X-Signature', algorithm: 'sha256', encoding: 'hex' };
		const text = 'order 42 shipped';
		const cloudEvent = JSON.stringify({ specversion: '1.0', id: 'ce-1', type: 'shipped' });
		const items = () => [
			delivery(GENERIC, signer, text, 'text/plain; charset=utf-8', text),
			delivery(GENERIC, signer, cloudEvent, 'application/cloudevents+json'),
		];
		const byDefault = await through(which, 'hmac', items(), signer.secret, hmac);
		expect(refusals(byDefault)).toEqual([
			[
				0,
				'unsupported-media-type',
				expect.stringMatching(
					/^Generic HMAC sends application\/json; this delivery's Content-Type is "text\/plain"/,
				),
			],
			[
				1,
				'unsupported-media-type',
				expect.stringMatching(
					/^Generic HMAC sends application\/json; this delivery's Content-Type is "application\/cloudevents\+json"/,
				),
			],
		]);
		expect(await keys()).toEqual([]);

		const listed = await through(which, 'hmac', items(), signer.secret, {
			...hmac,
			mediaTypes: ['text/plain', STRUCTURED_JSON],
		});
		expect(refusals(listed)).toEqual([]);
		expect(listed.run.output(which, 0).map((item) => item.json.body)).toEqual([
			text,
			JSON.parse(cloudEvent),
		]);
		expect(await keys()).toHaveLength(which === RESERVE ? 2 : 0);

		// JSON bytes sent as text/plain where JSON is listed too: read as JSON, never as text.
		const both = await through(
			which,
			'hmac',
			[delivery(GENERIC, signer, cloudEvent, 'text/plain', cloudEvent)],
			signer.secret,
			{
				...hmac,
				mediaTypes: ['application/json', 'text/plain'],
			},
		);
		expect(refusals(both)).toEqual([
			[
				0,
				'unsupported-media-type',
				expect.stringMatching(
					/^Generic HMAC sends application\/json; this delivery's Content-Type is "text\/plain"/,
				),
			],
		]);
	});
});
