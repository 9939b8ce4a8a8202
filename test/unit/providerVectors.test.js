// Every verifiable provider of the table (nodes/shared/webhook/providers/) against its test vector
// (test/vectors/): the provider's documented example, or a delivery its official library signed.
// For each: the genuine delivery is valid; one changed byte, another secret, a missing signature
// header and a stale timestamp are refused; where the library gives a verdict, it agrees. The list
// of providers is the table's: a provider added without a vector fails here.
const { describe, test, expect } = require('@jest/globals');
const { PROVIDERS, verifiableFrom } = require('../../dist/nodes/shared/webhook/providers');
const { SIGNATURE_SCHEMES } = require('../../dist/nodes/shared/webhook/signatureSchemes');
const { signingKey, verifySignature } = require('../../dist/nodes/shared/webhook/verifySignature');
const { VECTORS } = require('../vectors');

/** @type {any[]} the table's verifiable providers (plain data for the tests) */
const VERIFIABLE = verifiableFrom(PROVIDERS);
/** @type {Array<[string, any]>} */
const CASES = VERIFIABLE.map((provider) => [provider.value, provider]);

/** @param {import('../vectors').Delivery} delivery */
function check(value, delivery, secret, nowSeconds = delivery.nowSeconds) {
	const scheme = SIGNATURE_SCHEMES[value];
	const provider = VERIFIABLE.find((candidate) => candidate.value === value);
	return verifySignature(
		scheme,
		{ headers: delivery.headers, body: Buffer.from(delivery.body), url: delivery.url },
		[signingKey(secret, scheme.secretFormat, 'secret')],
		{ nowSeconds, toleranceSeconds: provider.signing.toleranceSeconds ?? 300 },
	);
}

/**
 * The body with one letter or digit changed, chosen so a JSON body stays JSON and a form stays a
 * form (the check must then fail on the signature, not on reading).
 */
function oneByteChanged(body) {
	const bytes = Buffer.from(body);
	const text = bytes.toString('latin1');
	const isJson = (() => {
		try {
			JSON.parse(bytes.toString('utf8'));
			return true;
		} catch {
			return false;
		}
	})();
	for (let offset = 0; offset < bytes.length; offset++) {
		const i = (Math.floor(bytes.length / 2) + offset) % bytes.length;
		if (!/[A-Za-z0-9]/.test(text[i])) continue;
		const changed = Buffer.from(bytes);
		changed[i] = text[i] === 'x' ? 0x79 : 0x78;
		if (isJson) {
			try {
				JSON.parse(changed.toString('utf8'));
			} catch {
				continue;
			}
		}
		return changed;
	}
	throw new Error('no letter or digit to change in the body');
}

const without = (headers, name) =>
	Object.fromEntries(
		Object.entries(headers).filter(([header]) => header.toLowerCase() !== name.toLowerCase()),
	);

test('every verifiable provider has a vector, named with its source, and no vector lacks a provider', () => {
	const values = VERIFIABLE.map(({ value }) => value);
	expect(values.filter((value) => VECTORS[value] === undefined)).toEqual([]);
	expect(Object.keys(VECTORS).filter((value) => !values.includes(value))).toEqual([]);
	for (const value of values) {
		const vector = VECTORS[value];
		expect([value, ['documented', 'library'].includes(vector.kind)]).toEqual([value, true]);
		expect([value, vector.source.length > 10]).toEqual([value, true]);
		if (vector.kind === 'documented') expect(vector.source).toMatch(/https:\/\//);
		else expect(vector.accepts ?? vector.source).toBeDefined();
		expect(vector.otherSecret).not.toBe(vector.secret);
	}
});

describe.each(CASES)('%s', (value, provider) => {
	const vector = VECTORS[value];
	const scheme = SIGNATURE_SCHEMES[value];

	test('its genuine delivery is valid', async () => {
		expect(check(value, await vector.genuine(), vector.secret)).toEqual({ valid: true });
	});

	test('one changed byte of the body: mismatch', async () => {
		const delivery = await vector.genuine();
		const changed = { ...delivery, body: oneByteChanged(delivery.body) };
		expect(check(value, changed, vector.secret)).toEqual({ valid: false, reason: 'mismatch' });
	});

	test('another secret: mismatch', async () => {
		expect(check(value, await vector.genuine(), vector.otherSecret)).toEqual({
			valid: false,
			reason: 'mismatch',
		});
	});

	test('the signature header missing: missing_header', async () => {
		const delivery = await vector.genuine();
		const [first] = provider.signing.signatureHeaders;
		const headers = without(delivery.headers, first);
		expect(Object.keys(headers).length).toBeLessThan(Object.keys(delivery.headers).length);
		expect(check(value, { ...delivery, headers }, vector.secret)).toEqual({
			valid: false,
			reason: 'missing_header',
		});
	});

	test('a timestamp beyond the tolerance, either way: refused (schemes that sign one)', async () => {
		const delivery = await vector.genuine();
		const tolerance = provider.signing.toleranceSeconds ?? 300;
		if (!scheme.hasTimestamp) {
			// Without a timestamp the time of checking cannot matter (the replay guard covers replays).
			expect(check(value, delivery, vector.secret, delivery.nowSeconds + 10 * 86400)).toEqual({
				valid: true,
			});
			return;
		}
		for (const now of [delivery.nowSeconds + tolerance + 2, delivery.nowSeconds - tolerance - 2])
			expect(check(value, delivery, vector.secret, now)).toEqual({
				valid: false,
				reason: 'timestamp_out_of_tolerance',
			});
	});

	if (vector?.accepts)
		test("the provider's own library agrees: genuine accepted, changed refused", async () => {
			const delivery = await vector.genuine();
			expect(await vector.accepts(delivery, vector.secret)).toBe(true);
			expect(
				await vector.accepts({ ...delivery, body: oneByteChanged(delivery.body) }, vector.secret),
			).toBe(false);
		});
});
