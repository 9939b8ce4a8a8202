// Reserve only what was verified: for every verifiable provider of the table, a genuine signed
// delivery next to mutations of the parts of a request nobody signs (the Content-Type: missing,
// another, with a charset, in another case; the id headers: changed, sent twice; the query; a form
// re-encoded), all through Idempotency Reserve (Verify Signature set to the provider, its preset as
// Key Source, On Error: continue using error output) in n8n-core's engine on a real PostgreSQL.
// Invariants: the signed event is `new` exactly once (the genuine delivery, first); every mutation is
// a duplicate of it or refused (invalid signature, or an error item), never new; exactly one key is
// stored, and it comes from the signed content: the provider's event id in the signed body or a
// signed header, else the digest of the signed content. A body field holding `&id=evt_X&` (form
// field injection) and non-ASCII ids (charset games) are among the generated bodies.
// Then each provider's own retry, as its table entry says (a new timestamp and signature, renewed
// body fields changed, the id header kept), is a duplicate.
// Then the same retry against a recorded fingerprint: it matches (the fingerprint of a verified
// delivery is its retry-stable digest), so it is a duplicate, never a reused key.
// Bounded: 3 runs of up to 4 mutations per provider (about 35 providers), a few seconds in all.
const { describe, test, expect } = require('@jest/globals');
const fc = require('fast-check');
const { PROVIDERS, isSigned } = require('../../dist/nodes/shared/webhook/providers');
const { formFields } = require('../../dist/nodes/shared/webhook/signedParse');
const { useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { setPath, signDelivery, signerFor } = require('../support/signDelivery');

const db = useTestDatabase();

const RESERVE = 'Idempotency Reserve';
const [NEW, DUPLICATE, INVALID, ERROR] = [0, 1, 2, 3];
const WEBHOOK_URL = 'https://n8n.example.test/webhook/idempotent-webhook';

const workflow = {
	name: 'Reserve, verifying',
	nodes: [
		{
			parameters: {},
			name: RESERVE,
			type: 'n8n-nodes-idempotency.idempotencyReserve',
			typeVersion: 2.1,
			position: [0, 0],
			onError: 'continueErrorOutput',
			credentials: {
				idempotencyPostgresApi: { id: '1', name: 'Idempotency Postgres' },
				webhookSigningSecretApi: { id: '2', name: 'Webhook Signing Secret' },
			},
		},
	],
	connections: {},
	settings: { executionOrder: 'v1' },
};

const FORM = 'application/x-www-form-urlencoded';
const JSON_TYPE = 'application/json';

/** What n8n's Webhook node makes of the bytes for a declared Content-Type (body-parser's choice). */
function n8nBody(bytes, contentType) {
	if (contentType === undefined) return undefined;
	const [type, ...parameters] = contentType.split(';');
	const media = type.trim().toLowerCase();
	const charset = parameters
		.join(';')
		.match(/charset=([^;]+)/i)?.[1]
		?.trim()
		.toLowerCase();
	const text = bytes.toString(charset === 'iso-8859-1' || charset === 'latin1' ? 'latin1' : 'utf8');
	if (media === JSON_TYPE) return JSON.parse(text);
	if (media === FORM) return formFields(text);
	if (media.startsWith('text/')) return text;
	return undefined;
}

/** Invalid JSON under a JSON Content-Type: n8n answers 422 itself and runs no workflow. */
function reachesTheWorkflow({ bytes, contentType }) {
	if (contentType?.split(';')[0].trim().toLowerCase() !== JSON_TYPE) return true;
	try {
		JSON.parse(bytes.toString('utf8'));
		return true;
	} catch {
		return false;
	}
}

/** The Webhook node's item (Raw Body on) for one request. */
function itemOf({ bytes, headers, query = {}, contentType }) {
	const all = { ...headers };
	if (contentType !== undefined) all['content-type'] = contentType;
	return {
		json: {
			headers: all,
			params: {},
			query,
			body: n8nBody(bytes, contentType),
			webhookUrl: WEBHOOK_URL,
			executionMode: 'production',
		},
		binary: {
			data: {
				data: bytes.toString('base64'),
				mimeType: contentType ?? 'application/octet-stream',
				fileSize: String(bytes.length),
			},
		},
	};
}

/** The event's body: its id where the provider keeps it there, a free-text field, the body timestamp. */
function eventBody(provider, { id, note, nowSeconds, attempt }) {
	const body = provider.eventId.kind === 'body' && provider.eventId.path[0] === '0' ? [{}] : {};
	if (provider.eventId.kind === 'body') setPath(body, provider.eventId.path, id);
	setPath(body, Array.isArray(body) ? ['0', 'note'] : ['note'], note);
	const { timestamp } = provider.signing;
	if (timestamp?.from === 'body') setPath(body, timestamp.path, nowSeconds * 1000 + attempt);
	for (const path of provider.retry?.renewedBodyFields ?? []) {
		const concrete = path.map((step) => (step === '*' ? '0' : step));
		setPath(body, concrete, attempt);
	}
	return body;
}

/** A genuine delivery of one event, as the provider posts it (its first media type). */
function delivery(provider, signer, event, attempt = 0) {
	const nowSeconds = Math.floor(Date.now() / 1000) + attempt;
	const contentType = provider.contentTypes[0];
	const body = eventBody(provider, { ...event, nowSeconds, attempt });
	const bytes =
		contentType === FORM
			? Buffer.from(
					new URLSearchParams({ Payload: JSON.stringify(body), ...event.form }).toString(),
				)
			: Buffer.from(JSON.stringify(body));
	/** @type {Record<string, string>} */
	const headers = {};
	if (provider.eventId.kind === 'headers')
		headers[provider.eventId.names[0].toLowerCase()] = event.id;
	const signed = signDelivery(provider, signer, { bytes, headers, url: WEBHOOK_URL, nowSeconds });
	return { bytes, headers: signed, contentType };
}

/** Re-encodes a form without changing its decoded fields: what Twilio's signature cannot see. */
function reencodedForm(bytes, way) {
	const pairs = bytes.toString('utf8').split('&');
	if (way === 'reorder') return Buffer.from([...pairs].reverse().join('&'));
	if (way === 'extraAmpersand') return Buffer.from(`${pairs.join('&')}&`);
	if (way === 'plusAsPercent20') return Buffer.from(pairs.join('&').replace(/\+/g, '%20'));
	// A letter of the first name percent-encoded.
	const [name, ...rest] = pairs[0].split('=');
	const encodedName = `%${name.charCodeAt(0).toString(16).toUpperCase()}${name.slice(1)}`;
	return Buffer.from([[encodedName, ...rest].join('='), ...pairs.slice(1)].join('&'));
}

/** One change to what nobody signs; `undefined` from apply: does not apply to this provider. */
const MUTATIONS = {
	noContentType: (d) => ({ ...d, contentType: undefined }),
	textPlain: (d) => ({ ...d, contentType: 'text/plain' }),
	octetStream: (d) => ({ ...d, contentType: 'application/octet-stream' }),
	asForm: (d) => ({ ...d, contentType: FORM }),
	asJson: (d) => ({ ...d, contentType: JSON_TYPE }),
	utf8Charset: (d) => ({ ...d, contentType: `${d.contentType}; charset=utf-8` }),
	latin1Charset: (d) => ({ ...d, contentType: `${d.contentType}; charset=iso-8859-1` }),
	upperCase: (d) => ({ ...d, contentType: d.contentType.toUpperCase() }),
	freshIdHeaders: (d, provider) =>
		provider.eventId.kind === 'headers'
			? {
					...d,
					headers: {
						...d.headers,
						...Object.fromEntries(
							provider.eventId.names.map((name) => [name.toLowerCase(), `fresh_${Math.random()}`]),
						),
					},
				}
			: undefined,
	idHeaderTwice: (d, provider) =>
		provider.eventId.kind === 'headers'
			? {
					...d,
					headers: {
						...d.headers,
						[provider.eventId.names[0].toLowerCase()]: `${d.headers[provider.eventId.names[0].toLowerCase()]}, other`,
					},
				}
			: undefined,
	query: (d) => ({ ...d, query: { id: 'evt_forged' } }),
	objectQuery: (d) => ({ ...d, query: { role: { admin: 'true' } } }),
	...Object.fromEntries(
		['reorder', 'extraAmpersand', 'plusAsPercent20', 'letterEncoded'].map((way) => [
			`form_${way}`,
			(d) => (d.contentType === FORM ? { ...d, bytes: reencodedForm(d.bytes, way) } : undefined),
		]),
	),
};

const event = fc.record({
	id: fc.oneof(
		fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/),
		fc.constantFrom('évt_1', 'Ev€nt', 'evt_😀'),
	),
	note: fc.oneof(
		fc.string({ maxLength: 20 }),
		fc.constantFrom('&id=evt_X&', 'a&event_id=evt_X&b=', '{"id":"evt_X"}'),
	),
	form: fc.constant({ Body: 'hello world+1', From: '+15550001111' }),
});

