// The provider table (nodes/shared/webhook/providers.ts) is the one place a provider is defined:
// the Key Source presets, the signature schemes, the panel's options, the tolerance's display list and
// Verify Webhook Signature's subtitle are all made from it. These tests add a made-up provider to
// the table and find it everywhere, and check that the nodes use exactly what the real table makes.
const { describe, test, expect } = require('@jest/globals');
const { createHmac } = require('node:crypto');
const { PROVIDERS, GENERIC_HMAC } = require('../../dist/nodes/shared/webhook/providers');
const { KEY_SOURCES, keySourcesFrom } = require('../../dist/nodes/shared/keys/keySourceTable');
const { MESSAGE_PRESETS } = require('../../dist/nodes/shared/keys/messagePresets');
const {
	PROVIDER_OPTIONS,
	SIGNATURE_SCHEMES,
	hmacScheme,
	providerListFrom,
	schemesFrom,
} = require('../../dist/nodes/shared/webhook/signatureSchemes');
const {
	providerOptions,
	providerOptionsFrom,
	schemeSettingProperties,
	timestampedFrom,
	verifySubtitle,
	verifySubtitleFrom,
} = require('../../dist/nodes/shared/parameters/signatureProperties');
const { signingKey, verifySignature } = require('../../dist/nodes/shared/webhook/verifySignature');
const {
	VerifyWebhookSignature,
} = require('../../dist/nodes/VerifyWebhookSignature/VerifyWebhookSignature.node');
const {
	IdempotencyReserve,
} = require('../../dist/nodes/IdempotencyReserve/IdempotencyReserve.node');

/** @typedef {import('../../dist/nodes/shared/webhook/providers').ProviderDefinition} ProviderDefinition */
/** @typedef {import('n8n-workflow').INodeProperties} INodeProperties */

// A made-up provider that signs like Generic HMAC with a timestamp (`X-Acme-Signature: v1=<base64
// HMAC-SHA512 of "<timestamp>.<body>">`), so its reader is the generic one, configured.
const { label: _genericLabel, ...acmeSignature } = hmacScheme({
	header: 'X-Acme-Signature',
	algorithm: 'sha512',
	encoding: 'base64',
	signaturePrefix: 'v1=',
	timestampHeader: 'X-Acme-Timestamp',
});
/** @type {ProviderDefinition} */
const ACME = {
	value: 'acme',
	label: 'Acme Hooks',
	eventId: { kind: 'headers', names: ['X-Acme-Delivery', 'X-Acme-Event'] },
	signature: acmeSignature,
	description: 'X-Acme-Signature: v1=… (HMAC-SHA512 base64 of "timestamp.body")',
};
/** A made-up provider without a timestamp, its event id in the body. */
/** @type {ProviderDefinition} */
const PLAIN = {
	value: 'plainHooks',
	label: 'Plain Hooks',
	eventId: { kind: 'body', path: ['meta', 'delivery_id'] },
	signature: { ...SIGNATURE_SCHEMES.github, headers: ['X-Plain-Signature'] },
	description: 'X-Plain-Signature (HMAC-SHA256 hex of the body)',
};
const TABLE = [...PROVIDERS, ACME, PLAIN];

/** @param {INodeProperties[]} properties @param {string} name */
function property(properties, name) {
	const found = properties.find((candidate) => candidate.name === name);
	if (found === undefined) throw new Error(`no property ${name}`);
	return found;
}

