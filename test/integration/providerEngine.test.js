// Every verifiable provider of the table through n8n-core's WorkflowExecute: Verify Webhook Signature,
// set to that provider, gets its test vector's genuine delivery (test/vectors) as the Webhook node
// emits it (headers, webhookUrl and query, the exact bytes as the raw body), next to the same
// delivery with one byte changed, with its signature header removed, and checked with another secret.
// The providers come from the table: none is named here.
const { describe, test, expect } = require('@jest/globals');
const { runWorkflow } = require('../support/engine');
const { webhookItem } = require('../support/webhookItems');
const verifyWorkflow = require('../fixtures/verify.workflow.json');
const { PROVIDERS, verifiableFrom } = require('../../dist/nodes/shared/webhook/providers');
const { VECTORS } = require('../vectors');

const NODE = 'Verify Webhook Signature';

/**
 * The item n8n's Webhook node emits for this delivery (Raw Body on).
 * @param {{ body: string | Buffer, headers: Record<string, string>, url?: string }} delivery
 */
function itemOf({ body, headers, url }) {
	const raw = Buffer.from(body);
	let parsed;
	try {
		parsed = JSON.parse(raw.toString('utf8'));
	} catch {
		parsed = Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
	}
	const item = webhookItem({ body: parsed, rawBody: raw, headers: lowerCased(headers) });
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

/** @type {Array<[string, any]>} */
const CASES = verifiableFrom(PROVIDERS).map((/** @type {any} */ provider) => [
	provider.value,
	provider,
]);

describe.each(CASES)('%s through the engine', (value, provider) => {
	test('genuine → valid; changed byte, no signature header → invalid; another secret → all invalid', async () => {
		const vector = VECTORS[value];
		const delivery = await vector.genuine();
		const genuine = itemOf(delivery);
		const tampered = itemOf({ ...delivery, body: changed(delivery.body) });
		const unsigned = itemOf({
			...delivery,
			headers: Object.fromEntries(
				Object.entries(delivery.headers).filter(
					([name]) => name.toLowerCase() !== provider.signing.signatureHeaders[0].toLowerCase(),
				),
			),
		});
		// Documented examples carry the timestamp they were printed with: the tolerance covers it.
		const age = Math.abs(Math.floor(Date.now() / 1000) - delivery.nowSeconds);
		const run = async (secret) =>
			await runWorkflow(verifyWorkflow, [genuine, tampered, unsigned], {
				credentialsByType: { webhookSigningSecretApi: { secret } },
				nodeOverrides: {
					[NODE]: { parameters: { provider: value, toleranceSeconds: age + 300 } },
				},
			});
		const ours = await run(vector.secret);
		expect(ours.status).toBe('success');
		const verdicts = (result, output) =>
			result.output(NODE, output).map((item) => [item.pairedItem.item, item.json.signature]);
		expect(verdicts(ours, 0)).toEqual([[0, { valid: true, provider: value }]]);
		expect(verdicts(ours, 1)).toEqual([
			[1, { valid: false, provider: value, reason: 'mismatch' }],
			[2, { valid: false, provider: value, reason: 'missing_header' }],
		]);
		const theirs = await run(vector.otherSecret);
		expect(verdicts(theirs, 0)).toEqual([]);
		expect(verdicts(theirs, 1).map(([index, { reason }]) => [index, reason])).toEqual([
			[0, 'mismatch'],
			[1, 'mismatch'],
			[2, 'missing_header'],
		]);
	});
});
