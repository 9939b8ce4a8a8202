// The provider table (nodes/shared/webhook/providers/) is the one place a provider is defined:
// the Key Source presets, the signature schemes, the panel's options, the tolerance's display list and
// Verify Webhook Signature's subtitle are all made from it. These tests add a made-up provider to
// the table and find it everywhere, and check that the nodes use exactly what the real table makes.
const { describe, test, expect } = require('@jest/globals');
const { createHmac } = require('node:crypto');
const {
	PROVIDERS,
	GENERIC_HMAC,
	verifiableFrom,
} = require('../../dist/nodes/shared/webhook/providers');
const { KEY_SOURCES, keySourcesFrom } = require('../../dist/nodes/shared/keys/keySourceTable');
const { MESSAGE_PRESETS } = require('../../dist/nodes/shared/keys/messagePresets');
const {
	PROVIDER_OPTIONS,
	SIGNATURE_SCHEMES,
	hmacScheme,
	providerListFrom,
	schemesFrom,
} = require('../../dist/nodes/shared/webhook/signatureSchemes');
const { describeSigning } = require('../../dist/nodes/shared/webhook/schemeText');
const { builtInSupport } = require('../../dist/planner/builtIn.cjs');
const { pathToFileURL } = require('node:url');
const path = require('node:path');
const {
	providerOptions,
	providerOptionsFrom,
	schemeSettingProperties,
	timestampedFrom,
	verifySubtitle,
	verifySubtitleFrom,
} = require('../../dist/nodes/shared/parameters/schemeProperties');
const { signingKey, verifySignature } = require('../../dist/nodes/shared/webhook/verifySignature');
const {
	VerifyWebhookSignature,
} = require('../../dist/nodes/VerifyWebhookSignature/VerifyWebhookSignature.node');
const {
	IdempotencyReserve,
} = require('../../dist/nodes/IdempotencyReserve/IdempotencyReserve.node');

/** @typedef {import('../../dist/nodes/shared/webhook/providers').ProviderDefinition} ProviderDefinition */
/** @typedef {import('n8n-workflow').INodeProperties} INodeProperties */

// A made-up provider of a shape no real entry has: `X-Acme-Signature: ts=<ms>;sig=<base64>` (fields
// split by ";"), HMAC-SHA512 of "<ts>:<X-Acme-Delivery>:<body>", a millisecond timestamp. One entry,
// data only: no reader of its own. It waits 7 s for the answer, as its (made-up) page says.
const ACME_TIMEOUT_PAGE = 'https://acme.example/webhooks/timeouts';
/** @type {ProviderDefinition} */
const ACME = {
	value: 'acme',
	label: 'Acme Hooks',
	eventId: { kind: 'headers', names: ['X-Acme-Delivery', 'X-Acme-Event'] },
	signing: {
		algorithm: 'sha512',
		encoding: 'base64',
		secret: 'text',
		signatureHeaders: ['X-Acme-Signature'],
		signature: { format: 'fields', separator: ';', signatureKey: 'sig', timestampKey: 'ts' },
		signs: '{timestamp}:{header:X-Acme-Delivery}:{body}',
		timestamp: { from: 'signature', unit: 'milliseconds' },
	},
	contentTypes: ['application/json'],
	retries: 'Every 10 minutes for a day',
	timeout: { seconds: 7, docs: ACME_TIMEOUT_PAGE },
	docs: 'https://acme.example/webhooks',
};
/** A made-up provider without a timestamp, its event id in the body. */
/** @type {ProviderDefinition} */
const PLAIN = {
	value: 'plainHooks',
	label: 'Plain Hooks',
	eventId: { kind: 'body', path: ['meta', 'delivery_id'] },
	signing: {
		algorithm: 'sha256',
		encoding: 'hex',
		secret: 'text',
		signatureHeaders: ['X-Plain-Signature'],
		signature: { format: 'whole' },
		signs: '{body}',
	},
	contentTypes: ['application/json'],
	retries: 'None',
	timeout: { unknown: 'Plain Hooks says nothing of it' },
	docs: 'https://plain.example/webhooks',
};
/** A made-up sender whose requests prove nothing: a preset for its id, never a signature choice. */
/** @type {ProviderDefinition} */
const OPAQUE = {
	value: 'opaqueHooks',
	label: 'Opaque Hooks',
	eventId: { kind: 'body', path: ['id'] },
	signing: { unverifiable: 'It sends a fixed token, not a signature of the body.' },
	contentTypes: ['application/json'],
	retries: 'None',
	timeout: { unknown: 'Opaque Hooks says nothing of it' },
	docs: 'https://opaque.example/webhooks',
};
const TABLE = [...PROVIDERS, ACME, PLAIN, OPAQUE];

