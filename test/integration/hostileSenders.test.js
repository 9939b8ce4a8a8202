// Two attacks by someone holding one genuine signed delivery, through n8n-core's WorkflowExecute and
// a real PostgreSQL. The multipart forgery: the captured body sent as a file part named `data` (which
// takes the raw body's place) next to form fields of the attacker's choosing, which n8n makes
// $json.body. The replay under a fresh delivery id: GitHub and Shopify sign neither their delivery id
// header nor a timestamp, so the same bytes and signature under a new id must still be a duplicate.
const { describe, test, expect } = require('@jest/globals');
const { randomUUID } = require('node:crypto');
const { useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { PROVIDERS: KITS } = require('../support/providerVectors');
const {
	FORM_MEDIA_TYPE,
	formFields,
	multipartItem,
	sha256Hex,
	webhookItem,
} = require('../support/webhookItems');
const completeWorkflow = require('../fixtures/complete.workflow.json');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');
const verifyWorkflow = require('../fixtures/verify.workflow.json');
const { PROVIDERS } = require('../../dist/nodes/shared/webhook/providers');
const { SIGNATURE_SCHEMES } = require('../../dist/nodes/shared/webhook/signatureSchemes');

const db = useTestDatabase();

const RESERVE = 'Idempotency Reserve';
const VERIFY = 'Verify Webhook Signature';
const LEASE = { new: 0, duplicate: 1, inFlight: 2, invalidSignature: 3 };
const SIMPLE = { new: 0, duplicate: 1, invalidSignature: 2 };

/** Reserve version 2 verifying with `signature`, keyed by `keySource`, the kit's secret in the credential. */
async function reserve(items, parameters, secret) {
	return await runWorkflow(reserveWorkflow, items, {
		credentials: db.credential(),
		credentialsByType: { webhookSigningSecretApi: { secret } },
		nodeOverrides: {
			[RESERVE]: {
				typeVersion: 2,
				parameters: { mode: 'lease', leaseSeconds: 60, ...parameters },
				credentials: {
					idempotencyPostgresApi: { id: '1', name: 'Idempotency Postgres' },
					webhookSigningSecretApi: { id: '2', name: 'Webhook Signing Secret' },
				},
			},
		},
	});
}

async function verify(items, provider, secret) {
	return await runWorkflow(verifyWorkflow, items, {
		credentialsByType: { webhookSigningSecretApi: { secret } },
		nodeOverrides: { [VERIFY]: { parameters: { provider } } },
	});
}

const routed = (run, node, output) =>
	run.output(node, output).map((item) => [item.pairedItem.item, item.json.signature]);

async function rows(where = 'true', values = []) {
	const { rows: found } = await db.query(
		`SELECT key FROM processed_events WHERE ${where} ORDER BY key`,
		values,
	);
	return found.map((row) => row.key);
}

/** A genuine delivery as its sender signs it: JSON, the exact bytes in the raw body. */
async function genuine(provider, body, extraHeaders = {}, id = undefined) {
	const kit = KITS[provider];
	const raw = JSON.stringify(body);
	const signed = await kit.sign(raw, { secret: kit.secret, ...(id === undefined ? {} : { id }) });
	const headers = { ...signed, ...extraHeaders };
	return { raw, headers, item: webhookItem({ body, rawBody: raw, headers }) };
}

describe('the multipart forgery: a captured signed body as a file part, forged form fields', () => {
	const forgedFrom = ({ raw, headers }) =>
		multipartItem({
			fields: { id: 'evt_forged', type: 'payout.paid' },
			file: raw,
			boundary: `----formdata-${randomUUID()}`,
			headers,
		});

	test('Verify: the forgery is invalid (unsigned_body), the honest delivery next to it valid', async () => {
		const captured = await genuine('stripe', { id: 'evt_captured', type: 'charge.succeeded' });
		const run = await verify([forgedFrom(captured), captured.item], 'stripe', KITS.stripe.secret);
		expect(run.status).toBe('success');
		expect(routed(run, VERIFY, 0)).toEqual([
			[1, { valid: true, provider: 'stripe', digest: `sha256:${sha256Hex(captured.raw)}` }],
		]);
		expect(routed(run, VERIFY, 1)).toEqual([
			[0, { valid: false, provider: 'stripe', reason: 'unsigned_body' }],
		]);
	});

	test('Reserve: the forgery goes to invalid signature and reserves nothing; the honest one is new', async () => {
		const captured = await genuine('stripe', { id: 'evt_captured_r', type: 'charge.succeeded' });
		const run = await reserve(
			[forgedFrom(captured), captured.item],
			{ signature: 'stripe', keySource: 'stripe' },
			KITS.stripe.secret,
		);
		expect(
			run
				.output(RESERVE, LEASE.invalidSignature)
				.map((item) => [item.pairedItem.item, item.json.signature, item.json.idempotency]),
		).toEqual([[0, { valid: false, provider: 'stripe', reason: 'unsigned_body' }, undefined]]);
		expect(
			run
				.output(RESERVE, LEASE.new)
				.map((item) => [item.pairedItem.item, item.json.idempotency.key]),
		).toEqual([[1, 'evt:evt_captured_r']]);
		expect(await rows('key LIKE $1', ['%evt_forged%'])).toEqual([]);
		expect(await rows('key LIKE $1', ['%evt_captured_r%'])).toEqual(['evt:evt_captured_r']);
	});

	test('multipart without any file part is refused too (not a 500 for a missing raw body)', async () => {
		const item = multipartItem({ fields: { id: 'evt_fields_only' }, file: '' });
		delete item.binary;
		const run = await reserve([item], { signature: 'github', keySource: 'github' }, 'x');
		expect(run.error).toBeUndefined();
		expect(routed(run, RESERVE, LEASE.invalidSignature)).toEqual([
			[0, { valid: false, provider: 'github', reason: 'unsigned_body' }],
		]);
	});

	test("an uploaded file in the raw body's place is refused whatever the content type says", async () => {
		const captured = await genuine('github', { action: 'opened' });
		const upload = webhookItem({
			body: { action: 'closed' },
			rawBody: captured.raw,
			headers: captured.headers,
		});
		upload.binary.data.fileName = 'body.json';
		const run = await verify([upload], 'github', KITS.github.secret);
		expect(routed(run, VERIFY, 1)).toEqual([
			[0, { valid: false, provider: 'github', reason: 'unsigned_body' }],
		]);
	});

	test('form-urlencoded (a Slack slash command) still verifies: n8n parses its body from the signed bytes', async () => {
		const kit = KITS.slack;
		const raw = 'token=x&team_id=T1&command=%2Fdeploy&text=prod&trigger_id=1.2.3';
		const headers = {
			'content-type': 'application/x-www-form-urlencoded',
			...(await kit.sign(raw, { secret: kit.secret })),
		};
		const item = webhookItem({ rawBody: raw, headers, mediaType: FORM_MEDIA_TYPE });
		expect(item.json.body).toEqual(formFields(raw));
		const run = await verify([item], 'slack', kit.secret);
		// Slack signs the raw body alone (its timestamp aside): the digest is the bytes' SHA-256.
		expect(routed(run, VERIFY, 0)).toEqual([
			[0, { valid: true, provider: 'slack', digest: `sha256:${sha256Hex(raw)}` }],
		]);
	});

	test('the same signed form read another way by n8n (nested brackets, or as text) is refused, 415', async () => {
		const kit = KITS.slack;
		const raw = 'token=x&user[name]=eve&user[role]=admin&text=prod';
		const signed = await kit.sign(raw, { secret: kit.secret });
		const form = { 'content-type': FORM_MEDIA_TYPE, ...signed };
		const items = [
			// What the signed bytes say: flat fields.
			webhookItem({ rawBody: raw, headers: form, mediaType: FORM_MEDIA_TYPE }),
			// A body parser that nests brackets: fields the sender never signed as such.
			webhookItem({
				body: { token: 'x', user: { name: 'eve', role: 'admin' }, text: 'prod' },
				rawBody: raw,
				headers: form,
				mediaType: FORM_MEDIA_TYPE,
			}),
			// The same bytes under a Content-Type the sender does not use.
			webhookItem({
				body: raw,
				rawBody: raw,
				headers: { ...signed, 'content-type': 'text/plain' },
			}),
		];
		const run = await runWorkflow(verifyWorkflow, items, {
			credentialsByType: { webhookSigningSecretApi: { secret: kit.secret } },
			nodeOverrides: {
				[VERIFY]: { parameters: { provider: 'slack' }, onError: 'continueRegularOutput' },
			},
		});
		expect(run.status).toBe('success');
		expect(routed(run, VERIFY, 0)).toEqual([
			[0, { valid: true, provider: 'slack', digest: `sha256:${sha256Hex(raw)}` }],
		]);
		const refused = run.output(VERIFY, 1);
		expect(
			refused.map((item) => [
				item.pairedItem.item,
				item.json.details?.kind,
				item.json.details?.status,
			]),
		).toEqual([
			[1, 'unsupported-media-type', 415],
			[2, 'unsupported-media-type', 415],
		]);
		expect(refused[0].json.error).toMatch(
			/n8n read this application\/x-www-form-urlencoded body differently/,
		);
		expect(refused[1].json.error).toMatch(
			/Slack sends application\/json or any \+json media type \(RFC 6839\) or application\/x-www-form-urlencoded; this delivery's Content-Type is "text\/plain"/,
		);
	});
});

/** @typedef {import('../../dist/nodes/shared/webhook/providers').ProviderDefinition} ProviderDefinition */

/** @param {ProviderDefinition} provider @returns {string | undefined} its id header, lower-cased */
const idHeaderOf = ({ eventId }) =>
	eventId.kind === 'headers' ? eventId.names[0].toLowerCase() : undefined;

/** @param {ProviderDefinition} provider whether its scheme leaves one of its id headers unsigned */
const signsNotItsIdHeader = ({ value, eventId }) =>
	eventId.kind === 'headers' &&
	eventId.names.some(
		(name) =>
			!SIGNATURE_SCHEMES[value].signedHeaders.some(
				(signed) => signed.toLowerCase() === name.toLowerCase(),
			),
	);

describe('the replay guard: a captured delivery under a fresh delivery id', () => {
	// The providers whose official library (or, for Slack and Shopify, documented algorithm) signs any
	// body in test/support/providerVectors.js; every provider's scheme is proven by test/vectors.
	/** @type {ReadonlyArray<ProviderDefinition>} */
	const table = PROVIDERS.filter(({ value }) => KITS[value] !== undefined);
	const headerPresets = table.filter((provider) => idHeaderOf(provider) !== undefined);
	/** Each preset whose id header its own scheme does not sign, from the provider table. */
	const unsignedIdProviders = table.filter(signsNotItsIdHeader);

	// Each header preset's id header changed on a genuine delivery: it still verifies exactly when the
	// table says the scheme does not sign it (the sender's own library signs the Standard Webhooks ids).
	test.each(headerPresets)(
		'$value: signedHeaders says whether a changed id header still verifies',
		async (provider) => {
			const { value } = provider;
			const idHeader = String(idHeaderOf(provider));
			const { item } = await genuine(
				value,
				{ probe: value },
				{ [idHeader]: 'original-id' },
				'original-id',
			);
			item.json.headers[idHeader] = 'changed-id';
			const run = await verify([item], value, KITS[value].secret);
			const stillValid = run.output(VERIFY, 0).length === 1;
			expect(stillValid).toBe(signsNotItsIdHeader(provider));
		},
	);

	test('at least one provider has an unsigned id header, so the guard below is exercised', () => {
		expect(unsignedIdProviders.length).toBeGreaterThan(0);
	});

	describe.each(unsignedIdProviders)('$value', (provider) => {
		const { value } = provider;
		const secret = KITS[value].secret;
		const idHeader = String(idHeaderOf(provider));
		const delivery = async (body) => await genuine(value, body, { [idHeader]: randomUUID() });
		const underNewId = ({ raw, headers }) =>
			webhookItem({
				body: JSON.parse(raw),
				rawBody: raw,
				headers: { ...headers, [idHeader]: randomUUID() },
			});

		test('the same signed bytes under a new id are a duplicate: one row, keyed on the signed content', async () => {
			const first = await delivery({ id: `${value}_replayed`, amount: 100 });
			const parameters = { mode: 'simple', signature: value, keySource: value };
			// The scheme signs the raw body alone: the signed content's digest is the bytes' SHA-256.
			const key = `sha256:${sha256Hex(first.raw)}`;
			const run = await reserve([first.item], parameters, secret);
			expect(run.output(RESERVE, SIMPLE.new).map((item) => item.json.idempotency)).toEqual([
				{ key, isNew: true, keyFrom: 'signedContent' },
			]);
			const replay = await reserve([underNewId(first)], parameters, secret);
			expect(replay.output(RESERVE, SIMPLE.new)).toEqual([]);
			expect(replay.output(RESERVE, SIMPLE.duplicate)[0].json.idempotency).toMatchObject({
				key,
				isNew: false,
				keyFrom: 'signedContent',
			});
			expect(await rows('key = $1', [key])).toEqual([key]);
		});

		test('lease mode: the replay waits as in flight, then is a duplicate once the first completes', async () => {
			const first = await delivery({ id: `${value}_lease`, amount: 7 });
			const parameters = { signature: value, keySource: value };
			const reserved = await reserve([first.item], parameters, secret);
			expect(reserved.output(RESERVE, LEASE.new)).toHaveLength(1);
			const during = await reserve([underNewId(first)], parameters, secret);
			expect(during.output(RESERVE, LEASE.new)).toEqual([]);
			expect(during.output(RESERVE, LEASE.inFlight)).toHaveLength(1);
			const completed = await runWorkflow(completeWorkflow, reserved.output(RESERVE, LEASE.new), {
				credentials: db.credential(),
			});
			expect(completed.error).toBeUndefined();
			const after = await reserve([underNewId(first)], parameters, secret);
			expect(after.output(RESERVE, LEASE.duplicate)[0].json.idempotency).toMatchObject({
				key: `sha256:${sha256Hex(first.raw)}`,
				status: 'completed',
			});
		});

		test('Replay Guard off: the documented cost, the same bytes under a new id are new again', async () => {
			const first = await delivery({ id: `${value}_unguarded` });
			const replay = underNewId(first);
			const parameters = {
				mode: 'simple',
				signature: value,
				keySource: value,
				options: { replayGuard: false },
			};
			const run = await reserve([first.item, replay], parameters, secret);
			const keys = run.output(RESERVE, SIMPLE.new).map((item) => item.json.idempotency);
			expect(keys).toEqual([
				{ key: `${value}:${first.headers[idHeader]}`, isNew: true },
				{ key: `${value}:${replay.json.headers[idHeader]}`, isNew: true },
			]);
		});
	});

	test('a provider that signs its id header keeps keying on it (Standard Webhooks: webhook-id)', async () => {
		const kit = KITS.standardWebhooks;
		const raw = JSON.stringify({ type: 'invoice.paid', amount: 5 });
		const id = `msg_${randomUUID()}`;
		const headers = await kit.sign(raw, { secret: kit.secret, id });
		const item = webhookItem({ body: JSON.parse(raw), rawBody: raw, headers });
		const parameters = {
			mode: 'simple',
			signature: 'standardWebhooks',
			keySource: 'standardWebhooks',
		};
		const run = await reserve([item], parameters, kit.secret);
		expect(run.output(RESERVE, SIMPLE.new).map((out) => out.json.idempotency)).toEqual([
			{ key: `standardWebhooks:${id}`, isNew: true },
		]);
		// The id is signed: the same bytes under another webhook-id do not verify at all.
		const renamed = webhookItem({
			body: JSON.parse(raw),
			rawBody: raw,
			headers: { ...headers, 'webhook-id': `msg_${randomUUID()}` },
		});
		const replay = await reserve([renamed], parameters, kit.secret);
		expect(routed(replay, RESERVE, SIMPLE.invalidSignature)).toEqual([
			[0, { valid: false, provider: 'standardWebhooks', reason: 'mismatch' }],
		]);
	});

	/** Reserve with Verify Signature: Don't Verify, keyed by the GitHub preset. */
	const reserveUnverified = async (items) =>
		await runWorkflow(reserveWorkflow, items, {
			credentials: db.credential(),
			nodeOverrides: {
				[RESERVE]: { typeVersion: 2, parameters: { mode: 'simple', keySource: 'github' } },
			},
		});

	test("Don't Verify with no verdict on the item: keyed on the unsigned header, and the item says so", async () => {
		const { item } = await genuine(
			'github',
			{ action: 'unverified' },
			{ 'x-github-delivery': 'd-1' },
		);
		const run = await reserveUnverified([item]);
		expect(run.output(RESERVE, SIMPLE.new).map((out) => out.json.idempotency)).toEqual([
			{ key: 'github:d-1', isNew: true, keyFrom: 'unsignedHeader' },
		]);
	});

	/** Verify Webhook Signature → Reserve (not verifying, GitHub preset) in one execution. */
	const verifyThenReserve = async (items) => {
		const [verifyNode] = verifyWorkflow.nodes;
		const [reserveNode] = reserveWorkflow.nodes;
		const workflow = {
			name: 'verify then reserve',
			nodes: [
				{ ...verifyNode, parameters: { ...verifyNode.parameters, provider: 'github' } },
				{
					...reserveNode,
					typeVersion: 2,
					position: [200, 0],
					parameters: { ...reserveNode.parameters, mode: 'simple', keySource: 'github' },
				},
			],
			connections: { [VERIFY]: { main: [[{ node: RESERVE, type: 'main', index: 0 }], []] } },
			settings: { executionOrder: 'v1' },
		};
		return await runWorkflow(workflow, items, {
			credentials: db.credential(),
			credentialsByType: { webhookSigningSecretApi: { secret: KITS.github.secret } },
		});
	};

	test("Don't Verify after Verify Webhook Signature: its verdict keeps the guard, a replay under a new id is a duplicate", async () => {
		const first = await genuine(
			'github',
			{ action: 'verified-before' },
			{ 'x-github-delivery': randomUUID() },
		);
		const replay = webhookItem({
			body: JSON.parse(first.raw),
			rawBody: first.raw,
			headers: { ...first.headers, 'x-github-delivery': randomUUID() },
		});
		const digest = `sha256:${sha256Hex(first.raw)}`;
		const run = await verifyThenReserve([first.item]);
		expect(routed(run, VERIFY, 0)).toEqual([[0, { valid: true, provider: 'github', digest }]]);
		expect(run.output(RESERVE, SIMPLE.new).map((out) => out.json.idempotency)).toEqual([
			{ key: digest, isNew: true, keyFrom: 'signedContent' },
		]);
		const again = await verifyThenReserve([replay]);
		expect(again.output(RESERVE, SIMPLE.new)).toEqual([]);
		expect(again.output(RESERVE, SIMPLE.duplicate).map((out) => out.json.idempotency)).toEqual([
			expect.objectContaining({ key: digest, isNew: false, keyFrom: 'signedContent' }),
		]);
		expect(await rows('key = $1', [digest])).toEqual([digest]);
	});

	test('a verdict Verify Webhook Signature did not make in this execution is refused, nothing reserved: the JSON of a trigger (or of an earlier execution) cannot choose the key', async () => {
		const captured = await genuine(
			'github',
			{ action: 'captured' },
			{ 'x-github-delivery': 'c-1' },
		);
		const digest = `sha256:${sha256Hex(captured.raw)}`;
		// Made by a Verify, but in another execution: what an attacker copies into a queue message.
		const verified = await verify([captured.item], 'github', KITS.github.secret);
		const [handedOn] = verified.output(VERIFY, 0);
		expect(handedOn.json.signature).toEqual({ valid: true, provider: 'github', digest });
		const forged = webhookItem({
			body: { action: 'forged' },
			headers: { 'x-github-delivery': 'c-2' },
		});
		for (const item of [
			handedOn,
			{ ...forged, json: { ...forged.json, signature: handedOn.json.signature } },
		]) {
			const run = await reserveUnverified([item]);
			expect(run.error?.message).toBe(
				'The item says its signature was verified, but no Verify Webhook Signature of this execution verified it',
			);
		}
		expect(await rows('key = $1 OR key LIKE $2', [digest, 'github:c-%'])).toEqual([]);
	});

	test('a verdict that is not one Verify Webhook Signature gives (invalid, or no digest) is no verdict', async () => {
		const claims = [
			{ valid: false, provider: 'github', reason: 'mismatch', digest: `sha256:${'0'.repeat(64)}` },
			{ valid: true, provider: 'github' },
			{ valid: true, provider: 'github', digest: 'sha256:not-a-digest' },
		];
		for (const [index, signature] of claims.entries()) {
			const id = `d-claim-${index}`;
			const { item } = await genuine('github', { action: 'claimed' }, { 'x-github-delivery': id });
			const run = await reserveUnverified([{ ...item, json: { ...item.json, signature } }]);
			expect(run.output(RESERVE, SIMPLE.new).map((out) => out.json.idempotency)).toEqual([
				{ key: `github:${id}`, isNew: true, keyFrom: 'unsignedHeader' },
			]);
		}
	});
});