describe('the real table makes what the nodes use', () => {
	test('the key sources, schemes and provider lists are its derivations', () => {
		expect(KEY_SOURCES).toEqual(keySourcesFrom(PROVIDERS, MESSAGE_PRESETS));
		expect(SIGNATURE_SCHEMES).toEqual(schemesFrom(PROVIDERS));
		expect(PROVIDER_OPTIONS).toEqual(providerListFrom(PROVIDERS));
		expect(providerOptions).toEqual(providerOptionsFrom(PROVIDERS));
		expect(verifySubtitle).toBe(verifySubtitleFrom(PROVIDERS));
	});

	test("Verify Webhook Signature's subtitle, Provider options and tolerance", () => {
		const { description } = new VerifyWebhookSignature();
		expect(description.subtitle).toBe(verifySubtitleFrom(PROVIDERS));
		// The text it had when it was written by hand, byte for byte.
		expect(description.subtitle).toBe(
			'={{ {"stripe": "Stripe", "github": "GitHub", "shopify": "Shopify", "standardWebhooks": "Standard Webhooks", "svix": "Svix", "slack": "Slack", "hmac": "Generic HMAC"}[$parameter["provider"]] }}',
		);
		expect(property(description.properties, 'provider').options).toEqual(
			providerOptionsFrom(PROVIDERS),
		);
		expect(property(description.properties, 'toleranceSeconds').displayOptions).toEqual({
			show: { provider: timestampedFrom(PROVIDERS) },
		});
	});

	test("Idempotency Reserve's Verify Signature options and tolerance", () => {
		const { description } = new IdempotencyReserve();
		const signature = property(description.properties, 'signature');
		expect(signature.options.slice(1)).toEqual(providerOptionsFrom(PROVIDERS));
		expect(property(description.properties, 'toleranceSeconds').displayOptions).toEqual({
			show: { signature: timestampedFrom(PROVIDERS) },
		});
	});

	test('a scheme signs only headers it reads; Generic HMAC signs its timestamp header only', () => {
		const lower = (names) => names.map((name) => name.toLowerCase());
		for (const { value, signature } of [...PROVIDERS, ACME, PLAIN]) {
			const read = lower(signature.headers);
			for (const name of lower(signature.signedHeaders))
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

	test('its order is the one of the node panel: Stripe first, Generic HMAC last', () => {
		expect(PROVIDER_OPTIONS.map(({ value }) => value)).toEqual([
			'stripe',
			'github',
			'shopify',
			'standardWebhooks',
			'svix',
			'slack',
			'hmac',
		]);
		expect(timestampedFrom(PROVIDERS)).toEqual([
			'stripe',
			'standardWebhooks',
			'svix',
			'slack',
			'hmac',
		]);
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
			...KEY_SOURCES.slice(1 + PROVIDERS.length).map(({ value }) => value),
		]);
		expect(sources.find(({ value }) => value === 'acme')).toEqual({
			value: 'acme',
			name: 'Acme Hooks',
			subtitle: 'Acme Hooks',
			location: ACME.eventId,
			description:
				'Key "evt:" + the X-Acme-Delivery header, else the X-Acme-Event header, else SHA-256 of the raw body',
		});
		expect(sources.find(({ value }) => value === 'plainHooks')).toMatchObject({
			location: PLAIN.eventId,
			description: 'Key "evt:" + body.meta.delivery_id, else SHA-256 of the raw body',
		});
	});

	test('it becomes a signature scheme that verifies its deliveries', () => {
		const schemes = schemesFrom(TABLE);
		expect(Object.keys(schemes)).toEqual([...Object.keys(SIGNATURE_SCHEMES), 'acme', 'plainHooks']);
		expect(schemes.acme).toEqual({ label: 'Acme Hooks', ...acmeSignature });

		const secret = 'acme-secret';
		const body = '{"type":"order.paid"}';
		const now = 1_700_000_000;
		const sign = (/** @type {string} */ key) =>
			createHmac('sha512', key).update(`${now}.${body}`).digest('base64');
		const signature = sign(secret);
		const headers = { 'x-acme-signature': `v1=${signature}`, 'x-acme-timestamp': String(now) };
		const keys = [signingKey(secret, schemes.acme.secretFormat, 'secret')];
		const verify = (/** @type {Record<string, string>} */ sent, nowSeconds = now) =>
			verifySignature(schemes.acme, sent, Buffer.from(body), keys, {
				nowSeconds,
				toleranceSeconds: 300,
			});
		expect(verify(headers)).toEqual({ valid: true });
		expect(verify(headers, now + 301)).toEqual({
			valid: false,
			reason: 'timestamp_out_of_tolerance',
		});
		expect(verify({ ...headers, 'x-acme-signature': `v1=${sign('other')}` })).toEqual({
			valid: false,
			reason: 'mismatch',
		});
	});

	test('it becomes a panel option with its description, before Generic HMAC', () => {
		expect(providerListFrom(TABLE).slice(-3)).toEqual([
			{ value: 'acme', label: 'Acme Hooks' },
			{ value: 'plainHooks', label: 'Plain Hooks' },
			{ value: 'hmac', label: 'Generic HMAC' },
		]);
		expect(providerOptionsFrom(TABLE)).toEqual([
			...providerOptions.slice(0, -1),
			{ name: 'Acme Hooks', value: 'acme', description: ACME.description },
			{ name: 'Plain Hooks', value: 'plainHooks', description: PLAIN.description },
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
			'"slack": "Slack", "acme": "Acme Hooks", "plainHooks": "Plain Hooks", "hmac": "Generic HMAC"}',
		);
	});

	test("with a timestamp it shows the tolerance, in both nodes' settings; without one it does not", () => {
		expect(timestampedFrom(TABLE)).toEqual([
			...timestampedFrom(PROVIDERS).slice(0, -1),
			'acme',
			'hmac',
		]);
		for (const control of ['provider', 'signature']) {
			const tolerance = property(schemeSettingProperties(control, TABLE), 'toleranceSeconds');
			expect(tolerance.displayOptions.show[control]).toContain('acme');
			expect(tolerance.displayOptions.show[control]).not.toContain('plainHooks');
		}
		// Without a table, the real one.
		expect(schemeSettingProperties('provider')).toEqual(
			schemeSettingProperties('provider', PROVIDERS),
		);
	});
});
