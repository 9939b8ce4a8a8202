// Verify Webhook Signature through n8n-core's WorkflowExecute: routing, rotation, several
// signatures in one header, the raw body, and each "On Error" setting. No database is involved.
const { describe, test, expect } = require('@jest/globals');
const { createHash } = require('node:crypto');
const { runWorkflow } = require('../support/engine');
const { PROVIDERS, nowSeconds } = require('../support/providerVectors');
const { expectedDigest, sha256Hex, webhookItem } = require('../support/webhookItems');
const { PROVIDERS: TABLE } = require('../../dist/nodes/shared/webhook/providers');
const verifyWorkflow = require('../fixtures/verify.workflow.json');
const { signAs } = require('../support/signAs');

const NODE = 'Verify Webhook Signature';
const VALID = 0;
const INVALID = 1;
const stripeKit = PROVIDERS.stripe;
const NEW_SECRET = 'whsec_engine_new_secret_0123456789';
const OLD_SECRET = 'whsec_engine_old_secret_9876543210';

/**
 * @param {object} body
 * @param {{ secret?: string, timestamp?: number, kit?: { sign: Function } }} [options]
 */
async function signedItem(body, { secret = NEW_SECRET, timestamp, kit = stripeKit } = {}) {
	const raw = JSON.stringify(body);
	return webhookItem({ body, rawBody: raw, headers: await kit.sign(raw, { secret, timestamp }) });
}

/**
 * @param {object[]} items
 * @param {{ credential?: { secret: string, previousSecret?: string }, parameters?: object,
 *   onError?: string }} [options]
 */
async function verify(
	items,
	{ credential = { secret: NEW_SECRET }, parameters = {}, onError } = {},
) {
	return await runWorkflow(verifyWorkflow, items, {
		credentialsByType: { webhookSigningSecretApi: credential },
		nodeOverrides: { [NODE]: { parameters, ...(onError ? { onError } : {}) } },
	});
}

const routed = (run, output) =>
	run.output(NODE, output).map((item) => [item.pairedItem.item, item.json.signature]);

/** The raw bytes of an item, as its sender signed them. */
const bytesOf = (item) => Buffer.from(item.binary.data.data, 'base64');
/** A valid verdict on a delivery whose scheme signs the raw body alone: its SHA-256 is the digest. */
const validRaw = (item, provider = 'stripe') => ({
	valid: true,
	provider,
	digest: `sha256:${sha256Hex(bytesOf(item))}`,
});

test('a signed delivery goes to valid, unchanged apart from `signature`, binary kept', async () => {
	const item = await signedItem({ id: 'evt_ok', type: 'charge.succeeded' });
	const run = await verify([item]);
	expect(run.status).toBe('success');
	expect(run.outputCount(NODE)).toBe(2);
	const [out] = run.output(NODE, VALID);
	expect(out.json).toEqual({ ...item.json, signature: validRaw(item) });
	expect(out.binary.data.data).toBe(item.binary.data.data);
	expect(run.output(NODE, INVALID)).toEqual([]);
});

test('each item is routed on its own, with pairedItem and the reason', async () => {
	const forged = await signedItem({ id: 'evt_forged' }, { secret: 'whsec_attacker' });
	const stale = await signedItem({ id: 'evt_stale' }, { timestamp: nowSeconds() - 600 });
	const unsigned = webhookItem({ body: { id: 'evt_unsigned' } });
	const tampered = await signedItem({ id: 'evt_tampered', amount: 1 });
	tampered.binary.data.data = Buffer.from(
		JSON.stringify({ id: 'evt_tampered', amount: 9 }),
	).toString('base64');
	const items = [
		await signedItem({ id: 'evt_1' }),
		forged,
		stale,
		unsigned,
		tampered,
		await signedItem({ id: 'evt_2' }),
	];
	const run = await verify(items);
	expect(routed(run, VALID)).toEqual([
		[0, validRaw(items[0])],
		[5, validRaw(items[5])],
	]);
	expect(routed(run, INVALID)).toEqual([
		[1, { valid: false, provider: 'stripe', reason: 'mismatch' }],
		[2, { valid: false, provider: 'stripe', reason: 'timestamp_out_of_tolerance' }],
		[3, { valid: false, provider: 'stripe', reason: 'missing_header' }],
		[4, { valid: false, provider: 'stripe', reason: 'mismatch' }],
	]);
});