let run = 0;

/** The stored keys of this run's namespace. */
async function storedKeys(namespace) {
	const { rows } = await db.query('SELECT key FROM processed_events WHERE key LIKE $1', [
		`${namespace}:%`,
	]);
	return rows.map((row) => row.key);
}

async function reserve(provider, secret, items, namespace, extra = {}) {
	return await runWorkflow(workflow, items, {
		credentials: db.credential(),
		credentialsByType: { webhookSigningSecretApi: { secret } },
		nodeOverrides: {
			[RESERVE]: {
				parameters: {
					mode: 'simple',
					signature: provider.value,
					keySource: provider.value,
					namespace,
					table: 'processed_events',
					createTable: true,
					...extra,
				},
			},
		},
	});
}

/** What the genuine delivery's key must be made of: its signed id, else a digest of signed content. */
function expectKeyFromSigned(provider, key, namespace, id) {
	const core = key.slice(namespace.length + 1);
	const signedHeaders = provider.signing.signs.match(/\{header:([^}]+)\}/g) ?? [];
	const idSigned =
		provider.eventId.kind === 'body' ||
		(provider.eventId.kind === 'headers' &&
			signedHeaders.some((h) => h.toLowerCase().includes(provider.eventId.names[0].toLowerCase())));
	if (idSigned) {
		const prefix = provider.value === 'stripe' ? 'evt' : provider.value;
		expect(core).toBe(`${prefix}:${id}`);
	} else {
		expect(core).toMatch(/^(sha256|signed):[0-9a-f]{64}$/);
	}
}

