// Property: no item reaches Verify Webhook Signature's `valid` output unless the bytes the workflow
// reads as its body are exactly the bytes that were signed. Valid therefore implies: the request is
// not multipart (n8n would read form fields as the body), the raw-body binary is not an upload (it
// has no file name), the signature was computed over exactly binary.data, the Content-Type is one
// its sender uses (UTF-8 only) and `$json.body` is the parse of those bytes; a signed delivery that
// fails only the last two is an item error of kind unsupported-media-type (415), never valid. And
// the converse, so the property is not met by refusing everything: a genuine delivery under those
// conditions is valid, its verdict carrying the replay guard's digest.
// Every item runs through the real node in n8n-core's WorkflowExecute, one workflow run per generated
// batch, for every signing scheme of the provider table plus Generic HMAC with and without a
// timestamp header. Case counts (numRuns × batch size): about 40 × 13 ≈ 500 items in the main
// property, 4 runs of ~0.1–1 MB bodies, and 2,000 content types against the pure check.
const { describe, test, expect } = require('@jest/globals');
const { createHmac } = require('node:crypto');
const fc = require('fast-check');
const { isDeepStrictEqual } = require('node:util');
const { runWorkflow } = require('../support/engine');
const { PROVIDERS: KITS, nowSeconds } = require('../support/providerVectors');
const verifyWorkflow = require('../fixtures/verify.workflow.json');
const { expectedDigest, formFields, sha256Hex } = require('../support/webhookItems');
const { PROVIDERS, GENERIC_HMAC } = require('../../dist/nodes/shared/webhook/providers');
const { unsignedBodyCause } = require('../../dist/nodes/shared/webhook/signedBody');

const NODE = 'Verify Webhook Signature';
const HMAC_SECRET = 'generic-hmac-secret';

/** Generic HMAC as the node's parameters set it, and a signer that follows its documented form. */
function genericScheme(timestampHeader) {
	return {
		value: GENERIC_HMAC.value,
		label: `${GENERIC_HMAC.label}${timestampHeader ? ' with a timestamp' : ''}`,
		// Media Types left at its default.
		contentTypes: ['application/json'],
		digestOf: (bytes) => `sha256:${sha256Hex(bytes)}`,
		secret: HMAC_SECRET,
		otherSecret: `${HMAC_SECRET}-someone-else`,
		parameters: {
			provider: GENERIC_HMAC.value,
			signatureHeader: 'X-Sig',
			algorithm: 'sha256',
			encoding: 'hex',
			signaturePrefix: 'sha256=',
			timestampHeader,
		},
		sign: async (body, { secret }) => {
			const t = String(nowSeconds());
			const signed = timestampHeader ? `${t}.${body}` : body;
			const signature = createHmac('sha256', secret).update(signed).digest('hex');
			return { 'x-sig': `sha256=${signature}`, ...(timestampHeader ? { 'x-ts': t } : {}) };
		},
	};
}

/**
 * The table's providers whose own library signs any body here (test/support/providerVectors.js; the
 * rest are proven by test/vectors and test/integration/providerEngine.test.js), then Generic HMAC both ways.
 */
const SCHEMES = [
	...PROVIDERS.filter(({ value }) => KITS[value] !== undefined).map((provider) => ({
		value: provider.value,
		label: provider.label,
		contentTypes: provider.contentTypes,
		digestOf: (bytes, headers) => expectedDigest(provider, { rawBody: bytes, headers }),
		secret: KITS[provider.value]?.secret,
		otherSecret: KITS[provider.value]?.otherSecret,
		parameters: { provider: provider.value },
		sign: KITS[provider.value]?.sign,
	})),
	genericScheme(''),
	genericScheme('X-Ts'),
];

test('every scheme here has a signer, Stripe, GitHub and Standard Webhooks among them', () => {
	expect(SCHEMES.map(({ value }) => value)).toEqual(
		expect.arrayContaining(['stripe', 'github', 'standardWebhooks', 'hmac']),
	);
	for (const scheme of SCHEMES)
		expect([scheme.label, typeof scheme.sign]).toEqual([scheme.label, 'function']);
});

// ---- generators -------------------------------------------------------------------------------

const randomCase = (text) =>
	fc
		.array(fc.boolean(), { minLength: text.length, maxLength: text.length })
		.map((upper) => [...text].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''));

const headerName = randomCase('content-type');
const boundary = fc.string({
	minLength: 1,
	maxLength: 70,
	unit: fc.constantFrom(..."abcXYZ019-_'()+,./:=?"),
});
const spaces = fc.constantFrom('', ' ', '  ', '\t');