test('rotation: a delivery signed with the old secret is valid while the old one is the previous secret', async () => {
	const item = await signedItem({ id: 'evt_rotated' }, { secret: OLD_SECRET });
	const both = await verify([item], {
		credential: { secret: NEW_SECRET, previousSecret: OLD_SECRET },
	});
	expect(routed(both, VALID)).toEqual([[0, validRaw(item)]]);
	const newOnly = await verify([item], { credential: { secret: NEW_SECRET, previousSecret: '' } });
	expect(routed(newOnly, INVALID)).toEqual([
		[0, { valid: false, provider: 'stripe', reason: 'mismatch' }],
	]);
});

test('several signatures in one header (Stripe signs with both secrets during a rotation)', async () => {
	const raw = JSON.stringify({ id: 'evt_two_sigs' });
	const t = nowSeconds();
	const v1 = async (secret) =>
		(await stripeKit.sign(raw, { secret, timestamp: t }))['stripe-signature'].split(',v1=')[1];
	const header = `t=${t},v1=${await v1('whsec_unrelated')},v1=${await v1(NEW_SECRET)}`;
	const item = webhookItem({
		body: JSON.parse(raw),
		rawBody: raw,
		headers: { 'Stripe-Signature': header },
	});
	const run = await verify([item]);
	expect(routed(run, VALID)).toEqual([[0, validRaw(item)]]);
});

test('standard webhooks: the whsec_ secret is decoded; svix with its own headers', async () => {
	for (const provider of ['standardWebhooks', 'svix']) {
		const kit = PROVIDERS[provider];
		const item = await signedItem({ id: `evt_${provider}` }, { kit, secret: kit.secret });
		const run = await verify([item], {
			credential: { secret: kit.secret },
			parameters: { provider },
		});
		// They sign their id header too, but the key reads that header itself: the digest leaves signed
		// headers out (some senders renew theirs per attempt), so here it is the raw body's SHA-256.
		const digest = expectedDigest(
			TABLE.find(({ value }) => value === provider),
			{ rawBody: bytesOf(item), headers: item.json.headers },
		);
		expect(digest).toBe(`sha256:${createHash('sha256').update(bytesOf(item)).digest('hex')}`);
		expect(routed(run, VALID)).toEqual([[0, { valid: true, provider, digest }]]);
	}
});

test('generic HMAC from the node parameters', async () => {
	const raw = '{"hello":"world"}';
	const { createHmac } = require('node:crypto');
	const t = nowSeconds();
	const signature = `sha512=${createHmac('sha512', 'plain-secret').update(`${t}.${raw}`).digest('base64')}`;
	const item = webhookItem({
		body: JSON.parse(raw),
		rawBody: raw,
		headers: { 'x-acme-signature': signature, 'x-acme-time': String(t) },
	});
	const parameters = {
		provider: 'hmac',
		signatureHeader: 'X-Acme-Signature',
		algorithm: 'sha512',
		encoding: 'base64',
		signaturePrefix: 'sha512=',
		timestampHeader: 'X-Acme-Time',
	};
	const run = await verify([item], { credential: { secret: 'plain-secret' }, parameters });
	// Its timestamp is left out of the digest: the raw body alone is signed besides it.
	expect(routed(run, VALID)).toEqual([[0, validRaw(item, 'hmac')]]);
	const wrongAlgorithm = await verify([item], {
		credential: { secret: 'plain-secret' },
		parameters: { ...parameters, algorithm: 'sha256' },
	});
	expect(routed(wrongAlgorithm, INVALID)).toEqual([
		[0, { valid: false, provider: 'hmac', reason: 'malformed' }],
	]);
});

