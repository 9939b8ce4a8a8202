// Every verifiable provider of the table through n8n-core's WorkflowExecute: Verify Webhook Signature,
// set to that provider, gets its test vector's genuine delivery (test/vectors) as the Webhook node
// emits it (headers, webhookUrl and query, the exact bytes as the raw body, the body parsed as the
// sender's media type), next to the same
// delivery with one byte changed, with its signature header removed, and checked with another secret.
// The providers come from the table: none is named here.
const { describe, test, expect } = require('@jest/globals');
const { runWorkflow } = require('../support/engine');
const { deliveryItem, expectedDigest, senderMediaType } = require('../support/webhookItems');
const verifyWorkflow = require('../fixtures/verify.workflow.json');
const { PROVIDERS, verifiableFrom } = require('../../dist/nodes/shared/webhook/providers');
const { VECTORS } = require('../vectors');

const NODE = 'Verify Webhook Signature';

/**
 * The item n8n's Webhook node emits for this delivery (Raw Body on). `parsedFrom`: the bytes n8n
 * parsed `$json.body` from (a changed byte changes the raw body only when the parse does not see it).
 * @param {any} provider
 * @param {{ body: string | Buffer, headers: Record<string, string>, url?: string }} delivery
 */
function itemOf(provider, { body, headers, url }) {
	const item = deliveryItem(provider, { rawBody: Buffer.from(body), headers: lowerCased(headers) });
	if (url !== undefined) {
		const parts = new URL(url);
		item.json.webhookUrl = `${parts.origin}${parts.pathname}`;
		item.json.query = Object.fromEntries(parts.searchParams);
	}
	return item;
}

const lowerCased = (headers) =>
	Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));

/** The body with its middle letter or digit changed. */
function changed(body) {
	const bytes = Buffer.from(body);
	for (let offset = 0; offset < bytes.length; offset++) {
		const i = (Math.floor(bytes.length / 2) + offset) % bytes.length;
		if (!/[A-Za-z0-9]/.test(String.fromCharCode(bytes[i]))) continue;
		const copy = Buffer.from(bytes);
		copy[i] = bytes[i] === 0x78 ? 0x79 : 0x78;
		return copy;
	}
	throw new Error('no letter or digit to change');
}

/** @type {Array<[string, any]>} the providers that sign */
const CASES = verifiableFrom(PROVIDERS)
	.filter((/** @type {any} */ provider) => !('sharedSecret' in provider.signing))
	.map((/** @type {any} */ provider) => [provider.value, provider]);
/** @type {Array<[string, any]>} the providers proven by a shared secret */
const SHARED_SECRET_CASES = verifiableFrom(PROVIDERS)
	.filter((/** @type {any} */ provider) => 'sharedSecret' in provider.signing)
	.map((/** @type {any} */ provider) => [provider.value, provider]);