/**
 * The two Tolerance (Seconds) properties: 300 by default before `since`, 0 (the provider's own) from it.
 * @param {INodeProperties[]} properties @param {string} control @param {string[]} shown @param {number} since
 */
function expectTolerances(properties, control, shown, since) {
	const tolerances = properties.filter((candidate) => candidate.name === 'toleranceSeconds');
	expect(
		tolerances.map(({ default: value, typeOptions, displayOptions }) => ({
			default: value,
			typeOptions,
			displayOptions,
		})),
	).toEqual([
		{
			default: 300,
			typeOptions: { minValue: 1 },
			displayOptions: { show: { [control]: shown, '@version': [{ _cnd: { lt: since } }] } },
		},
		{
			default: 0,
			typeOptions: { minValue: 0 },
			displayOptions: { show: { [control]: shown, '@version': [{ _cnd: { gte: since } }] } },
		},
	]);
}

/** @param {INodeProperties[]} properties @param {string} name */
function property(properties, name) {
	const found = properties.find((candidate) => candidate.name === name);
	if (found === undefined) throw new Error(`no property ${name}`);
	return found;
}

describe('the real table makes what the nodes use', () => {
	test('the key sources, schemes and provider lists are its derivations', () => {
		expect(KEY_SOURCES).toEqual(keySourcesFrom(PROVIDERS, MESSAGE_PRESETS));
		// Each scheme's reader is a closure of its own: compare everything else.
		const data = (schemes) =>
			Object.fromEntries(
				Object.entries(schemes).map(([value, { read: _, ...rest }]) => [value, rest]),
			);
		expect(data(SIGNATURE_SCHEMES)).toEqual(data(schemesFrom(PROVIDERS)));
		expect(PROVIDER_OPTIONS).toEqual(providerListFrom(PROVIDERS));
		expect(providerOptions).toEqual(providerOptionsFrom(PROVIDERS));
		expect(verifySubtitle).toBe(verifySubtitleFrom(PROVIDERS));
	});

	test("Verify Webhook Signature's subtitle, Provider options and tolerance", () => {
		const { description } = new VerifyWebhookSignature();
		expect(description.subtitle).toBe(verifySubtitleFrom(PROVIDERS));
		// Every verifiable provider, in the table's order, then Generic HMAC; never an unverifiable one.
		const labels = JSON.parse(/^=\{\{ (\{.*\})\[/.exec(description.subtitle)[1]);
		expect(Object.keys(labels)).toEqual([
			...verifiableFrom(PROVIDERS).map(({ value }) => value),
			'hmac',
		]);
		expect(property(description.properties, 'provider').options).toEqual(
			providerOptionsFrom(PROVIDERS),
		);
		// Verify 1.1 (the default version) leaves the tolerance to the provider; Verify 1 keeps 300.
		expect(description.version).toEqual([1, 1.1]);
		expect(description.defaultVersion).toBe(1.1);
		expectTolerances(description.properties, 'provider', timestampedFrom(PROVIDERS), 1.1);
		// Generic HMAC says which media types its sender posts: JSON unless told (as before the
		// +json and text options came), any +json type or text/plain when listed.
		expect(property(description.properties, 'mediaTypes')).toMatchObject({
			type: 'multiOptions',
			default: ['application/json'],
			options: [
				{ name: 'JSON', value: 'application/json' },
				{ name: 'Any +JSON Type', value: '*/*+json' },
				{ name: 'Form (URL-Encoded)', value: 'application/x-www-form-urlencoded' },
				{ name: 'Text', value: 'text/plain' },
			],
			displayOptions: { show: { provider: ['hmac'] } },
		});
	});

	test("Idempotency Reserve's Verify Signature options and tolerance", () => {
		const { description } = new IdempotencyReserve();
		const signature = property(description.properties, 'signature');
		expect(signature.options.slice(1)).toEqual(providerOptionsFrom(PROVIDERS));
		// Reserve 2.1 and later leave the tolerance to the provider; Reserve 2 keeps 300. 2.2 adds
		// Answer Problems, 2.3 (the default version) Answer Repeats.
		expect(description.version).toEqual([1, 2, 2.1, 2.2, 2.3]);
		expect(description.defaultVersion).toBe(2.3);
		expectTolerances(description.properties, 'signature', timestampedFrom(PROVIDERS), 2.1);
	});

	test('a scheme signs only headers it reads; Generic HMAC signs its timestamp header only', () => {
		const lower = (names) => names.map((name) => name.toLowerCase());
		for (const [value, scheme] of Object.entries(schemesFrom(TABLE))) {
			const read = lower(scheme.headers);
			for (const name of lower(scheme.signedHeaders))
				expect([value, name, read.includes(name)]).toEqual([value, name, true]);
		}
		// Generic HMAC: its timestamp header is signed, nothing else.
		const generic = (timestampHeader) =>
			hmacScheme({
				header: 'X-Sig',
				algorithm: 'sha256',
				encoding: 'hex',
				signaturePrefix: '',
				timestampHeader,
			}).signedHeaders;
		expect(generic(' X-T ')).toEqual(['X-T']);
		expect(generic('')).toEqual([]);
	});

	test("its order is the node panel's: the table's verifiable providers, Generic HMAC last", () => {
		const verifiable = verifiableFrom(PROVIDERS).map(({ value }) => value);
		expect(PROVIDER_OPTIONS.map(({ value }) => value)).toEqual([...verifiable, 'hmac']);
		expect(timestampedFrom(PROVIDERS)).toEqual([
			...verifiableFrom(PROVIDERS)
				.filter(({ signing }) => 'timestamp' in signing && signing.timestamp !== undefined)
				.map(({ value }) => value),
			'hmac',
		]);
	});

	test('every entry is complete: a docs page, content types, retries, a timeout or why not, and a signing description or a reason', () => {
		for (const provider of PROVIDERS) {
			expect([provider.value, /^https:\/\//.test(provider.docs)]).toEqual([provider.value, true]);
			expect([
				provider.value,
				provider.contentTypes.length > 0,
				provider.retries.length > 0,
			]).toEqual([provider.value, true, true]);
			// Its answer timeout: seconds with the page that says so, or unknown and why.
			if ('seconds' in provider.timeout)
				expect([
					provider.value,
					Number.isInteger(provider.timeout.seconds) && provider.timeout.seconds > 0,
					/^https:\/\//.test(provider.timeout.docs),
				]).toEqual([provider.value, true, true]);
			else
				expect([provider.value, provider.timeout.unknown.length > 20]).toEqual([
					provider.value,
					true,
				]);
			if ('unverifiable' in provider.signing)
				expect(provider.signing.unverifiable.length).toBeGreaterThan(20);
			else expect(() => schemesFrom([provider])).not.toThrow();
		}
		expect(new Set(PROVIDERS.map(({ value }) => value)).size).toBe(PROVIDERS.length);
	});
});

describe('adding a provider is one entry of the table', () => {
	test('it becomes a Key Source preset, after the real ones and before Body Hash Only', () => {
		const sources = keySourcesFrom(TABLE, MESSAGE_PRESETS);
		const values = sources.map(({ value }) => value);
		expect(values).toEqual([
			...KEY_SOURCES.slice(0, 1 + PROVIDERS.length).map(({ value }) => value),
			'acme',
			'plainHooks',
			'opaqueHooks',
			...KEY_SOURCES.slice(1 + PROVIDERS.length).map(({ value }) => value),
		]);
		expect(sources.find(({ value }) => value === 'acme')).toEqual({
			value: 'acme',
			name: 'Acme Hooks',
			subtitle: 'Acme Hooks',
			location: ACME.eventId,
			description:
				'Key "acme:" + the X-Acme-Delivery header, else the X-Acme-Event header, else SHA-256 of the raw body',
			// Its events are keyed under its own value, apart from every other sender's.
			scope: 'acme',
		});
		expect(sources.find(({ value }) => value === 'plainHooks')).toMatchObject({
			location: PLAIN.eventId,
			description: 'Key "plainHooks:" + body.meta.delivery_id, else SHA-256 of the raw body',
			scope: 'plainHooks',
		});
	});

	test('it becomes a signature scheme that verifies its deliveries; an unverifiable one does not', () => {
		const schemes = schemesFrom(TABLE);
		expect(Object.keys(schemes)).toEqual([...Object.keys(SIGNATURE_SCHEMES), 'acme', 'plainHooks']);
		expect(schemes.acme).toMatchObject({
			label: 'Acme Hooks',
			headers: ['X-Acme-Delivery', 'X-Acme-Signature'],
			signedHeaders: ['X-Acme-Delivery'],
			hasTimestamp: true,
		});

		const secret = 'acme-secret';
		const body = '{"type":"order.paid"}';
		const nowMs = 1_700_000_000_123;
		const sign = (/** @type {string} */ key, delivery = 'dlv_1') =>
			createHmac('sha512', key).update(`${nowMs}:${delivery}:${body}`).digest('base64');
		const headers = {
			'x-acme-signature': `ts=${nowMs};sig=${sign(secret)}`,
			'x-acme-delivery': 'dlv_1',
		};
		const keys = [signingKey(secret, schemes.acme.secretFormat, 'secret')];
		const verify = (/** @type {Record<string, string>} */ sent, nowSeconds = nowMs / 1000) =>
			verifySignature(schemes.acme, { headers: sent, body: Buffer.from(body) }, keys, {
				nowSeconds,
				toleranceSeconds: 300,
			});
		expect(verify(headers)).toEqual({ valid: true });
		expect(verify(headers, nowMs / 1000 + 301)).toEqual({
			valid: false,
			reason: 'timestamp_out_of_tolerance',
		});
		expect(verify({ ...headers, 'x-acme-signature': `ts=${nowMs};sig=${sign('other')}` })).toEqual({
			valid: false,
			reason: 'mismatch',
		});
		// Its delivery id is signed: another id fails the signature.
		expect(verify({ ...headers, 'x-acme-delivery': 'dlv_2' })).toEqual({
			valid: false,
			reason: 'mismatch',
		});
		expect(verify({ 'x-acme-delivery': 'dlv_1' })).toEqual({
			valid: false,
			reason: 'missing_header',
		});
	});

	test('the built-in-nodes generator expresses it, or says why not', () => {
		const acme = builtInSupport(ACME);
		expect(acme.supported).toBe(true);
		expect(acme.signature).toMatchObject({
			algorithm: 'SHA512',
			encoding: 'base64',
			signsEventId: false,
		});
		expect(acme.signature.input.expression).toContain('x-acme-delivery');
		expect(builtInSupport(PLAIN)).toMatchObject({
			supported: true,
			signature: { input: { kind: 'binary' } },
		});
		expect(builtInSupport(OPAQUE)).toEqual({
			supported: false,
			provider: 'opaqueHooks',
			label: 'Opaque Hooks',
			reason:
				'Opaque Hooks cannot be checked with built-in nodes: It sends a fixed token, not a signature of the body.',
			cause: 'It sends a fixed token, not a signature of the body.',
		});
	});

	test("it gets a row in docs/signatures.md's table", async () => {
		const { signaturesTable } = await import(
			pathToFileURL(path.join(__dirname, '..', '..', 'scripts', 'docs-signatures.mjs')).href
		);
		const table = signaturesTable(TABLE);
		expect(table).toContain(`| [Acme Hooks](${ACME.docs}) |`);
		expect(table).toContain('`{timestamp}:{header:X-Acme-Delivery}:{body}`');
		expect(table).toContain('Every 10 minutes for a day');
		// Its answer timeout, linked to its page; a sender that states none says unknown.
		expect(table).toContain(`| Every 10 minutes for a day | [7 s](${ACME_TIMEOUT_PAGE}) |`);
		expect(table).toContain('| None | unknown: Plain Hooks says nothing of it |');
		expect(table).toContain('It sends a fixed token, not a signature of the body.');
	});

	test("with a timeout it gets a row in docs/answer-first.md's table; without one it is named unknown", async () => {
		const { answerFirstTable, answerFirstDocWithTable, unknownTimeoutsLine, ANSWER_FIRST_START } =
			await import(
				pathToFileURL(path.join(__dirname, '..', '..', 'scripts', 'docs-signatures.mjs')).href
			);
		const table = answerFirstTable(TABLE);
		// 7 s: a 1 s or 5 s step still fits with the headroom, 30 s does not.
		expect(table.split('\n').at(-1)).toBe(
			`| Acme Hooks | [7 s](${ACME_TIMEOUT_PAGE}) | answer last | answer last | **answer first** | 6 s or more |`,
		);
		expect(table).not.toContain('Plain Hooks');
		expect(unknownTimeoutsLine(TABLE)).toMatch(/, Plain Hooks, Opaque Hooks\.$/);
		expect(unknownTimeoutsLine(TABLE)).not.toContain('Acme Hooks');
		// And the written section carries both.
		const doc = answerFirstDocWithTable(
			`${ANSWER_FIRST_START}\n<!-- answer-first:end -->\n`,
			TABLE,
		);
		expect(doc).toContain('| Acme Hooks | [7 s]');
		expect(doc).toContain('Plain Hooks, Opaque Hooks.');
	});

	test("it gets a row in docs/cloud.md's table: its workflow's URL, or why built-in nodes cannot check it", async () => {
		const { providersTable, RAW_BASE } = await import(
			pathToFileURL(path.join(__dirname, '..', '..', 'scripts', 'cloud-workflows.mjs')).href
		);
		const { builtInHandshake, seeDuplicate } = require('../../dist/planner/builtIn.cjs');
		const table = providersTable(
			{ BUILT_IN_SIGNATURES: TABLE.map(builtInSupport), builtInHandshake, seeDuplicate },
			TABLE,
		);
		// Its value for --provider, and how a user sees its duplicate: no resend field, so its own retries.
		expect(table).toContain(
			`| Plain Hooks (\`plainHooks\`) | yes | — | \`${RAW_BASE}plainHooks.json\` | no resend button is documented: it sends an event again only when it retries (`,
		);
		expect(table).toContain(
			'| Opaque Hooks | **no** | — | It sends a fixed token, not a signature of the body. | — |',
		);
	});

	test('it becomes a panel option with its description, before Generic HMAC', () => {
		expect(providerListFrom(TABLE).slice(-3)).toEqual([
			{ value: 'acme', label: 'Acme Hooks' },
			{ value: 'plainHooks', label: 'Plain Hooks' },
			{ value: 'hmac', label: 'Generic HMAC' },
		]);
		expect(providerOptionsFrom(TABLE)).toEqual([
			...providerOptions.slice(0, -1),
			{
				name: 'Acme Hooks',
				value: 'acme',
				description: describeSigning(/** @type {any} */ (ACME.signing)),
			},
			{
				name: 'Plain Hooks',
				value: 'plainHooks',
				description: describeSigning(/** @type {any} */ (PLAIN.signing)),
			},
			{ name: GENERIC_HMAC.label, value: 'hmac', description: GENERIC_HMAC.description },
		]);
	});

	test("it gets a label in Verify Webhook Signature's subtitle", () => {
		const subtitle = verifySubtitleFrom(TABLE);
		const match = /^=\{\{ (\{.*\})\[\$parameter\["provider"\]\] \}\}$/.exec(subtitle);
		expect(match).not.toBeNull();
		expect(JSON.parse(match[1])).toEqual({
			...JSON.parse(/^=\{\{ (\{.*\})\[/.exec(verifySubtitle)[1]),
			acme: 'Acme Hooks',
			plainHooks: 'Plain Hooks',
		});
		expect(subtitle).toContain(
			'"acme": "Acme Hooks", "plainHooks": "Plain Hooks", "hmac": "Generic HMAC"}',
		);
		expect(subtitle).not.toContain('opaqueHooks');
	});

	test("with a timestamp it shows the tolerance, in both nodes' settings; without one it does not", () => {
		expect(timestampedFrom(TABLE)).toEqual([
			...timestampedFrom(PROVIDERS).slice(0, -1),
			'acme',
			'hmac',
		]);
		for (const [control, since] of /** @type {Array<[string, number]>} */ ([
			['provider', 1.1],
			['signature', 2.1],
		])) {
			const properties = schemeSettingProperties(control, since, TABLE);
			expectTolerances(properties, control, timestampedFrom(TABLE), since);
			for (const tolerance of properties.filter(({ name }) => name === 'toleranceSeconds')) {
				expect(tolerance.displayOptions.show[control]).toContain('acme');
				expect(tolerance.displayOptions.show[control]).not.toContain('plainHooks');
			}
		}
		// Without a table, the real one.
		expect(schemeSettingProperties('provider', 1.1)).toEqual(
			schemeSettingProperties('provider', 1.1, PROVIDERS),
		);
	});
});

// A made-up sender of each shared-secret shape: one entry each, found in every derived place.
describe('a shared-secret provider is one entry of the table', () => {
	/** @type {any} */
	const TOKEN = {
		value: 'tokenHooks',
		label: 'Token Hooks',
		eventId: { kind: 'body', path: ['id'] },
		signing: {
			sharedSecret: { in: 'header', header: 'X-Token' },
			caveat: 'Read the event from the Token Hooks API before acting.',
		},
		contentTypes: ['application/json'],
		retries: 'None',
		timeout: { unknown: 'a made-up sender' },
		docs: 'https://token.example/webhooks',
	};
	/** @type {any} */
	const BATCH = {
		value: 'batchHooks',
		label: 'Batch Hooks',
		eventId: { kind: 'none' },
		signing: {
			sharedSecret: { in: 'bodyArray', array: ['data', 'items'], field: 'secret' },
			caveat: 'Read each item from the Batch Hooks API before acting.',
		},
		contentTypes: ['application/json'],
		retries: 'None',
		timeout: { unknown: 'a made-up sender' },
		docs: 'https://batch.example/webhooks',
	};
	const WITH_SHARED = [...PROVIDERS, TOKEN, BATCH];
	const keys = [Buffer.from('s3cret')];
	const check = (scheme, headers, body) =>
		verifySignature(scheme, { headers, body: Buffer.from(body) }, keys, {
			nowSeconds: 0,
			toleranceSeconds: 0,
		});

	test('it becomes a scheme that compares the secret where the entry says, signing nothing', () => {
		const schemes = schemesFrom(WITH_SHARED);
		expect(schemes.tokenHooks).toMatchObject({
			kind: 'sharedSecret',
			headers: ['X-Token'],
			signedHeaders: [],
			signsBody: false,
			hasTimestamp: false,
		});
		expect(check(schemes.tokenHooks, { 'x-token': 's3cret' }, '{}')).toEqual({ valid: true });
		expect(check(schemes.tokenHooks, { 'x-token': 's3creT' }, '{}')).toEqual({
			valid: false,
			reason: 'mismatch',
		});
		const batch = (...secrets) =>
			JSON.stringify({ data: { items: secrets.map((secret) => ({ secret })) } });
		expect(check(schemes.batchHooks, {}, batch('s3cret', 's3cret'))).toEqual({ valid: true });
		expect(check(schemes.batchHooks, {}, batch('s3cret', 'other'))).toEqual({
			valid: false,
			reason: 'mismatch',
		});
		expect(check(schemes.batchHooks, {}, batch())).toEqual({ valid: false, reason: 'malformed' });
	});

	test('the panel lists it with where the secret is; the generator refuses it with the reason; the docs row says what it does not protect', async () => {
		const options = providerOptionsFrom(WITH_SHARED);
		expect(options.find(({ value }) => value === 'batchHooks')?.description).toBe(
			'data.items[].secret equals the secret (shared secret, constant-time compare; nothing signed)',
		);
		const refused = /** @type {any} */ (builtInSupport(TOKEN));
		expect(refused.supported).toBe(false);
		expect(refused.cause).toMatch(/^it proves itself with a shared secret \(X-Token\)/);
		expect(refused.cause).toContain("the Webhook node's own Header Auth");
		expect(/** @type {any} */ (builtInSupport(BATCH)).cause).not.toContain('Header Auth');
		const { signaturesTable } = await import(
			pathToFileURL(path.join(__dirname, '..', '..', 'scripts', 'docs-signatures.mjs')).href
		);
		const table = signaturesTable(WITH_SHARED);
		expect(table).toContain(
			'| [Batch Hooks](https://batch.example/webhooks) | no signature: a shared secret, `data.items[].secret` equal to the secret (every element; constant time) | nothing is signed: whoever sees one delivery holds the secret and can forge others',
		);
		expect(table).toContain('Read each item from the Batch Hooks API before acting.');
		expect(table).toContain('`sha256:` of the body as received (Replay Guard; nothing signed)');
	});
});