describe('no raw body (Raw Body off in the Webhook node)', () => {
	const items = async () => [
		await signedItem({ id: 'evt_fine' }),
		webhookItem({
			body: { id: 'evt_no_raw' },
			headers: { 'stripe-signature': `t=${nowSeconds()},v1=${'a'.repeat(64)}` },
			withRawBody: false,
		}),
		await signedItem({ id: 'evt_forged' }, { secret: 'whsec_attacker' }),
	];

	test('stops the workflow with the item index and the hint to turn on Raw Body', async () => {
		const run = await verify(await items());
		expect(run.status).toBe('error');
		expect(run.error.name).toBe('NodeOperationError');
		expect(run.error.message).toMatch(/no raw body/);
		expect(run.error.context.itemIndex).toBe(1);
		expect(run.error.description).toMatch(/Raw Body/);
	});

	test('continue: the error item goes to invalid, never to valid', async () => {
		const run = await verify(await items(), { onError: 'continueRegularOutput' });
		expect(run.status).toBe('success');
		const [fine] = await items();
		expect(routed(run, VALID)).toEqual([[0, validRaw(fine)]]);
		const invalid = run.output(NODE, INVALID);
		expect(invalid.map((item) => item.pairedItem.item)).toEqual([1, 2]);
		expect(invalid[0].json.error).toMatch(/no raw body/);
		expect(invalid[0].json.signature).toBeUndefined();
		expect(invalid[1].json.signature.reason).toBe('mismatch');
	});

	test('continue using error output: the error item goes to the error output', async () => {
		const run = await verify(await items(), { onError: 'continueErrorOutput' });
		expect(run.status).toBe('success');
		expect(run.outputCount(NODE)).toBe(3);
		expect(run.output(NODE, VALID).map((item) => item.pairedItem.item)).toEqual([0]);
		expect(run.output(NODE, INVALID).map((item) => item.pairedItem.item)).toEqual([2]);
		const errors = run.output(NODE, 2);
		expect(errors).toHaveLength(1);
		expect(errors[0].json.error).toMatch(/no raw body/);
	});
});

describe('a secret that cannot be used (not whsec_ base64 for Standard Webhooks)', () => {
	const secret = 'whsec_!!not base64 at all: hunter2!!';
	const run = async (onError) =>
		await verify(
			[
				await signedItem(
					{ id: 'evt_a' },
					{ kit: PROVIDERS.standardWebhooks, secret: PROVIDERS.standardWebhooks.secret },
				),
			],
			{
				credential: { secret },
				parameters: { provider: 'standardWebhooks' },
				onError,
			},
		);

	test('fails the node with a message that names the field, never the secret', async () => {
		const result = await run();
		expect(result.status).toBe('error');
		expect(result.error.message).toMatch(/secret is not a Standard Webhooks secret/);
		expect(result.error.description).toMatch(/Webhook Signing Secret credential/);
		expect(JSON.stringify(result.run)).not.toContain('hunter2');
	});

	test.each(['continueRegularOutput', 'continueErrorOutput'])(
		'%s: every item is an error item, none is valid',
		async (onError) => {
			const result = await run(onError);
			expect(result.status).toBe('success');
			expect(result.output(NODE, VALID)).toEqual([]);
			const errors = result.output(NODE, onError === 'continueErrorOutput' ? 2 : INVALID);
			expect(errors.map((item) => item.pairedItem.item)).toEqual([0]);
			expect(JSON.stringify(result.run)).not.toContain('hunter2');
		},
	);
});

test('generic HMAC without a header name fails the node with a hint, before any item is judged', async () => {
	const run = await verify([await signedItem({ id: 'evt_h' })], {
		parameters: { provider: 'hmac', signatureHeader: ' ' },
	});
	expect(run.status).toBe('error');
	expect(run.error.message).toBe('Signature Header is empty');
	expect(run.error.description).toBeTruthy();
});