/**
 * The providers that sign: a shared-secret sender (Graph, Okta) covers no byte, so "no unsigned
 * change" has nothing to hold against (test/integration/sharedSecret.test.js shows what it does).
 * @type {Array<[string, any]>}
 */
const CASES = /** @type {any[]} */ ([...PROVIDERS])
	.filter((provider) => isSigned(provider))
	.map((provider) => [provider.value, provider]);

describe.each(CASES)('%s: reserve only what was verified', (_value, provider) => {
	const signer = signerFor(provider.signing);

	test('the signed event is new once; no unsigned change makes it new again or moves its key', async () => {
		const names = Object.keys(MUTATIONS);
		await fc.assert(
			fc.asyncProperty(
				event,
				fc.uniqueArray(fc.constantFrom(...names), { minLength: 1, maxLength: 4 }),
				async (generated, chosen) => {
					const namespace = `sb${++run}`;
					const genuine = delivery(provider, signer, generated);
					const mutated = chosen
						.map((name) => MUTATIONS[name](genuine, provider))
						.filter((one) => one !== undefined && reachesTheWorkflow(one));
					const result = await reserve(
						provider,
						signer.secret,
						[genuine, ...mutated].map(itemOf),
						namespace,
					);
					const newItems = result.output(RESERVE, NEW);
					expect(newItems.map((item) => item.pairedItem.item)).toEqual([0]);
					const key = newItems[0].json.idempotency.key;
					expectKeyFromSigned(provider, key, namespace, generated.id);
					for (const item of result.output(RESERVE, DUPLICATE))
						expect(item.json.idempotency.key).toBe(key);
					const routed = [DUPLICATE, INVALID, ERROR].flatMap((output) =>
						result.output(RESERVE, output).map((item) => item.pairedItem.item),
					);
					expect(routed.sort((a, b) => a - b)).toEqual(mutated.map((_, index) => index + 1));
					expect(await storedKeys(namespace)).toEqual([key]);
				},
			),
			{ numRuns: 3 },
		);
	});

	test("the sender's own retry (new timestamp and signature, renewed fields, same id) is a duplicate", async () => {
		const namespace = `sr${++run}`;
		const generated = { id: `retry_${run}`, note: 'n', form: { Body: 'b' } };
		const first = delivery(provider, signer, generated, 0);
		const retry = delivery(provider, signer, generated, 1);
		const one = await reserve(provider, signer.secret, [itemOf(first)], namespace);
		const two = await reserve(provider, signer.secret, [itemOf(retry)], namespace);
		expect(one.output(RESERVE, NEW)).toHaveLength(1);
		expect(two.output(RESERVE, DUPLICATE)).toHaveLength(1);
		expect(two.output(RESERVE, DUPLICATE)[0].json.idempotency.key).toBe(
			one.output(RESERVE, NEW)[0].json.idempotency.key,
		);
	});

	test("the sender's own retry matches the first attempt's fingerprint: not a reused key", async () => {
		const namespace = `sf${++run}`;
		const generated = { id: `fp_${run}`, note: 'n', form: { Body: 'b' } };
		const fingerprinted = { fingerprint: 'rawBody', onMismatch: 'output' };
		const [FP_NEW, FP_DUPLICATE] = [0, 1];
		const one = await reserve(
			provider,
			signer.secret,
			[itemOf(delivery(provider, signer, generated, 0))],
			namespace,
			fingerprinted,
		);
		const two = await reserve(
			provider,
			signer.secret,
			[itemOf(delivery(provider, signer, generated, 1))],
			namespace,
			fingerprinted,
		);
		expect(one.output(RESERVE, FP_NEW)).toHaveLength(1);
		// Outputs: new, duplicate, reused key, invalid signature, then the error output.
		expect(two.outputCount(RESERVE)).toBe(5);
		expect(two.output(RESERVE, FP_DUPLICATE)).toHaveLength(1);
		expect(two.output(RESERVE, 2)).toHaveLength(0);
		const { rows } = await db.query('SELECT fingerprint FROM processed_events WHERE key = $1', [
			one.output(RESERVE, FP_NEW)[0].json.idempotency.key,
		]);
		expect(rows[0].fingerprint).toMatch(/^[0-9a-f]{64}$/);
	});
});
