// Senders proven by a shared secret instead of a signature (the provider table's `sharedSecret`:
// Microsoft Graph's value[].clientState, Okta's authorization header), through n8n-core's
// WorkflowExecute, in Reserve (Verify Signature set to the provider) and in Verify Webhook Signature,
// from their documented deliveries (test/vectors/platforms.js):
// - genuine → valid (Reserve reserves it once, keyed as the table says: Okta's eventId, Graph's
//   SHA-256 of the body as received);
// - a wrong secret, the secret missing, one of several clientStates wrong, an empty value[] →
//   invalid with the reason, nothing reserved, nothing on the valid side (the template answers 401);
// - the body is not integrity-protected: a changed body with the secret kept is valid, and a new key.
const { describe, test, expect } = require('@jest/globals');
const { useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { signDelivery, signerFor, withSharedSecret } = require('../support/signDelivery');
const { deliveryItem, sha256Hex } = require('../support/webhookItems');
const { PROVIDERS } = require('../../dist/nodes/shared/webhook/providers');
const { VECTORS } = require('../vectors');

const db = useTestDatabase();

const { RESERVE, reserveNode, verifyNode } = require('../support/signatureNodes');
/** @type {readonly any[]} */
const TABLE = PROVIDERS;
const GRAPH = TABLE.find(({ value }) => value === 'microsoftGraph');
const OKTA = TABLE.find(({ value }) => value === 'oktaEventHooks');

/** Runs the node alone (its outputs unwired) on the items; what each output holds, by item index. */
async function through(build, provider, items, credential) {
	const { node, outputs } = build(provider.value, { keySource: provider.value });
	const run = await runWorkflow(
		{ name: `${node.name} (shared secret)`, nodes: [node], connections: {}, settings: {} },
		items,
		{
			credentials: node.name === RESERVE ? db.credential() : undefined,
			credentialsByType: { webhookSigningSecretApi: credential },
		},
	);
	expect(run.status).toBe('success');
	const out = (index) =>
		run.output(node.name, index).map((item) => [item.pairedItem.item, item.json.signature]);
	return {
		run,
		valid: out(0),
		invalid: out(outputs.invalidSignature),
		keyed: run.output(node.name, 0).map((item) => item.json.idempotency?.key),
	};
}

async function keys() {
	const { rows } = await db.query(
		"SELECT to_regclass('public.processed_events') IS NOT NULL AS present",
	);
	if (!rows[0].present) return [];
	return (await db.query('SELECT key FROM processed_events ORDER BY key')).rows.map((r) => r.key);
}

/** The item n8n's Webhook node emits for these bytes, with the headers as sent. */
const item = (provider, body, headers) =>
	deliveryItem(provider, {
		rawBody: Buffer.from(body),
		headers: Object.fromEntries(Object.entries(headers).map(([n, v]) => [n.toLowerCase(), v])),
	});

/** @type {Array<[string, (provider: string, overrides?: object) => { node: any, outputs: any }]>} */
const NODES = [
	['Reserve', reserveNode],
	['Verify Webhook Signature', verifyNode],
];

describe.each(NODES)('Microsoft Graph through %s', (name, build) => {
	const vector = VECTORS.microsoftGraph;

	test('its documented notification: valid; Reserve keys it on SHA-256 of the body as received (Graph sends no id), once', async () => {
		await db.query('DROP TABLE IF EXISTS processed_events');
		const { body: bytes, headers } = await vector.genuine();
		const body = String(bytes);
		const digest = `sha256:${sha256Hex(Buffer.from(body))}`;
		const first = await through(build, GRAPH, [item(GRAPH, body, headers)], {
			secret: vector.secret,
		});
		// Verify carries the verdict on; Reserve hands on the new item with its key instead.
		expect(first.valid).toEqual([
			[0, name === 'Reserve' ? undefined : { valid: true, provider: 'microsoftGraph', digest }],
		]);
		expect(first.keyed).toEqual(name === 'Reserve' ? [digest] : [undefined]);
		expect(first.invalid).toEqual([]);
		expect(await keys()).toEqual(name === 'Reserve' ? [digest] : []);
	});

	test.each([
		['another secret', async () => String((await vector.genuine()).body), 'mismatch'],
		[
			"one of several clientStates wrong (a forged notification slipped into Microsoft's batch)",
			async () => {
				const json = JSON.parse(String((await vector.genuine()).body));
				json.value.push({ ...json.value[0], clientState: 'guessedClientValue', id: 'x' });
				return JSON.stringify(json);
			},
			'mismatch',
		],
		[
			'a notification without clientState',
			async () =>
				String((await vector.genuine()).body).replace('"clientState":"secretClientValue",', ''),
			'malformed',
		],
		['an empty value[]', async () => '{"value":[]}', 'malformed'],
	])('%s: invalid, nothing reserved, nothing valid', async (which, bodyOf, reason) => {
		await db.query('DROP TABLE IF EXISTS processed_events');
		const secret = which === 'another secret' ? vector.otherSecret : vector.secret;
		const result = await through(build, GRAPH, [item(GRAPH, await bodyOf(), {})], { secret });
		expect(result.valid).toEqual([]);
		expect(result.invalid).toEqual([[0, { valid: false, provider: 'microsoftGraph', reason }]]);
		expect(await keys()).toEqual([]);
	});

	test('the body is not protected: another resource with the right clientState is valid (read it from Graph)', async () => {
		await db.query('DROP TABLE IF EXISTS processed_events');
		const body = String((await vector.genuine()).body);
		const changed = body.replace('"changeType":"created"', '"changeType":"deleted"');
		const result = await through(build, GRAPH, [item(GRAPH, changed, {})], {
			secret: vector.secret,
		});
		expect(result.valid).toHaveLength(1);
	});

	test('the test signer puts the secret in every notification', async () => {
		await db.query('DROP TABLE IF EXISTS processed_events');
		const signer = signerFor(GRAPH.signing);
		const json = JSON.parse(String((await vector.genuine()).body));
		json.value.push({ ...json.value[0], id: 'second' });
		const bytes = withSharedSecret(GRAPH, signer.secret, json);
		const headers = signDelivery(GRAPH, signer, { bytes, headers: {}, nowSeconds: 0 });
		const result = await through(build, GRAPH, [item(GRAPH, bytes, headers)], {
			secret: signer.secret,
		});
		expect(result.valid).toHaveLength(1);
	});
});

describe.each(NODES)('Okta Event Hooks through %s', (name, build) => {
	const vector = VECTORS.oktaEventHooks;

	test('its delivery with the Authorization header: valid; Reserve keys it on eventId, once', async () => {
		await db.query('DROP TABLE IF EXISTS processed_events');
		const { body: bytes, headers } = await vector.genuine();
		const body = String(bytes);
		const digest = `sha256:${sha256Hex(Buffer.from(body))}`;
		const delivery = item(OKTA, body, headers);
		const first = await through(build, OKTA, [delivery, delivery], { secret: vector.secret });
		// Reserve: the second copy of the same delivery is no new event (not on the new output).
		expect(first.valid).toEqual(
			name === 'Reserve'
				? [[0, undefined]]
				: [
						[0, { valid: true, provider: 'oktaEventHooks', digest }],
						[1, { valid: true, provider: 'oktaEventHooks', digest }],
					],
		);
		expect(await keys()).toEqual(
			name === 'Reserve' ? [`oktaEventHooks:${JSON.parse(body).eventId}`] : [],
		);
	});

	test.each([
		['a wrong secret', { Authorization: 'my-shared-secret-but-not-yours' }, 'mismatch'],
		['"Bearer " before the secret', { Authorization: 'Bearer my-shared-secret' }, 'mismatch'],
		['no Authorization header', {}, 'missing_header'],
	])('%s: invalid, nothing reserved, nothing valid', async (_which, auth, reason) => {
		await db.query('DROP TABLE IF EXISTS processed_events');
		const { body: bytes, headers } = await vector.genuine();
		const body = String(bytes);
		const { Authorization: _dropped, ...rest } = headers;
		const result = await through(build, OKTA, [item(OKTA, body, { ...rest, ...auth })], {
			secret: vector.secret,
		});
		expect(result.valid).toEqual([]);
		expect(result.invalid).toEqual([[0, { valid: false, provider: 'oktaEventHooks', reason }]]);
		expect(await keys()).toEqual([]);
	});

	test("the header the user named (the credential's Shared Secret Header) replaces Authorization", async () => {
		await db.query('DROP TABLE IF EXISTS processed_events');
		const { body: bytes, headers } = await vector.genuine();
		const body = String(bytes);
		const { Authorization: secret, ...rest } = headers;
		const named = { ...rest, 'X-Okta-Auth': secret };
		const credential = { secret: vector.secret, headerName: 'X-Okta-Auth' };
		const ok = await through(build, OKTA, [item(OKTA, body, named)], credential);
		expect(ok.valid).toHaveLength(1);
		const unnamed = await through(build, OKTA, [item(OKTA, body, named)], {
			secret: vector.secret,
		});
		expect(unnamed.invalid).toEqual([
			[0, { valid: false, provider: 'oktaEventHooks', reason: 'missing_header' }],
		]);
	});

	test('the previous secret during a rotation is accepted too', async () => {
		await db.query('DROP TABLE IF EXISTS processed_events');
		const { body: bytes, headers } = await vector.genuine();
		const body = String(bytes);
		const result = await through(build, OKTA, [item(OKTA, body, headers)], {
			secret: 'the-new-shared-secret',
			previousSecret: vector.secret,
		});
		expect(result.valid).toHaveLength(1);
	});
});