describe.each(CASES)('%s through the engine', (value, provider) => {
	test('genuine → valid; changed byte, no signature header → invalid; another secret → all invalid', async () => {
		const vector = VECTORS[value];
		const delivery = await vector.genuine();
		const genuine = itemOf(provider, delivery);
		const tampered = itemOf(provider, { ...delivery, body: changed(delivery.body) });
		const unsigned = itemOf(provider, {
			...delivery,
			headers: Object.fromEntries(
				Object.entries(delivery.headers).filter(
					([name]) => name.toLowerCase() !== provider.signing.signatureHeaders[0].toLowerCase(),
				),
			),
		});
		// Documented examples carry the timestamp they were printed with: the tolerance covers it.
		const age = Math.abs(Math.floor(Date.now() / 1000) - delivery.nowSeconds);
		const run = async (secret, settings = {}) =>
			await runWorkflow(verifyWorkflow, [genuine, tampered, unsigned], {
				credentialsByType: { webhookSigningSecretApi: { secret } },
				nodeOverrides: {
					[NODE]: { ...settings, parameters: { provider: value, toleranceSeconds: age + 300 } },
				},
			});
		// A documented example may sign bytes that are none of its sender's media types (plain text):
		// the signature holds, and the body is refused as not sent the way its sender signs it.
		const plainText = senderMediaType(provider, delivery.body) === undefined;
		const ours = await run(vector.secret, plainText ? { onError: 'continueRegularOutput' } : {});
		expect(ours.status).toBe('success');
		const verdicts = (result, output) =>
			result.output(NODE, output).map((item) => [item.pairedItem.item, item.json.signature]);
		const invalid = [
			[1, { valid: false, provider: value, reason: 'mismatch' }],
			[2, { valid: false, provider: value, reason: 'missing_header' }],
		];
		if (plainText) {
			expect(verdicts(ours, 0)).toEqual([]);
			const [refused, ...rest] = ours.output(NODE, 1);
			expect(refused.pairedItem).toEqual({ item: 0 });
			expect(refused.json.signature).toBeUndefined();
			expect(refused.json.error).toMatch(
				/^The signed bytes are not valid application\/json in UTF-8/,
			);
			expect(refused.json.details).toMatchObject({ kind: 'unsupported-media-type', status: 415 });
			expect(rest.map((item) => [item.pairedItem.item, item.json.signature])).toEqual(invalid);
			// Without On Error continue, the refusal stops the run.
			const stopped = await run(vector.secret);
			expect(stopped.status).toBe('error');
			expect(stopped.nodeError(NODE)?.message).toMatch(/not valid application\/json/);
		} else {
			// The verdict carries the replay guard's digest: of the raw bytes, or of the retry-stable content.
			const digest = expectedDigest(provider, {
				rawBody: delivery.body,
				headers: delivery.headers,
				url: delivery.url,
			});
			expect(digest).toMatch(/^(sha256|signed):[0-9a-f]{64}$/);
			expect(verdicts(ours, 0)).toEqual([[0, { valid: true, provider: value, digest }]]);
			expect(verdicts(ours, 1)).toEqual(invalid);
		}
		const theirs = await run(vector.otherSecret);
		expect(verdicts(theirs, 0)).toEqual([]);
		expect(verdicts(theirs, 1).map(([index, { reason }]) => [index, reason])).toEqual([
			[0, 'mismatch'],
			[1, 'mismatch'],
			[2, 'missing_header'],
		]);
	});
});

/** The delivery without its secret: the header gone, or the first element's field removed. */
function withoutSecret(provider, delivery) {
	const location = provider.signing.sharedSecret;
	if (location.in === 'header')
		return {
			...delivery,
			headers: Object.fromEntries(
				Object.entries(delivery.headers).filter(
					([name]) => name.toLowerCase() !== location.header.toLowerCase(),
				),
			),
		};
	const json = JSON.parse(Buffer.from(delivery.body).toString('utf8'));
	delete location.array.reduce((value, step) => value[step], json)[0][location.field];
	return { ...delivery, body: JSON.stringify(json) };
}

// Graph and Okta sign nothing: the documented delivery is valid with the body's own hash as its
// digest; the secret missing is refused (missing_header for a header, malformed for a body field);
// another secret refuses everything. A changed body is NOT refused: nothing covers it.
describe.each(SHARED_SECRET_CASES)('%s (shared secret) through the engine', (value, provider) => {
	test('genuine → valid (body hash); secret missing → invalid; another secret → all invalid', async () => {
		const vector = VECTORS[value];
		const delivery = await vector.genuine();
		const genuine = itemOf(provider, delivery);
		const lacking = itemOf(provider, withoutSecret(provider, delivery));
		const run = async (secret) =>
			await runWorkflow(verifyWorkflow, [genuine, lacking], {
				credentialsByType: { webhookSigningSecretApi: { secret } },
				nodeOverrides: { [NODE]: { parameters: { provider: value } } },
			});
		const verdicts = (result, output) =>
			result.output(NODE, output).map((item) => [item.pairedItem.item, item.json.signature]);
		const missing = provider.signing.sharedSecret.in === 'header' ? 'missing_header' : 'malformed';
		const ours = await run(vector.secret);
		expect(ours.status).toBe('success');
		const digest = expectedDigest(provider, { rawBody: delivery.body });
		expect(verdicts(ours, 0)).toEqual([[0, { valid: true, provider: value, digest }]]);
		expect(verdicts(ours, 1)).toEqual([[1, { valid: false, provider: value, reason: missing }]]);
		const theirs = await run(vector.otherSecret);
		expect(verdicts(theirs, 0)).toEqual([]);
		expect(verdicts(theirs, 1).map(([index, { reason }]) => [index, reason])).toEqual([
			[0, 'mismatch'],
			[1, missing],
		]);
	});
});