/** A multipart content type: any subtype, any case, spaces, a random boundary. */
const multipartType = fc
	.tuple(
		spaces,
		randomCase('multipart'),
		fc.oneof(
			fc.constantFrom('form-data', 'mixed', 'related', 'alternative', 'x-anything'),
			fc.string({ minLength: 1, maxLength: 12, unit: fc.constantFrom(...'abcdefghijklmnop-.+') }),
		),
		spaces,
		boundary,
	)
	.chain(([lead, multipart, subtype, gap, b]) =>
		randomCase(subtype).map((sub) => `${lead}${multipart}/${sub}${gap}; boundary=${b}`),
	);

/** What senders really send, any case, sometimes with a charset. */
const otherType = fc
	.tuple(
		fc.constantFrom(
			'application/json',
			'text/plain',
			'application/x-www-form-urlencoded',
			'application/octet-stream',
			'application/vnd.api+json',
		),
		fc.constantFrom('', '; charset=utf-8', '; charset=UTF-8'),
	)
	.chain(([type, charset]) => randomCase(type).map((typed) => typed + charset));

/** The content type header: none, another type, JSON, or multipart (as a string or inside an array). */
const contentType = fc.oneof(
	fc.constant({ multipart: false, headers: {} }),
	fc
		.tuple(headerName, randomCase('application/json'), fc.constantFrom('', '; charset=utf-8'))
		.map(([name, type, charset]) => ({ multipart: false, headers: { [name]: type + charset } })),
	fc
		.tuple(headerName, otherType)
		.map(([name, value]) => ({ multipart: false, headers: { [name]: value } })),
	fc
		.tuple(headerName, multipartType)
		.map(([name, value]) => ({ multipart: true, headers: { [name]: value } })),
	fc
		.tuple(headerName, otherType, multipartType)
		.map(([name, other, value]) => ({ multipart: true, headers: { [name]: [other, value] } })),
);

/** Text a hostile sender may put in a body: NUL, lone surrogates, expression braces, deep nesting. */
const hostileText = fc.oneof(
	fc.string({ unit: 'binary', maxLength: 200 }),
	fc.constantFrom(
		'\u0000',
		'\ud800',
		'\udfff',
		'a\udc00b',
		'}}',
		'{{ $json.body }}',
		'\r\n',
		'\ufeff',
	),
	fc.integer({ min: 1, max: 400 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth)),
	fc
		.integer({ min: 1, max: 200 })
		.map((depth) => `${'{"a":'.repeat(depth)}null${'}'.repeat(depth)}`),
);
const hostileBody = fc
	.array(hostileText, { minLength: 0, maxLength: 4 })
	.map((parts) => JSON.stringify({ id: 'evt_prop', text: parts.join('') }));

/**
 * One item: its content type, body, whether its raw-body binary is an upload (has a file name),
 * and what the signature was computed over: these bytes, other bytes, or with another secret.
 */
const deliveryCase = (body) =>
	fc.record({
		contentType,
		body,
		upload: fc.option(fc.string({ maxLength: 20 }), { nil: undefined, freq: 3 }),
		signedOver: fc.constantFrom('binary', 'binary', 'otherBytes', 'otherSecret'),
		// n8n's `$json.body`: the JSON parse of the bytes, or fields a forger chose.
		n8nBody: fc.constantFrom('parsed', 'parsed', 'forged'),
	});

/**
 * Whether a signed delivery is taken as its sender signs it: one Content-Type, a media type the
 * sender uses, no charset but UTF-8, and `$json.body` the parse of the bytes in that media type.
 */
function readAsSigned(scheme, headers, bytes, n8nBody) {
	const values = Object.entries(headers)
		.filter(([name]) => name.toLowerCase() === 'content-type')
		.flatMap(([, value]) => (Array.isArray(value) ? value : [value]));
	if (values.length !== 1) return false;
	const [type, ...parameters] = values[0].split(';');
	const mediaType = type.trim().toLowerCase();
	// RFC 6839: a `+json` type is JSON, taken from any sender of JSON; n8n does not parse it, so an
	// empty `$json.body` is filled from the signed bytes.
	const structuredJson = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*\+json$/.test(
		mediaType,
	);
	const json = mediaType === 'application/json' || structuredJson;
	// A provider that sends JSON is taken under `+json` too; Generic HMAC only under the Media Types
	// its user listed (the default, JSON alone, is unchanged).
	const jsonIncludesSuffixed = scheme.value !== 'hmac';
	const listed =
		scheme.contentTypes.includes(mediaType) ||
		(structuredJson && scheme.contentTypes.includes('*/*+json')) ||
		(structuredJson && jsonIncludesSuffixed && scheme.contentTypes.includes('application/json'));
	if (!listed) return false;
	const charset = parameters
		.map((parameter) => parameter.split('='))
		.find(([name]) => name.trim().toLowerCase() === 'charset')?.[1]
		?.trim()
		.toLowerCase();
	if (charset !== undefined && charset !== 'utf-8') return false;
	const text = bytes.toString('utf8');
	const parsed = json ? JSON.parse(text) : formFields(text);
	const unparsed =
		n8nBody === undefined ||
		(n8nBody !== null && typeof n8nBody === 'object' && Object.keys(n8nBody).length === 0);
	return isDeepStrictEqual(parsed, n8nBody) || (structuredJson && unparsed);
}

