// The planner's webhook debugger (dist/planner/index.html) in a real headless Chromium:
// - "Check a signature": deliveries signed by each provider's own library (Stripe, Standard
//   Webhooks, Svix, Octokit; Slack and Shopify by their documented algorithms) and the usual ways
//   they go wrong; for every one the page's verdict equals Verify Webhook Signature's through
//   n8n-core's WorkflowExecute for the same bytes, headers and secrets, with the reason's one-line cause;
// - "Explain a duplicate": rows in each state in real PostgreSQL, the page's rule against what
//   Idempotency Reserve then does with the key, in lease and simple mode;
// - the secrets are not stored anywhere (storage, address, the browser profile on disk) and no
//   request leaves the page.
// The page.evaluate callbacks run in Chromium:
/* global document, localStorage, sessionStorage, location, history, getComputedStyle */
const { describe, test, expect, beforeAll, afterAll } = require('@jest/globals');
const { createHmac } = require('node:crypto');
const { mkdirSync } = require('node:fs');
const path = require('node:path');

const { useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { PROVIDERS, nowSeconds } = require('../support/providerVectors');
const { webhookItem } = require('../support/webhookItems');
const { signDelivery, signerFor } = require('../support/signDelivery');
const {
	SIGNED_EXAMPLES,
	OKTA_CHALLENGE,
	oktaVerification,
} = require('../support/handshakeExamples');
const { VECTORS } = require('../vectors');
const { PROVIDERS: ALL_PROVIDERS } = require('../../dist/nodes/shared/webhook/providers');
const {
	chromiumAvailable,
	CHROMIUM,
	PAGE_URL,
	SCREENSHOTS,
	checkSignature,
	explainDuplicate,
	headerText,
	nodeHeaders,
	openPlanner,
	plan,
} = require('../support/planner');
const verifyWorkflow = require('../fixtures/verify.workflow.json');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');

if (!chromiumAvailable) {
	console.warn(
		`Webhook debugger browser tests SKIPPED: no Chromium at ${CHROMIUM}. Install it with: apt-get update && apt-get install -y chromium`,
	);
}
const describeInBrowser = chromiumAvailable ? describe : describe.skip;

const db = useTestDatabase();

const MISMATCH =
	/^The signature does not match: the body is not the exact bytes that were signed \(turn on Raw Body in the Webhook node; load the body here from a file\), the secret is wrong or another endpoint's, or the header comes from another delivery\.$/;
const VALID = /the node sends this delivery to valid\.$/;
const CUT_SHORT = /cut short or changed when copied/;

const hex = (key, content) => createHmac('sha256', key).update(content).digest('hex');
const base64 = (key, content) => createHmac('sha256', key).update(content).digest('base64');
const whsecKey = (secret) => Buffer.from(secret.slice('whsec_'.length), 'base64');

/**
 * @typedef {{ name: string, provider: string, secret: string, previousSecret?: string,
 *   headers: Record<string, string> | string, body?: string | Buffer, bodyText?: string,
 *   toleranceSeconds?: number, hmac?: Record<string, string>,
 *   verdict: string, hint: RegExp, library?: boolean }} Delivery
 */

/** The deliveries: each provider's library-signed one and the usual mistakes, then bodies and settings. */
async function buildCorpus() {
	/** @type {Delivery[]} */
	const corpus = [];
	for (const provider of ['stripe', 'github', 'shopify', 'standardWebhooks', 'svix', 'slack']) {
		const kit = PROVIDERS[provider];
		const body = `{"id":"evt_${provider}_1","type":"invoice.paid","amount":2000}`;
		const signed = await kit.sign(body, { secret: kit.secret });
		const base = { provider, secret: kit.secret, headers: signed, body };
		corpus.push(
			{
				...base,
				name: `${provider}: signed by its library`,
				verdict: 'valid',
				hint: VALID,
				library: true,
			},
			{
				...base,
				name: `${provider}: one body byte changed`,
				body: body.replace('2000', '2001'),
				verdict: 'invalid mismatch',
				hint: MISMATCH,
				library: true,
			},
			{
				...base,
				name: `${provider}: a wrong secret`,
				secret: kit.otherSecret,
				verdict: 'invalid mismatch',
				hint: MISMATCH,
				library: true,
			},
			{
				...base,
				name: `${provider}: the header of another delivery`,
				headers: await kit.sign(`{"id":"evt_${provider}_2","type":"invoice.paid","amount":2000}`, {
					secret: kit.secret,
					timestamp: nowSeconds() - 7,
					id: 'msg_another_delivery',
				}),
				verdict: 'invalid mismatch',
				hint: MISMATCH,
				library: true,
			},
			{
				...base,
				name: `${provider}: no signature headers`,
				headers: { 'x-request-id': 'r1' },
				verdict: 'invalid missing_header',
				hint: /^No .+ header: this request was not signed by/,
			},
			{
				...base,
				name: `${provider}: the signature header cut short`,
				headers: { ...signed, [kit.signatureHeader]: signed[kit.signatureHeader].slice(0, -6) },
				verdict: 'invalid malformed',
				hint: CUT_SHORT,
			},
			{
				...base,
				name: `${provider}: signed with the previous secret during a rotation`,
				secret: kit.otherSecret,
				previousSecret: kit.secret,
				verdict: 'valid',
				hint: /^Signed with the previous secret: the sender has not switched/,
			},
		);
		if (kit.hasTimestamp) {
			corpus.push({
				...base,
				name: `${provider}: a timestamp an hour old (a replay)`,
				headers: await kit.sign(body, { secret: kit.secret, timestamp: nowSeconds() - 3600 }),
				verdict: 'invalid timestamp_out_of_tolerance',
				hint: /^The signature matches, but it was made 1 h ago, more than the tolerance of 300 s/,
				library: true,
			});
		}
	}

	const t = nowSeconds();
	const stripe = PROVIDERS.stripe;
	const standard = PROVIDERS.standardWebhooks;
	const event = { id: 'evt_bytes', type: 'charge.succeeded', data: { amount: 1999 } };
	const pretty = JSON.stringify(event, null, 2);
	const crlf = '{\r\n  "id": "evt_crlf",\r\n  "type": "x"\r\n}\r\n';
	const bom = '\ufeff{"id":"evt_bom"}';
	const latin1 = Buffer.from('{"id":"evt_latin1","name":"Müller – café"}', 'latin1');
	const big = `{"id":"evt_big","items":"${'x'.repeat(1024 * 1024)}"}`;
	const stripeHeader = (bytes, secret = stripe.secret, timestamp = t) => ({
		'stripe-signature': `t=${timestamp},v1=${createHmac('sha256', secret)
			.update(`${timestamp}.`)
			.update(bytes)
			.digest('hex')}`,
	});
	const stripeBase = { provider: 'stripe', secret: stripe.secret };
	const id = 'msg_mixup';
	const standardContent = `${id}.${t}.{"id":"evt_mixup"}`;
	corpus.push(
		// Bodies whose bytes a text box or a re-serialisation changes: the file keeps them.
		{
			...stripeBase,
			name: 'a body that is not UTF-8, loaded from a file',
			headers: stripeHeader(latin1),
			body: latin1,
			verdict: 'valid',
			hint: VALID,
		},
		{
			...stripeBase,
			name: 'a body with a byte order mark, loaded from a file',
			headers: await stripe.sign(bom, { secret: stripe.secret }),
			body: Buffer.from(bom, 'utf8'),
			verdict: 'valid',
			hint: VALID,
		},
		{
			...stripeBase,
			name: 'a body with CRLF line endings, loaded from a file',
			headers: await stripe.sign(crlf, { secret: stripe.secret }),
			body: crlf,
			verdict: 'valid',
			hint: VALID,
		},
		{
			...stripeBase,
			name: 'the CRLF body typed into the text box (LF)',
			headers: await stripe.sign(crlf, { secret: stripe.secret }),
			bodyText: crlf,
			verdict: 'invalid mismatch',
			hint: /^The body differs from what was signed: the sender's body has CRLF line endings and these bytes have LF/,
		},
		{
			...stripeBase,
			name: 'the BOM body without its byte order mark',
			headers: await stripe.sign(bom, { secret: stripe.secret }),
			body: bom.slice(1),
			verdict: 'invalid mismatch',
			hint: /^The body differs from what was signed: the sender's body starts with a byte order mark/,
		},
		{
			...stripeBase,
			name: "a re-serialised body (n8n's $json.body, not the bytes sent)",
			headers: await stripe.sign(pretty, { secret: stripe.secret }),
			body: JSON.stringify(event),
			verdict: 'invalid mismatch',
			hint: /^The body differs from what was signed: it was re-serialised .*turn on Raw Body in the Webhook node/,
		},
		// Secrets: base64 against text, both ways; one that does not decode.
		{
			provider: 'standardWebhooks',
			secret: standard.secret,
			name: 'standard webhooks: the sender signed with the text of the whsec_ secret',
			headers: {
				'webhook-id': id,
				'webhook-timestamp': String(t),
				'webhook-signature': `v1,${base64(standard.secret, standardContent)}`,
			},
			body: '{"id":"evt_mixup"}',
			verdict: 'invalid mismatch',
			hint: /^The signature matches another form of the secret: the sender signs with the text of the secret, not with the bytes the base64 after whsec_ encodes/,
		},
		{
			provider: 'github',
			secret: standard.secret,
			name: 'github: the sender signed with the bytes a whsec_ base64 secret encodes',
			headers: { 'x-hub-signature-256': `sha256=${hex(whsecKey(standard.secret), '{"a":1}')}` },
			body: '{"a":1}',
			verdict: 'invalid mismatch',
			hint: /^The signature matches another form of the secret: the secret is base64: the sender signs with the bytes it encodes/,
		},
		{
			...stripeBase,
			name: 'stripe: the secret pasted with a space after it',
			secret: `${stripe.secret} `,
			headers: stripeHeader('{"id":"evt_nl"}'),
			body: '{"id":"evt_nl"}',
			verdict: 'invalid mismatch',
			hint: /the secret has spaces or a line break copied with it/,
		},
		{
			provider: 'standardWebhooks',
			secret: 'whsec_!!not base64 at all!!',
			name: 'standard webhooks: a secret that does not decode (the node fails)',
			headers: await standard.sign('{}', { secret: standard.secret }),
			body: '{}',
			verdict: 'invalid (node error)',
			hint: /^The node fails before it checks anything: The secret is not a Standard Webhooks secret/,
		},
		// Headers.
		{
			...stripeBase,
			name: 'stripe: the signature header sent twice',
			headers: `Stripe-Signature: ${stripeHeader('{}')['stripe-signature']}\nstripe-signature: ${stripeHeader('{}')['stripe-signature']}`,
			body: '{}',
			verdict: 'invalid malformed',
			hint: /^The Stripe-Signature header was sent twice/,
		},
		{
			...stripeBase,
			name: 'stripe: dated an hour in the future',
			headers: stripeHeader('{}', stripe.secret, t + 3700),
			body: '{}',
			verdict: 'invalid timestamp_out_of_tolerance',
			hint: /dated 1 h 1 min in the future, beyond the tolerance of 300 s/,
		},
		{
			...stripeBase,
			name: 'stripe: a wider tolerance accepts the hour-old delivery',
			headers: stripeHeader('{}', stripe.secret, t - 3600),
			body: '{}',
			toleranceSeconds: 7200,
			verdict: 'valid',
			hint: /1 h ago \(tolerance 7200 s\)/,
		},
		{
			provider: 'slack',
			secret: PROVIDERS.slack.secret,
			name: 'slack: a timestamp in milliseconds',
			headers: {
				'x-slack-request-timestamp': String(t * 1000),
				'x-slack-signature': `v0=${hex(PROVIDERS.slack.secret, `v0:${t * 1000}:token=x`)}`,
			},
			body: 'token=x',
			verdict: 'invalid timestamp_out_of_tolerance',
			hint: /looks like milliseconds/,
		},
		{
			provider: 'svix',
			secret: PROVIDERS.svix.secret,
			name: "svix chosen for Standard Webhooks' headers",
			headers: await standard.sign('{}', { secret: PROVIDERS.svix.secret }),
			body: '{}',
			verdict: 'invalid missing_header',
			hint: /These are the headers of Standard Webhooks: choose Standard Webhooks as the provider\.$/,
		},
		{
			...stripeBase,
			name: 'stripe: a genuinely signed body sent as multipart (the form fields would be the body)',
			headers: {
				...stripeHeader('{"id":"evt_captured"}'),
				'content-type': 'multipart/form-data; boundary=----x',
			},
			body: '{"id":"evt_captured"}',
			verdict: 'invalid unsigned_body',
			hint: /^The request is multipart: n8n reads its form fields as the body and ignores Raw Body/,
		},
		// Generic HMAC, from its parameters.
		{
			provider: 'hmac',
			secret: 'plain-secret',
			name: 'generic HMAC: SHA-512, base64, a prefix and a timestamp header',
			hmac: {
				signatureHeader: 'X-Acme-Signature',
				algorithm: 'sha512',
				encoding: 'base64',
				signaturePrefix: 'sha512=',
				timestampHeader: 'X-Acme-Time',
			},
			headers: {
				'x-acme-signature': `sha512=${createHmac('sha512', 'plain-secret').update(`${t}.{"hello":"world"}`).digest('base64')}`,
				'x-acme-time': String(t),
			},
			body: '{"hello":"world"}',
			verdict: 'valid',
			hint: VALID,
		},
		{
			provider: 'hmac',
			secret: 'plain-secret',
			name: 'generic HMAC: SHA-1, hex',
			hmac: { signatureHeader: 'X-Sig', algorithm: 'sha1', encoding: 'hex' },
			headers: {
				'x-sig': createHmac('sha1', 'plain-secret').update('a'.repeat(5000)).digest('hex'),
			},
			body: 'a'.repeat(5000),
			verdict: 'valid',
			hint: VALID,
		},
		{
			provider: 'hmac',
			secret: 'plain-secret',
			name: 'generic HMAC: SHA-512 over a ~1 MB body',
			hmac: { signatureHeader: 'X-Sig', algorithm: 'sha512', encoding: 'hex' },
			headers: { 'x-sig': createHmac('sha512', 'plain-secret').update(big).digest('hex') },
			body: big,
			verdict: 'valid',
			hint: VALID,
		},
		{
			...stripeBase,
			name: 'stripe: a ~1 MB body with one byte changed',
			headers: stripeHeader(big),
			body: big.replace('evt_big', 'evt_bog'),
			verdict: 'invalid mismatch',
			hint: MISMATCH,
		},
		{
			provider: 'hmac',
			secret: 'plain-secret',
			name: 'generic HMAC: a SHA-512 signature checked as SHA-256',
			hmac: { signatureHeader: 'X-Sig', algorithm: 'sha256', encoding: 'hex' },
			headers: { 'x-sig': createHmac('sha512', 'plain-secret').update('{}').digest('hex') },
			body: '{}',
			verdict: 'invalid malformed',
			hint: /A signature has 64 bytes where SHA-256 gives 32: check Algorithm and Encoding/,
		},
		{
			provider: 'hmac',
			secret: 'plain-secret',
			name: 'generic HMAC without a header name (the node fails)',
			hmac: { signatureHeader: ' ' },
			headers: { 'x-sig': 'ab' },
			body: '{}',
			verdict: 'invalid (node error)',
			hint: /Signature Header is empty/,
		},
	);
	return corpus;
}

/** The bytes the page checks: the file's, or the text box's (UTF-8, line breaks as LF). */
function bytesOf(delivery) {
	if (delivery.bodyText !== undefined)
		return Buffer.from(delivery.bodyText.replace(/\r\n?/g, '\n'), 'utf8');
	return Buffer.from(delivery.body ?? '');
}

/** Verify Webhook Signature's verdict through n8n's engine, "On Error: continue" so a node error shows as an item. */
async function nodeVerdict(delivery) {
	const lines =
		typeof delivery.headers === 'string' ? delivery.headers : headerText(delivery.headers);
	const item = webhookItem({ body: {}, rawBody: bytesOf(delivery), headers: nodeHeaders(lines) });
	const run = await runWorkflow(verifyWorkflow, [item], {
		credentialsByType: {
			webhookSigningSecretApi: {
				secret: delivery.secret,
				previousSecret: delivery.previousSecret ?? '',
			},
		},
		nodeOverrides: {
			'Verify Webhook Signature': {
				parameters: {
					provider: delivery.provider,
					toleranceSeconds: delivery.toleranceSeconds ?? 300,
					rawBodyProperty: 'data',
					...(delivery.hmac ?? {}),
				},
				onError: 'continueRegularOutput',
			},
		},
	});
	expect(run.status).toBe('success');
	const [valid] = run.output('Verify Webhook Signature', 0);
	if (valid !== undefined) return 'valid';
	const [invalid] = run.output('Verify Webhook Signature', 1);
	// Refused after its signature held: the item is not sent as JSON, the page's assumption (the
	// debugger checks the signature; the media-type rule is docs/signatures.md's).
	if (invalid.json.details?.kind === 'unsupported-media-type') return 'valid';
	if (invalid.json.error !== undefined) return 'invalid (node error)';
	return `invalid ${invalid.json.signature.reason}`;
}

describeInBrowser('webhook debugger: check a signature', () => {
	let browser;
	/** @type {Delivery[]} */
	let corpus;
	beforeAll(async () => {
		browser = await openPlanner();
		corpus = await buildCorpus();
	});
	afterAll(async () => {
		await browser?.close();
	});

	test("for every delivery the page's verdict is the node's through n8n's engine, with the reason's usual cause; the libraries agree", async () => {
		const rows = [];
		for (const delivery of corpus) {
			const shown = await checkSignature(browser.page, delivery);
			const node = await nodeVerdict(delivery);
			const kit = PROVIDERS[delivery.provider];
			const row = {
				name: delivery.name,
				page: shown.verdict,
				node,
				expected: delivery.verdict,
				hint: delivery.hint.test(shown.hint) ? 'as expected' : shown.hint,
			};
			// The provider's own library, where it has one, on the same delivery.
			if (delivery.library && kit?.accepts !== undefined)
				row.library = (await kit.accepts(delivery.body, delivery.headers, delivery.secret))
					? 'valid'
					: 'invalid';
			rows.push(row);
		}
		expect(rows).toEqual(
			rows.map((row) => ({
				...row,
				page: row.expected,
				node: row.expected,
				hint: 'as expected',
				...(row.library !== undefined
					? { library: row.expected === 'valid' ? 'valid' : 'invalid' }
					: {}),
			})),
		);
		// Every scheme of the node, every reason, and the node's own failures are in the corpus.
		expect(new Set(corpus.map((d) => d.provider))).toEqual(
			new Set(['stripe', 'github', 'shopify', 'standardWebhooks', 'svix', 'slack', 'hmac']),
		);
		expect(new Set(rows.map((row) => row.node))).toEqual(
			new Set([
				'valid',
				'invalid mismatch',
				'invalid missing_header',
				'invalid malformed',
				'invalid timestamp_out_of_tolerance',
				'invalid unsigned_body',
				'invalid (node error)',
			]),
		);
		// Stripe's, Octokit's, Standard Webhooks' and Svix's libraries each judged 4 deliveries, and the
		// stale one where the scheme has a timestamp (not GitHub).
		expect(rows.filter((row) => row.library !== undefined).length).toBe(4 * 4 + 3);
	}, 240_000);

	test('what was signed: the exact payload with its timestamp, the expected signature next to the received one, the age against the tolerance', async () => {
		const { page } = browser;
		const secret = PROVIDERS.stripe.secret;
		const body = '\ufeff{\r\n "id": "evt_shown"\r\n}';
		const t = nowSeconds() - 3600;
		const headers = await PROVIDERS.stripe.sign(body, { secret, timestamp: t });
		const expected = hex(secret, `${t}.${body}`);
		const shown = await checkSignature(page, { provider: 'stripe', secret, headers, body });
		expect(shown.verdict).toBe('invalid timestamp_out_of_tolerance');
		expect(shown.signed).toBe(`${t}.${body}`);
		expect(shown.signedInfo).toContain(
			`{timestamp}.{body} with the body: ${Buffer.byteLength(body)} bytes, which starts with a byte order mark (EF BB BF, invisible below), has 2 CRLF line breaks.`,
		);
		expect(shown.signedInfo).toContain(
			`Timestamp ${t} = ${new Date(t * 1000).toISOString().replace('.000Z', 'Z')}, 1 h ago (tolerance 300 s: too old for the node).`,
		);
		expect(shown.expected).toContain(`secret: ${expected} ✓ matches`);
		expect(shown.expected).toContain(`received: ${expected} ✓ matches`);

		// Standard Webhooks: id and timestamp before the body; the expected signature in base64.
		const standard = PROVIDERS.standardWebhooks;
		const signed = await standard.sign('{"a":1}', { secret: standard.secret });
		const other = await checkSignature(page, {
			provider: 'standardWebhooks',
			secret: standard.otherSecret,
			headers: signed,
			body: '{"a":1}',
		});
		const content = `${signed['webhook-id']}.${signed['webhook-timestamp']}.{"a":1}`;
		expect(other.verdict).toBe('invalid mismatch');
		expect(other.signed).toBe(content);
		expect(other.expected).toContain(
			`secret: ${base64(whsecKey(standard.otherSecret), content)} ✗ no match`,
		);
		expect(other.expected).toContain(
			`received: ${signed['webhook-signature'].slice(3)} ✗ no match`,
		);
		// Bytes that are not UTF-8 are said to be so, and checked as they are.
		const latin1 = Buffer.from('{"name":"café"}', 'latin1');
		const shownLatin1 = await checkSignature(page, {
			provider: 'github',
			secret: 'gh',
			headers: { 'x-hub-signature-256': `sha256=${hex('gh', latin1)}` },
			body: latin1,
		});
		expect(shownLatin1.verdict).toBe('valid');
		expect(shownLatin1.signedInfo).toMatch(/^The body alone: 15 bytes, which is not UTF-8/);
		// No headers to read: nothing is claimed about what was signed.
		const none = await checkSignature(page, {
			provider: 'github',
			secret: 'gh',
			headers: {},
			body: '{}',
		});
		expect({ signed: none.signed, expected: none.expected }).toEqual({
			signed: '',
			expected: 'None to compare (see the verdict).',
		});
	});

	test("a pasted handshake signed by its sender: the page says it is one and shows the answer Reserve sends, the package's own", async () => {
		const { page } = browser;
		// Every signed handshake of an HMAC sender in the table (the page checks HMAC only): none by hand.
		/** @type {any[]} */
		const signedHmac = ALL_PROVIDERS.filter(
			(/** @type {any} */ p) =>
				p.handshake?.signed && ['sha1', 'sha256', 'sha512'].includes(p.signing.algorithm),
		);
		expect(signedHmac.length).toBeGreaterThan(0);
		for (const provider of signedHmac) {
			const example = SIGNED_EXAMPLES[provider.value];
			const signer = signerFor(provider.signing);
			const headers = signDelivery(provider, signer, {
				bytes: Buffer.from(example.body),
				headers: example.headers,
				nowSeconds: nowSeconds(),
			});
			const shown = await checkSignature(page, {
				provider: provider.value,
				secret: signer.secret,
				headers,
				bodyText: example.body,
			});
			const answer = example.expected(signer.secret);
			expect(shown.verdict).toBe('valid');
			expect(shown.hint).toContain(`this is the sender's ${provider.handshake.name} handshake.`);
			expect(shown.hint).toContain(
				`${answer.statusCode} ${answer.headers['content-type']}: ${answer.body}`,
			);
			// A real event of the same sender is an event.
			const event = await checkSignature(page, {
				provider: provider.value,
				secret: signer.secret,
				headers: signDelivery(provider, signer, {
					bytes: Buffer.from(example.event),
					headers: provider.value === 'github' ? { 'x-github-event': 'push' } : example.headers,
					nowSeconds: nowSeconds(),
				}),
				bodyText: example.event,
			});
			expect(event.hint).toMatch(/the node sends this delivery to valid\.$/);
		}
	});

	test("a signature header not in its sender's form: the hint says what is missing, read from the provider table", async () => {
		const { page } = browser;
		// Every HMAC sender whose description says how its header is written (a prefix, key=value
		// fields, a version list): its genuine header broken in that one respect.
		/** @type {any[]} */
		const described = ALL_PROVIDERS.filter(
			(/** @type {any} */ p) =>
				['sha1', 'sha256', 'sha512'].includes(p.signing.algorithm) &&
				(p.signing.signature.format !== 'whole' || p.signing.signature.prefix),
		);
		const values = described.map((/** @type {any} */ p) => p.value);
		for (const value of ['stripe', 'github', 'slack', 'mux', 'workOs', 'zoom', 'whatsApp'])
			expect(values).toContain(value);
		const rows = [];
		for (const provider of described) {
			const signer = signerFor(provider.signing);
			const headers = signDelivery(provider, signer, {
				bytes: Buffer.from('{"id":"evt_1"}'),
				headers: {},
				nowSeconds: nowSeconds(),
			});
			const header = provider.signing.signatureHeaders[0];
			const name = Object.keys(headers).find((n) => n.toLowerCase() === header.toLowerCase());
			const format = provider.signing.signature;
			const [broken, expected] =
				format.format === 'whole'
					? [headers[name].slice(format.prefix.length), `${header} starts with ${format.prefix}`]
					: format.format === 'fields'
						? [
								headers[name].replaceAll(`${format.signatureKey}=`, `x${format.signatureKey}=`),
								`The ${header} header has no ${format.signatureKey} signature`,
							]
						: [
								headers[name].replaceAll(`${format.version},`, 'v9,'),
								`The ${header} header has no ${format.version} (HMAC) signature`,
							];
			const shown = await checkSignature(page, {
				provider: provider.value,
				secret: signer.secret,
				headers: { ...headers, [name]: broken },
				bodyText: '{"id":"evt_1"}',
			});
			rows.push({
				provider: provider.value,
				verdict: shown.verdict,
				hint: shown.hint.startsWith(expected)
					? 'as expected'
					: `${shown.hint} (expected: ${expected}…)`,
			});
		}
		expect(rows).toEqual(
			rows.map((row) => ({ ...row, verdict: 'invalid malformed', hint: 'as expected' })),
		);
	});

	test('a shared-secret sender (Graph, Okta): the verdict, which value failed, what the secret does not protect, and its handshake', async () => {
		const { page } = browser;
		const graph = VECTORS.microsoftGraph;
		const graphBody = String((await graph.genuine()).body);
		const genuine = await checkSignature(page, {
			provider: 'microsoftGraph',
			secret: graph.secret,
			headers: { 'content-type': 'application/json' },
			bodyText: graphBody,
		});
		expect(genuine.verdict).toBe('valid');
		expect(genuine.hint).toMatch(
			/^value\[\]\.clientState equals the secret: the node sends this delivery to valid\./,
		);
		expect(genuine.hint).toContain('read the resource it names from Graph');
		// One forged notification slipped into Microsoft's batch: the whole delivery refused, as the node does.
		const json = JSON.parse(graphBody);
		json.value.push({ ...json.value[0], clientState: 'guessed' });
		const forgedBody = JSON.stringify(json);
		const forged = await checkSignature(page, {
			provider: 'microsoftGraph',
			secret: graph.secret,
			headers: { 'content-type': 'application/json' },
			bodyText: forgedBody,
		});
		expect(forged.verdict).toBe('invalid mismatch');
		expect(forged.hint).toMatch(/^1 of 2 clientState values do not equal the secret \(element 1\)/);
		expect(forged.hint).not.toContain('guessed');
		const node = await runWorkflow(
			verifyWorkflow,
			[webhookItem({ body: json, rawBody: forgedBody })],
			{
				credentialsByType: { webhookSigningSecretApi: { secret: graph.secret } },
				nodeOverrides: {
					'Verify Webhook Signature': { parameters: { provider: 'microsoftGraph' } },
				},
			},
		);
		expect(node.output('Verify Webhook Signature', 1)[0].json.signature.reason).toBe('mismatch');
		// Graph's validation comes bodiless with its token in the URL, which the page does not take.
		const empty = await checkSignature(page, {
			provider: 'microsoftGraph',
			secret: graph.secret,
			headers: { 'content-type': 'text/plain; charset=utf-8' },
			bodyText: '',
		});
		expect(empty.hint).toContain(
			"if the request's URL carried ?validationToken=…, this is Microsoft Graph's validation request handshake",
		);

		const okta = VECTORS.oktaEventHooks;
		const verification = await checkSignature(page, {
			provider: 'oktaEventHooks',
			secret: okta.secret,
			headers: oktaVerification(okta.secret),
			bodyText: '',
		});
		expect(verification.hint).toBe(
			`This is Okta Event Hooks's one-time verification handshake. Reserve and Verify Webhook Signature answer it themselves, 200 application/json; charset=utf-8: {"verification":"${OKTA_CHALLENGE}"} (nothing is reserved, no node after them runs).`,
		);
		const wrong = await checkSignature(page, {
			provider: 'oktaEventHooks',
			secret: okta.secret,
			headers: oktaVerification('not-the-secret'),
			bodyText: '',
		});
		expect(wrong.hint).toMatch(
			/^This is Okta Event Hooks's one-time verification handshake, refused \(one-time verification: shared secret mismatch\): the node answers 401/,
		);
		const { body: oktaBody, headers: oktaHeaders } = await okta.genuine();
		const delivery = await checkSignature(page, {
			provider: 'oktaEventHooks',
			secret: okta.secret,
			headers: { ...oktaHeaders, Authorization: 'Bearer my-shared-secret' },
			bodyText: String(oktaBody),
		});
		expect(delivery.verdict).toBe('invalid mismatch');
		expect(delivery.hint).toContain('the whole header value is compared, any "Bearer " included');
	});

	test('the page made no request: only its own file:// load; no console errors', async () => {
		expect(browser.requests).toEqual([PAGE_URL]);
		expect(browser.problems).toEqual([]);
	});
});

describeInBrowser('webhook debugger: the secrets', () => {
	test('after use, the secrets are in no storage, not in the address, and nowhere in the browser profile on disk', async () => {
		const browser = await openPlanner();
		const secret = 'whsec_sentinel_current_7f3a9c1e5b';
		const previousSecret = 'whsec_sentinel_previous_2d8e4a6c0f';
		const marker = 'storage-control-4b1d9e';
		let hits;
		try {
			const { page } = browser;
			const historyBefore = await page.evaluate(() => history.length);
			const body = '{"id":"evt_private"}';
			const shown = await checkSignature(page, {
				provider: 'stripe',
				secret,
				previousSecret,
				headers: await PROVIDERS.stripe.sign(body, { secret: previousSecret }),
				body,
			});
			expect(shown.verdict).toBe('valid');
			// Enter in a field submits nothing anywhere.
			await page.focus('#sigSecret');
			await page.keyboard.press('Enter');
			await page.waitForTimeout(200);
			const state = await page.evaluate(
				(before) => ({
					url: location.href,
					local: localStorage.length,
					session: sessionStorage.length,
					cookie: document.cookie,
					history: history.length - before,
					secretField: /** @type {HTMLInputElement} */ (document.getElementById('sigSecret')).type,
				}),
				historyBefore,
			);
			expect(state).toEqual({
				url: PAGE_URL,
				local: 0,
				session: 0,
				cookie: '',
				history: 0,
				secretField: 'password',
			});
			expect(await page.content()).not.toContain(secret);
			// A control: a value the page itself put in localStorage is found on disk by the same search.
			await page.evaluate((value) => localStorage.setItem('control', value), marker);
			expect(browser.requests).toEqual([PAGE_URL]);
		} finally {
			hits = await browser.closeAndSearchProfile([secret, previousSecret, marker]);
		}
		expect(hits.filter((hit) => !hit.includes(marker.slice(0, 6)))).toEqual([]);
		expect(hits.some((hit) => hit.includes(marker.slice(0, 6)))).toBe(true);
	}, 60_000);
});

describeInBrowser('webhook debugger: explain a duplicate', () => {
	let browser;
	beforeAll(async () => {
		browser = await openPlanner();
	});
	afterAll(async () => {
		await browser?.close();
	});

	/** Idempotency Reserve on one item whose Custom key is `key`: 'new', or the duplicate's status. */
	async function reserve(key, mode, body = { k: key }) {
		return (await reserveRun(key, mode, body)).outcome;
	}

	/** The same, with the item Reserve sent to false (or true). */
	async function reserveRun(key, mode, body = { k: key }) {
		const run = await runWorkflow(reserveWorkflow, [webhookItem({ body })], {
			credentials: db.credential(),
			nodeOverrides: {
				'Idempotency Reserve': {
					parameters: {
						keySource: 'custom',
						customKey: '={{ $json.body.k }}',
						mode,
						leaseSeconds: 300,
					},
				},
			},
		});
		expect(run.error).toBeUndefined();
		const [fresh] = run.output('Idempotency Reserve', 0);
		if (fresh !== undefined) return { outcome: 'new', item: fresh };
		const [duplicate] = run.output('Idempotency Reserve', 1);
		return {
			outcome: `duplicate ${duplicate.json.idempotency.status ?? 'exists'}`,
			item: duplicate,
		};
	}

	/** The row as the page's own look-up SQL returns it (a list with one row, as n8n's Postgres node gives it). */
	async function rowOf(key) {
		const { sql } = await explainDuplicate(browser.page, { key });
		const [statement] = sql.split('\n');
		const { rows } = await db.query(statement, [key]);
		return rows.length === 0 ? JSON.stringify({ key, found: false }) : JSON.stringify(rows);
	}

	test('rows in each state: the page names the rule Reserve then applies to the key, in lease and simple mode', async () => {
		const { page } = browser;
		const keys = {
			completed: 'evt:dup_completed',
			inFlight: 'evt:dup_in_flight',
			leaseEnded: 'evt:dup_lease_ended',
			legacy: 'evt:dup_legacy',
			missing: 'evt:dup_missing',
		};
		for (const key of [keys.completed, keys.inFlight, keys.leaseEnded])
			expect(await reserve(key, 'lease')).toBe('new');
		await db.query(
			`UPDATE processed_events SET status = 'completed', completed_at = now(), lease_until = NULL WHERE key = $1`,
			[keys.completed],
		);
		await db.query(
			`UPDATE processed_events SET lease_until = now() - interval '90 seconds' WHERE key = $1`,
			[keys.leaseEnded],
		);
		// A row as the hand-built two-column pattern writes it: no status.
		await db.query(`INSERT INTO processed_events (key) VALUES ($1)`, [keys.legacy]);

		const expected = {
			completed: ['duplicate: completed', 'duplicate completed', /Release Key/],
			inFlight: ['duplicate: in flight', 'duplicate in_progress', /^Next: Wait for the lease/],
			leaseEnded: ['not a duplicate: the lease ended', 'new', /raise Lease/],
			legacy: ['duplicate: legacy row without status', 'duplicate completed', /Release Key/],
			missing: ['not a duplicate: no row for this key', 'new', /processed as new/],
		};
		const seen = {};
		for (const [state, key] of Object.entries(keys)) {
			const shown = await explainDuplicate(page, { key, row: await rowOf(key), mode: 'lease' });
			// The page first, then the node on the same row (a takeover changes it).
			seen[state] = [shown.verdict, await reserve(key, 'lease'), shown.next];
		}
		expect(seen).toEqual(
			Object.fromEntries(
				Object.entries(expected).map(([state, [verdict, node, next]]) => [
					state,
					[verdict, node, expect.stringMatching(next)],
				]),
			),
		);
		const inFlight = await explainDuplicate(page, {
			key: keys.inFlight,
			row: await rowOf(keys.inFlight),
			mode: 'lease',
		});
		const { rows } = await db.query(`SELECT lease_until FROM processed_events WHERE key = $1`, [
			keys.inFlight,
		]);
		expect(inFlight.explain).toContain(
			`until ${rows[0].lease_until.toISOString().replace('.000Z', 'Z')} (in `,
		);
		expect(inFlight.explain).toMatch(/\(in [45] min \d+ s\), its lease end/);

		// Simple mode: any row is a duplicate, whatever its status; a key without a row is new.
		const another = 'evt:dup_simple_new';
		for (const key of [keys.completed, keys.inFlight, keys.legacy, another]) {
			const shown = await explainDuplicate(page, { key, row: await rowOf(key), mode: 'simple' });
			const node = await reserve(key, 'simple');
			expect([key, shown.verdict, node]).toEqual([
				key,
				key === another
					? 'not a duplicate: no row for this key'
					: 'duplicate: the key exists (simple mode)',
				key === another ? 'new' : 'duplicate exists',
			]);
		}
	});

	test("a key reused for another body: Reserve's own false item, pasted, is a fingerprint mismatch", async () => {
		const key = 'evt:dup_reused';
		expect(await reserve(key, 'lease', { k: key, amount: 1 })).toBe('new');
		const { outcome, item } = await reserveRun(key, 'lease', { k: key, amount: 2 });
		expect(outcome).toBe('duplicate in_progress');
		expect(item.json.idempotency.mismatch).toBe(true);
		const shown = await explainDuplicate(browser.page, {
			key,
			row: JSON.stringify(item.json),
			mode: 'lease',
		});
		expect(shown.verdict).toBe('duplicate: fingerprint mismatch');
		expect(shown.explain).toContain(
			`fingerprint ${item.json.idempotency.fingerprint}, storedFingerprint ${item.json.idempotency.storedFingerprint}`,
		);
		expect(shown.next).toMatch(/^Next: Check the key source/);
	});

	test("Reserve's own false item, a fingerprint mismatch, another key, and what the key says about its source", async () => {
		const { page } = browser;
		let shown = await explainDuplicate(page, {
			key: 'evt:1',
			row: JSON.stringify({
				json: {
					idempotency: { key: 'evt:1', isNew: false, status: 'in_progress', retryAfterSeconds: 42 },
				},
			}),
			mode: 'lease',
		});
		expect([shown.verdict, shown.next]).toEqual([
			'duplicate: in flight',
			expect.stringContaining('Retry-After: 42'),
		]);
		shown = await explainDuplicate(page, {
			key: 'orders:4711',
			row: JSON.stringify({
				key: 'orders:4711',
				isNew: false,
				status: 'completed',
				mismatch: true,
				fingerprint: '60303ae2…',
				storedFingerprint: '9f86d081…',
			}),
		});
		expect(shown.verdict).toBe('duplicate: fingerprint mismatch');
		expect(shown.explain).toContain('fingerprint 60303ae2…, storedFingerprint 9f86d081…');
		expect(shown.next).toMatch(/^Next: Check the key source/);
		expect(shown.keyNote).toMatch(/Custom key/);
		shown = await explainDuplicate(page, {
			key: `sha256:${'a'.repeat(64)}`,
			row: JSON.stringify({ key: 'evt:other', status: 'completed' }),
		});
		expect(shown.warnings).toBe(
			`The row is for the key "evt:other", not for "sha256:${'a'.repeat(64)}".`,
		);
		expect(shown.keyNote).toMatch(/^This key is a body hash/);
		shown = await explainDuplicate(page, { key: 'evt:x', row: '{"status": ' });
		expect([shown.verdict, shown.explain]).toEqual([
			'no row given',
			expect.stringMatching(/^The row is not JSON/),
		]);
		shown = await explainDuplicate(page, { key: 'evt:x', row: '' });
		expect(shown.keyNote).toMatch(/^This key comes from an event id/);
		expect(shown.sql).toBe(
			`SELECT to_jsonb(t) - 'owner_token' AS row FROM "public"."processed_events" t WHERE t.key = $1;\n-- $1 (text) = "evt:x"`,
		);
	});

	test('"Use the key the planner shows above" takes the key of the delivery planned above, and only a key', async () => {
		const { page } = browser;
		const planned = await plan(page, { body: '{"id":"evt_from_planner"}', keySource: 'stripe' });
		expect(planned.key).toBe('evt:evt_from_planner');
		await explainDuplicate(page, { key: 'evt:typed' });
		await page.click('#dupUseKey');
		expect(await page.inputValue('#dupKey')).toBe('evt:evt_from_planner');
		expect(await page.textContent('#dupSql')).toContain('-- $1 (text) = "evt:evt_from_planner"');
		const refused = await plan(page, { body: '{"id": 1', keySource: 'stripe' });
		expect(refused.problem).toBe(true);
		await page.click('#dupUseKey');
		expect(await page.inputValue('#dupKey')).toBe('evt:evt_from_planner');
	});

	test('readable at 375 px and 1280 px, no sideways scrolling (screenshots in test-output/planner/)', async () => {
		const { page } = browser;
		mkdirSync(SCREENSHOTS, { recursive: true });
		const body = '{"id": "evt_1NZQ2x", "type": "invoice.paid"}\n';
		const secret = PROVIDERS.stripe.secret;
		await checkSignature(page, {
			provider: 'stripe',
			secret,
			headers: await PROVIDERS.stripe.sign(body, { secret }),
			bodyText: body.trim(),
		});
		await explainDuplicate(page, {
			key: 'evt:evt_1NZQ2x',
			row: JSON.stringify({
				key: 'evt:evt_1NZQ2x',
				status: 'in_progress',
				lease_until: new Date(Date.now() + 120_000).toISOString(),
				attempts: 2,
			}),
			mode: 'lease',
		});
		for (const width of [375, 1280]) {
			await page.setViewportSize({ width, height: 900 });
			expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
				width,
			);
			expect(
				await page.$eval('#sigHint', (el) => parseFloat(getComputedStyle(el).fontSize)),
			).toBeGreaterThanOrEqual(14);
			await page.locator('#sigTitle').scrollIntoViewIfNeeded();
			await page.screenshot({
				path: path.join(SCREENSHOTS, `debugger-${width}.png`),
				fullPage: true,
			});
		}
		// Tab reaches every field of both parts, in order.
		await page.focus('#sigProvider');
		const reached = [];
		for (let i = 0; i < 14; i++) {
			await page.keyboard.press('Tab');
			reached.push(await page.evaluate(() => document.activeElement.id));
		}
		for (const id of [
			'sigSecret',
			'sigPreviousSecret',
			'sigTolerance',
			'sigHeaders',
			'sigBody',
			'sigBodyFile',
			'sigSigned',
			'dupKey',
			'dupRow',
		])
			expect(reached).toContain(id);
		expect(browser.requests).toEqual([PAGE_URL]);
		expect(browser.problems).toEqual([]);
	});
});