test('no secret in the output of any run', async () => {
	const items = [
		await signedItem({ id: 'evt_s1' }),
		await signedItem({ id: 'evt_s2' }, { secret: OLD_SECRET }),
	];
	const run = await verify(items, {
		credential: { secret: NEW_SECRET, previousSecret: OLD_SECRET },
	});
	const recorded = JSON.stringify(run.run);
	expect(recorded).not.toContain(NEW_SECRET);
	expect(recorded).not.toContain(OLD_SECRET);
});

describe('a valid signature under a media type its sender does not use, or a body n8n read otherwise', () => {
	/** A Stripe delivery signed over `raw`, its item's Content-Type and `$json.body` as given. */
	const delivery = async (raw, { contentType, body = JSON.parse(raw) }) => {
		const item = webhookItem({
			body,
			rawBody: raw,
			headers: await stripeKit.sign(raw, { secret: NEW_SECRET }),
		});
		item.json.headers['content-type'] = contentType;
		return item;
	};
	const raw = '{"id":"evt_media","amount":1}';

	test('continue: a 415 item error on invalid, the honest delivery valid next to it', async () => {
		const items = [
			await delivery(raw, { contentType: 'application/json' }),
			await delivery(raw, { contentType: 'text/plain', body: raw }),
			await delivery(raw, { contentType: 'application/json; charset=iso-8859-1' }),
			await delivery(raw, {
				contentType: 'application/json',
				body: { id: 'evt_media', amount: 9 },
			}),
			await delivery(raw, { contentType: 'Application/JSON; charset="UTF-8"' }),
		];
		const run = await verify(items, { onError: 'continueRegularOutput' });
		expect(run.status).toBe('success');
		expect(routed(run, VALID)).toEqual([
			[0, validRaw(items[0])],
			[4, validRaw(items[4])],
		]);
		const refused = run.output(NODE, INVALID);
		expect(refused.map((item) => item.pairedItem.item)).toEqual([1, 2, 3]);
		for (const item of refused) {
			expect(item.json.signature).toBeUndefined();
			expect(item.json.details).toMatchObject({ kind: 'unsupported-media-type', status: 415 });
		}
		expect(refused[0].json.error).toMatch(
			/Stripe sends application\/json or any \+json media type \(RFC 6839\); this delivery's Content-Type is "text\/plain"/,
		);
		expect(refused[1].json.error).toMatch(/charset "iso-8859-1"/);
		expect(refused[2].json.error).toMatch(/n8n read this application\/json body differently/);
	});

	test('continue using error output: the refusal goes to the error output', async () => {
		const item = await delivery(raw, {
			contentType: 'application/x-www-form-urlencoded',
			body: {},
		});
		const run = await verify([item], { onError: 'continueErrorOutput' });
		expect(run.status).toBe('success');
		expect(run.output(NODE, VALID)).toEqual([]);
		expect(run.output(NODE, INVALID)).toEqual([]);
		const [error] = run.output(NODE, 2);
		expect(error.pairedItem).toEqual({ item: 0 });
		expect(error.json.details).toMatchObject({ kind: 'unsupported-media-type', status: 415 });
	});

	test('without On Error continue it stops the workflow with the item index', async () => {
		const run = await verify([
			await delivery(raw, { contentType: 'application/json' }),
			await delivery(raw, { contentType: 'text/plain', body: raw }),
		]);
		expect(run.status).toBe('error');
		expect(run.error.message).toMatch(/Content-Type is "text\/plain"/);
		expect(run.error.context.itemIndex).toBe(1);
	});
});