// ---- the property ------------------------------------------------------------------------------

async function itemOf(scheme, { contentType: type, body, upload, signedOver, n8nBody }) {
	const bytes = Buffer.from(body, 'utf8');
	const signedText = signedOver === 'otherBytes' ? `${body} ` : body;
	const secret = signedOver === 'otherSecret' ? scheme.otherSecret : scheme.secret;
	const signatureHeaders = await scheme.sign(signedText, { secret });
	const binary = { data: bytes.toString('base64'), mimeType: 'application/json' };
	if (upload !== undefined) binary.fileName = upload;
	return {
		json: {
			headers: { ...signatureHeaders, ...type.headers },
			params: {},
			query: {},
			body: n8nBody === 'parsed' ? JSON.parse(body) : { forged: true },
		},
		binary: { data: binary },
	};
}

/** Counts what the property reached, so a run that never reached one side fails. */
const tally = { valid: 0, invalid: 0 };

/** Runs the batch through the node and checks each item both ways. */
async function holds(scheme, cases) {
	const items = await Promise.all(cases.map((delivery) => itemOf(scheme, delivery)));
	// On Error continue: a refused media type is an error item on `invalid`, not a stopped run.
	const run = await runWorkflow(verifyWorkflow, items, {
		credentialsByType: { webhookSigningSecretApi: { secret: scheme.secret } },
		nodeOverrides: { [NODE]: { parameters: scheme.parameters, onError: 'continueRegularOutput' } },
	});
	expect(run.status).toBe('success');
	const valid = new Map(
		run.output(NODE, 0).map((item) => [item.pairedItem.item, item.json.signature]),
	);
	const invalid = new Map(
		run
			.output(NODE, 1)
			.map((item) => [
				item.pairedItem.item,
				item.json.signature?.reason ?? item.json.details?.kind,
			]),
	);
	cases.forEach((delivery, i) => {
		const bytesAreSigned =
			!delivery.contentType.multipart &&
			delivery.upload === undefined &&
			delivery.signedOver === 'binary';
		const asSigned =
			bytesAreSigned &&
			readAsSigned(scheme, items[i].json.headers, Buffer.from(delivery.body), items[i].json.body);
		expect([i, valid.has(i)]).toEqual([i, asSigned]);
		expect(valid.has(i) !== invalid.has(i)).toBe(true);
		if (delivery.contentType.multipart || delivery.upload !== undefined)
			expect([i, invalid.get(i)]).toEqual([i, 'unsigned_body']);
		else if (bytesAreSigned && !asSigned)
			expect([i, invalid.get(i)]).toEqual([i, 'unsupported-media-type']);
		if (asSigned)
			expect([i, valid.get(i)]).toEqual([
				i,
				{
					valid: true,
					provider: scheme.value,
					digest: scheme.digestOf(Buffer.from(delivery.body), items[i].json.headers),
				},
			]);
	});
	tally.valid += valid.size;
	tally.invalid += cases.length - valid.size;
}

const scheme = fc.constantFrom(...SCHEMES);

describe('valid only when the body the workflow reads is the signed bytes', () => {
	test('every scheme × content types × hostile bodies × raw or uploaded binary (40 batches of up to 25)', async () => {
		await fc.assert(
			fc.asyncProperty(
				scheme,
				fc.array(deliveryCase(hostileBody), { minLength: 1, maxLength: 25 }),
				holds,
			),
			{ numRuns: 40 },
		);
		// Not vacuous: both sides were reached.
		expect(tally.valid).toBeGreaterThan(0);
		expect(tally.invalid).toBeGreaterThan(0);
	}, 20_000);

	test('bodies of 0.1 to 1 MB (4 runs)', async () => {
		const large = fc
			.tuple(
				hostileText.filter((text) => text.length > 0),
				fc.integer({ min: 100_000, max: 1_000_000 }),
			)
			.map(([text, size]) =>
				JSON.stringify({ id: 'evt_big', text: text.repeat(Math.ceil(size / text.length)) }),
			);
		await fc.assert(
			fc.asyncProperty(
				scheme,
				fc.array(deliveryCase(large), { minLength: 1, maxLength: 2 }),
				holds,
			),
			{ numRuns: 4 },
		);
	}, 20_000);
});

test('the pure check: multipart of any form is refused, other content types only as uploads (2,000 runs)', () => {
	fc.assert(
		fc.property(contentType, fc.option(fc.string(), { nil: undefined }), (type, fileName) => {
			const cause = unsignedBodyCause(type.headers, fileName === undefined ? {} : { fileName });
			const expected = type.multipart ? 'multipart' : fileName !== undefined ? 'upload' : undefined;
			expect(cause).toBe(expected);
		}),
		{ numRuns: 2000 },
	);
});
