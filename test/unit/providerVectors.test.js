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
/** @type {Array<[string, any]>} the providers that sign */
const CASES = VERIFIABLE.filter((provider) => !('sharedSecret' in provider.signing)).map(
	(provider) => [provider.value, provider],
);
/** @type {Array<[string, any]>} the providers proven by a shared secret (nothing signed) */
const SHARED_SECRET_CASES = VERIFIABLE.filter((provider) => 'sharedSecret' in provider.signing).map(
	(provider) => [provider.value, provider],
);

/** @param {import('../vectors').Delivery} delivery */
function check(value, delivery, secret, nowSeconds = delivery.nowSeconds) {
	const scheme = SIGNATURE_SCHEMES[value];
	const provider = VERIFIABLE.find((candidate) => candidate.value === value);
	return verifySignature(
		scheme,
		{ headers: delivery.headers, body: Buffer.from(delivery.body), url: delivery.url },
		[signingKey(secret, scheme.secretFormat, 'secret')],
		{ nowSeconds, toleranceSeconds: provider.signing.toleranceSeconds ?? 0 },
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

/** The delivery's JSON body changed by `change` (a copy), as bytes. */
function changedJson(delivery, change) {
	const json = JSON.parse(Buffer.from(delivery.body).toString('utf8'));
	change(json);
	return { ...delivery, body: JSON.stringify(json) };
}

/** The array of secret-bearing elements of a bodyArray location. */
function secretArray(json, location) {
	return location.array.reduce((value, step) => value[step], json);
}

// A shared secret (Microsoft Graph's clientState, Okta's authorization header) signs nothing: the
// documented delivery is valid, the secret anywhere missing or wrong is refused, and the body is
// NOT protected (a changed body with the right secret stays valid: why the table says to read the
// resource from the sender's API before acting).
describe.each(SHARED_SECRET_CASES)('%s (shared secret)', (value, provider) => {
	const vector = VECTORS[value];
	const location = provider.signing.sharedSecret;

	test('its documented delivery is valid', async () => {
		expect(check(value, await vector.genuine(), vector.secret)).toEqual({ valid: true });
	});

	test('another secret: mismatch', async () => {
		expect(check(value, await vector.genuine(), vector.otherSecret)).toEqual({
			valid: false,
			reason: 'mismatch',
		});
	});

	test('the body is not integrity-protected: a field added with the secret kept is still valid', async () => {
		const changed = changedJson(await vector.genuine(), (json) => {
			json.forged = true;
		});
		expect(check(value, changed, vector.secret)).toEqual({ valid: true });
	});

	test('the time of checking does not matter (nothing dated)', async () => {
		const delivery = await vector.genuine();
		expect(check(value, delivery, vector.secret, delivery.nowSeconds + 10 * 86400)).toEqual({
			valid: true,
		});
	});

	if (location.in === 'header') {
		test('the secret header missing or empty: missing_header; sent twice: malformed', async () => {
			const delivery = await vector.genuine();
			const headers = without(delivery.headers, location.header);
			expect(Object.keys(headers).length).toBeLessThan(Object.keys(delivery.headers).length);
			const withHeader = (/** @type {unknown} */ sent) => ({
				...delivery,
				headers: { ...headers, [location.header.toLowerCase()]: sent },
			});
			for (const lacking of [{ ...delivery, headers }, withHeader('')])
				expect(check(value, lacking, vector.secret)).toEqual({
					valid: false,
					reason: 'missing_header',
				});
			// Two copies joined or kept apart are never half-trusted, even if one of them is the secret.
			expect(check(value, withHeader([vector.secret, vector.secret]), vector.secret)).toEqual({
				valid: false,
				reason: 'malformed',
			});
		});

		test('the secret with anything around it (a "Bearer " prefix, a space): mismatch', async () => {
			const delivery = await vector.genuine();
			const headers = without(delivery.headers, location.header);
			for (const sent of [`Bearer ${vector.secret}`, `${vector.secret} `, vector.secret.slice(1)])
				expect(
					check(
						value,
						{ ...delivery, headers: { ...headers, [location.header.toLowerCase()]: sent } },
						vector.secret,
					),
				).toEqual({ valid: false, reason: 'mismatch' });
		});
	} else {
		test('one of several elements with another secret: the whole delivery refused (mismatch)', async () => {
			const forged = changedJson(await vector.genuine(), (json) => {
				const array = secretArray(json, location);
				array.push({ ...array[0], [location.field]: vector.otherSecret });
			});
			expect(check(value, forged, vector.secret)).toEqual({ valid: false, reason: 'mismatch' });
			const both = changedJson(await vector.genuine(), (json) => {
				const array = secretArray(json, location);
				array.push({ ...array[0] });
			});
			expect(check(value, both, vector.secret)).toEqual({ valid: true });
		});

		test('an element without the secret, an empty array, no array, not JSON: malformed', async () => {
			const delivery = await vector.genuine();
			const variants = [
				changedJson(delivery, (json) => {
					delete secretArray(json, location)[0][location.field];
				}),
				changedJson(delivery, (json) => {
					secretArray(json, location).length = 0;
				}),
				changedJson(delivery, (json) => {
					delete json[location.array[0]];
				}),
				{ ...delivery, body: 'not json' },
			];
			for (const variant of variants)
				expect(check(value, variant, vector.secret)).toEqual({ valid: false, reason: 'malformed' });
		});
	}
});