describe("Tolerance: Verify 1.1 takes the provider's own at 0, Verify 1 keeps its 300", () => {
	// Linear's own library allows 60 s; its timestamp is in the signed body.
	const linear = TABLE.find(({ value }) => value === 'linear');
	const secret = 'linear-signing-secret';
	const itemAged = (seconds) => {
		const body = { type: 'Issue', action: 'create', data: { id: 'i1' } };
		const signed = signAs(linear, { body, secret, nowSeconds: nowSeconds() - seconds });
		return webhookItem({
			body: JSON.parse(signed.body.toString()),
			rawBody: signed.body,
			headers: signed.headers,
		});
	};
	const run = async (items, typeVersion, toleranceSeconds) =>
		await runWorkflow(verifyWorkflow, items, {
			credentialsByType: { webhookSigningSecretApi: { secret } },
			nodeOverrides: {
				[NODE]: { typeVersion, parameters: { provider: 'linear', toleranceSeconds } },
			},
		});

	test('0 on Verify 1.1: 30 s old is valid, 120 s old is out of tolerance', async () => {
		const fresh = itemAged(30);
		const old = itemAged(120);
		const result = await run([fresh, old], 1.1, 0);
		expect(result.status).toBe('success');
		// Linear renews its body timestamp per attempt: the digest is of the body without it.
		const digest = expectedDigest(linear, { rawBody: bytesOf(fresh), headers: fresh.json.headers });
		expect(digest).toMatch(/^signed:[0-9a-f]{64}$/);
		expect(routed(result, VALID)).toEqual([[0, { valid: true, provider: 'linear', digest }]]);
		expect(routed(result, INVALID)).toEqual([
			[1, { valid: false, provider: 'linear', reason: 'timestamp_out_of_tolerance' }],
		]);
	});

	test('Verify 1 with its 300: the 120 s old delivery is valid', async () => {
		const result = await run([itemAged(120)], 1, 300);
		expect(routed(result, VALID).map(([index, { valid }]) => [index, valid])).toEqual([[0, true]]);
	});
});

describe('a URL-signing scheme whose $json.query holds a value that is not text', () => {
	const { VECTORS } = require('../vectors');
	const { deliveryItem } = require('../support/webhookItems');
	const { verifiableFrom } = require('../../dist/nodes/shared/webhook/providers');
	const urlSigners = verifiableFrom(TABLE).filter(
		({ signing }) => 'signs' in signing && signing.signs.includes('{url}'),
	);

	test('the table has URL-signing senders (Square, HubSpot, Twilio among them)', () => {
		expect(urlSigners.map(({ value }) => value)).toEqual(
			expect.arrayContaining(['square', 'hubSpot', 'twilio']),
		);
	});

	test.each(
		/** @type {Array<[string, any]>} */ (
			urlSigners.map((/** @type {any} */ provider) => [provider.value, provider])
		),
	)(
		'%s: malformed (`?role[admin]=true` arrives as an object), never checked without it',
		async (value, provider) => {
			const vector = VECTORS[value];
			const delivery = await vector.genuine();
			const itemWith = (query) => {
				const item = deliveryItem(provider, {
					rawBody: Buffer.from(delivery.body),
					headers: Object.fromEntries(
						Object.entries(delivery.headers).map(([n, v]) => [n.toLowerCase(), v]),
					),
				});
				const parts = new URL(delivery.url);
				item.json.webhookUrl = `${parts.origin}${parts.pathname}`;
				item.json.query = { ...Object.fromEntries(parts.searchParams), ...query };
				return item;
			};
			const age = Math.abs(nowSeconds() - delivery.nowSeconds);
			const result = await runWorkflow(
				verifyWorkflow,
				[itemWith({}), itemWith({ role: { admin: 'true' } })],
				{
					credentialsByType: { webhookSigningSecretApi: { secret: vector.secret } },
					nodeOverrides: {
						[NODE]: { parameters: { provider: value, toleranceSeconds: age + 300 } },
					},
				},
			);
			expect(result.status).toBe('success');
			expect(routed(result, VALID).map(([index]) => index)).toEqual([0]);
			expect(routed(result, INVALID)).toEqual([
				[1, { valid: false, provider: value, reason: 'malformed' }],
			]);
		},
	);
});
