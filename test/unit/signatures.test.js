// The scheme table and the verifier, against deliveries signed by each provider's own library,
// both ways: what the library signs we accept; what we reject, the library rejects too.
const { describe, test, expect } = require('@jest/globals');
const { createHmac } = require('node:crypto');
const {
	SIGNATURE_SCHEMES,
	hmacScheme,
} = require('../../dist/nodes/shared/webhook/signatureSchemes');
const {
	SigningSecretError,
	signingKey,
	verifySignature,
} = require('../../dist/nodes/shared/webhook/verifySignature');
const { PROVIDERS, nowSeconds, loadOctokit } = require('../support/providerVectors');
const { VECTORS } = require('../vectors');

const BODY =
	'{"id":"evt_1NvXYZ","type":"payment_intent.succeeded","data":{"object":{"amount":2000}}}';
// Same length, one byte different, still JSON (libraries that parse on success must not fail on parsing).
const TAMPERED = BODY.replace('2000', '2001');

function ours(
	provider,
	body,
	headers,
	secrets,
	{ now = nowSeconds(), tolerance = 300, scheme = SIGNATURE_SCHEMES[provider] } = {},
) {
	const keys = secrets.map((secret) => signingKey(secret, scheme.secretFormat, 'secret'));
	return verifySignature(scheme, { headers, body: Buffer.from(body) }, keys, {
		nowSeconds: now,
		toleranceSeconds: tolerance,
	});
}

function cutShort(headers, name) {
	return { ...headers, [name]: headers[name].slice(0, -3) };
}

describe.each(Object.keys(PROVIDERS))('%s', (provider) => {
	const kit = PROVIDERS[provider];

	test('a delivery its library signed is valid', async () => {
		const headers = await kit.sign(BODY, { secret: kit.secret });
		expect(ours(provider, BODY, headers, [kit.secret])).toEqual({ valid: true });
		if (kit.accepts) expect(await kit.accepts(BODY, headers, kit.secret)).toBe(true);
	});

	/** @type {Array<[string, () => Promise<[string, Record<string, string>]>, string]>} */
	const rejections = [
		[
			'one body byte changed',
			async () => [TAMPERED, await kit.sign(BODY, { secret: kit.secret })],
			'mismatch',
		],
		[
			'the wrong secret',
			async () => [BODY, await kit.sign(BODY, { secret: kit.otherSecret })],
			'mismatch',
		],
		[
			'the signature header cut short',
			async () => [
				BODY,
				cutShort(await kit.sign(BODY, { secret: kit.secret }), kit.signatureHeader),
			],
			'malformed',
		],
		[
			'no signature header',
			async () => {
				const headers = await kit.sign(BODY, { secret: kit.secret });
				delete headers[kit.signatureHeader];
				return [BODY, headers];
			},
			'missing_header',
		],
	];
	if (kit.hasTimestamp) {
		rejections.push([
			'a timestamp 301 s old (a replay)',
			async () => [
				BODY,
				await kit.sign(BODY, { secret: kit.secret, timestamp: nowSeconds() - 301 }),
			],
			'timestamp_out_of_tolerance',
		]);
	}

	test.each(rejections)('rejected, by us and by the library: %s', async (_label, make, reason) => {
		const [body, headers] = await make();
		expect(ours(provider, body, headers, [kit.secret])).toEqual({ valid: false, reason });
		if (kit.accepts) expect(await kit.accepts(body, headers, kit.secret)).toBe(false);
	});

	test('rotation: a delivery signed with the previous secret is valid when both are given', async () => {
		const headers = await kit.sign(BODY, { secret: kit.otherSecret });
		expect(ours(provider, BODY, headers, [kit.secret, kit.otherSecret])).toEqual({ valid: true });
		expect(ours(provider, BODY, headers, [kit.secret])).toEqual({
			valid: false,
			reason: 'mismatch',
		});
	});

	test('header names in any case', async () => {
		const headers = await kit.sign(BODY, { secret: kit.secret });
		const shouting = Object.fromEntries(
			Object.entries(headers).map(([name, value]) => [name.toUpperCase(), value]),
		);
		expect(ours(provider, BODY, shouting, [kit.secret])).toEqual({ valid: true });
	});

	test('a signature header given as an array, or twice under two spellings, is malformed', async () => {
		const headers = await kit.sign(BODY, { secret: kit.secret });
		const value = headers[kit.signatureHeader];
		expect(
			ours(provider, BODY, { ...headers, [kit.signatureHeader]: [value] }, [kit.secret]),
		).toEqual({ valid: false, reason: 'malformed' });
		const twice = { ...headers, [kit.signatureHeader.toUpperCase()]: value };
		expect(ours(provider, BODY, twice, [kit.secret])).toEqual({
			valid: false,
			reason: 'malformed',
		});
	});

	test('the same header sent twice and joined by the HTTP layer ("a, a") is malformed, even with two valid copies', async () => {
		const headers = await kit.sign(BODY, { secret: kit.secret });
		const joined = {
			...headers,
			[kit.signatureHeader]: `${headers[kit.signatureHeader]}, ${headers[kit.signatureHeader]}`,
		};
		expect(ours(provider, BODY, joined, [kit.secret])).toEqual({
			valid: false,
			reason: 'malformed',
		});
	});

	test('exact bytes: the same JSON re-serialised with other spacing does not verify', async () => {
		const spaced = JSON.stringify(JSON.parse(BODY), null, 1);
		const headers = await kit.sign(BODY, { secret: kit.secret });
		expect(ours(provider, spaced, headers, [kit.secret])).toEqual({
			valid: false,
			reason: 'mismatch',
		});
	});

	if (kit.hasTimestamp) {
		test('tolerance applies both ways and is inclusive', async () => {
			const now = nowSeconds();
			for (const [offset, valid] of /** @type {Array<[number, boolean]>} */ ([
				[-300, true],
				[300, true],
				[-301, false],
				[301, false],
			])) {
				const headers = await kit.sign(BODY, { secret: kit.secret, timestamp: now + offset });
				expect(ours(provider, BODY, headers, [kit.secret], { now }).valid).toBe(valid);
			}
			const old = await kit.sign(BODY, { secret: kit.secret, timestamp: now - 3600 });
			expect(ours(provider, BODY, old, [kit.secret], { now, tolerance: 3601 })).toEqual({
				valid: true,
			});
		});

		test('a forged signature with a stale timestamp reports the mismatch, not the age', async () => {
			const headers = await kit.sign(BODY, {
				secret: kit.otherSecret,
				timestamp: nowSeconds() - 3600,
			});
			expect(ours(provider, BODY, headers, [kit.secret])).toEqual({
				valid: false,
				reason: 'mismatch',
			});
		});
	}
});

describe('stripe specifics', () => {
	const { secret, otherSecret, sign, accepts } = PROVIDERS.stripe;
	const v1Of = (header) =>
		header
			.split(',')
			.find((part) => part.startsWith('v1='))
			.slice(3);

	test('several v1 signatures (Stripe during a secret rotation): valid when any one matches; v0 is ignored', async () => {
		const t = nowSeconds();
		const withOther = (await sign(BODY, { secret: otherSecret, timestamp: t }))['stripe-signature'];
		const withOurs = (await sign(BODY, { secret, timestamp: t }))['stripe-signature'];
		const header = `t=${t},v1=${v1Of(withOther)},v1=${v1Of(withOurs)},v0=${'0'.repeat(64)}`;
		expect(ours('stripe', BODY, { 'stripe-signature': header }, [secret])).toEqual({ valid: true });
		expect(await accepts(BODY, { 'stripe-signature': header }, secret)).toBe(true);
	});

	test('only v0 signatures: malformed (Stripe does not sign with v0 any more)', () => {
		expect(
			ours('stripe', BODY, { 'stripe-signature': `t=${nowSeconds()},v0=${'a'.repeat(64)}` }, [
				secret,
			]),
		).toEqual({
			valid: false,
			reason: 'malformed',
		});
	});

	test.each([
		['no t', (h) => h.replace(/^t=\d+,/, '')],
		['t not a number', (h) => h.replace(/^t=\d+/, 't=soon')],
		['a v1 that is not hex', (h) => h.replace(/v1=.{4}/, 'v1=zzzz')],
	])('malformed header: %s', async (_label, change) => {
		const header = change((await sign(BODY, { secret }))['stripe-signature']);
		expect(ours('stripe', BODY, { 'stripe-signature': header }, [secret])).toEqual({
			valid: false,
			reason: 'malformed',
		});
		expect(await accepts(BODY, { 'stripe-signature': header }, secret)).toBe(false);
	});

	test('stricter than Stripe\'s library where Stripe never sends such a header: a part without "=", a second t', async () => {
		const header = (await sign(BODY, { secret }))['stripe-signature'];
		for (const odd of [`${header},garbage`, `${header},t=${nowSeconds()}`]) {
			expect(ours('stripe', BODY, { 'stripe-signature': odd }, [secret])).toEqual({
				valid: false,
				reason: 'malformed',
			});
		}
	});
});

describe('standard webhooks specifics', () => {
	const { secret, otherSecret, sign, accepts } = PROVIDERS.standardWebhooks;

	test('a space-separated list: v1 for either secret and an ed25519 v1a entry; valid when one v1 matches', async () => {
		const t = nowSeconds();
		const mine = (await sign(BODY, { secret, timestamp: t }))['webhook-signature'];
		const other = await sign(BODY, { secret: otherSecret, timestamp: t });
		const headers = {
			...other,
			'webhook-signature': `v1a,${'A'.repeat(86)}== ${other['webhook-signature']} ${mine}`,
		};
		expect(ours('standardWebhooks', BODY, headers, [secret])).toEqual({ valid: true });
		expect(await accepts(BODY, headers, secret)).toBe(true);
	});

	test('the id is signed: the same signature under another webhook-id is a mismatch', async () => {
		const headers = { ...(await sign(BODY, { secret })), 'webhook-id': 'msg_someone_else' };
		expect(ours('standardWebhooks', BODY, headers, [secret])).toEqual({
			valid: false,
			reason: 'mismatch',
		});
		expect(await accepts(BODY, headers, secret)).toBe(false);
	});

	test('a secret without the whsec_ prefix is decoded too; one that is not base64 is refused without echoing it', () => {
		expect(signingKey(secret.slice('whsec_'.length), 'whsecBase64', 'secret')).toEqual(
			signingKey(secret, 'whsecBase64', 'secret'),
		);
		const bad = 'whsec_this is not base64!';
		let error;
		try {
			signingKey(bad, 'whsecBase64', 'secret');
		} catch (caught) {
			error = caught;
		}
		expect(error).toBeInstanceOf(SigningSecretError);
		expect(error.message).not.toContain('this is not base64');
		expect(() => signingKey('', 'text', 'secret')).toThrow(/empty/);
	});

	test('svix headers are not standard webhooks headers', async () => {
		const headers = await PROVIDERS.svix.sign(BODY, { secret });
		expect(ours('standardWebhooks', BODY, headers, [secret])).toEqual({
			valid: false,
			reason: 'missing_header',
		});
	});
});

test("slack: the example from Slack's documentation verifies", () => {
	const body =
		'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
	const headers = {
		'X-Slack-Request-Timestamp': '1531420618',
		'X-Slack-Signature': 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
	};
	expect(
		ours('slack', body, headers, ['8f742231b10e8888abcd99yyyzzz85a5'], { now: 1531420618 + 10 }),
	).toEqual({ valid: true });
	expect(ours('slack', body, headers, ['8f742231b10e8888abcd99yyyzzz85a5'])).toEqual({
		valid: false,
		reason: 'timestamp_out_of_tolerance',
	});
});

describe('generic HMAC', () => {
	test('set up like GitHub, it accepts what Octokit signs', async () => {
		const scheme = hmacScheme({
			header: 'X-Hub-Signature-256',
			algorithm: 'sha256',
			encoding: 'hex',
			signaturePrefix: 'sha256=',
			timestampHeader: '',
		});
		const secret = 'generic-secret';
		const headers = { 'x-hub-signature-256': await (await loadOctokit()).sign(secret, BODY) };
		expect(ours('hmac', BODY, headers, [secret], { scheme })).toEqual({ valid: true });
		expect(ours('hmac', TAMPERED, headers, [secret], { scheme })).toEqual({
			valid: false,
			reason: 'mismatch',
		});
		expect(
			ours(
				'hmac',
				BODY,
				{ 'x-hub-signature-256': headers['x-hub-signature-256'].slice(7) },
				[secret],
				{ scheme },
			),
		).toEqual({
			valid: false,
			reason: 'malformed',
		});
	});

	test.each(
		/** @type {Array<['sha512' | 'sha1' | 'sha256', 'base64' | 'hex']>} */ ([
			['sha512', 'base64'],
			['sha1', 'hex'],
			['sha256', 'base64'],
		]),
	)(
		'%s %s with a timestamp header: signs "<timestamp>.<raw body>" and checks the tolerance',
		(algorithm, encoding) => {
			const scheme = hmacScheme({
				header: 'X-Signature',
				algorithm,
				encoding,
				signaturePrefix: '',
				timestampHeader: 'X-Timestamp',
			});
			const secret = 'generic-secret';
			const now = nowSeconds();
			const signed = (t) => ({
				'x-signature': createHmac(algorithm, secret).update(`${t}.${BODY}`).digest(encoding),
				'x-timestamp': String(t),
			});
			expect(ours('hmac', BODY, signed(now), [secret], { scheme })).toEqual({ valid: true });
			expect(ours('hmac', BODY, signed(now - 301), [secret], { scheme })).toEqual({
				valid: false,
				reason: 'timestamp_out_of_tolerance',
			});
			expect(
				ours('hmac', BODY, { 'x-signature': signed(now)['x-signature'] }, [secret], { scheme }),
			).toEqual({
				valid: false,
				reason: 'missing_header',
			});
			// A signature of the body alone is not accepted when the timestamp is part of the content.
			const bodyOnly = {
				...signed(now),
				'x-signature': createHmac(algorithm, secret).update(BODY).digest(encoding),
			};
			expect(ours('hmac', BODY, bodyOnly, [secret], { scheme })).toEqual({
				valid: false,
				reason: 'mismatch',
			});
		},
	);

	test('a signature of the wrong length for the algorithm is malformed', () => {
		const scheme = hmacScheme({
			header: 'X-Signature',
			algorithm: 'sha512',
			encoding: 'hex',
			signaturePrefix: '',
			timestampHeader: '',
		});
		const sha256 = createHmac('sha256', 's').update(BODY).digest('hex');
		expect(ours('hmac', BODY, { 'x-signature': sha256 }, ['s'], { scheme })).toEqual({
			valid: false,
			reason: 'malformed',
		});
	});
});

test('every scheme in the table reads its headers and has a label', () => {
	for (const [value, scheme] of Object.entries(SIGNATURE_SCHEMES)) {
		expect(scheme.label).toBeTruthy();
		// A shared secret in the body (Graph's clientState) reads no header: tested in providerVectors.
		if (scheme.kind === 'sharedSecret' && scheme.location.in !== 'header') continue;
		expect(scheme.headers.length).toBeGreaterThan(0);
		expect(ours(value, BODY, {}, [VECTORS[value].secret])).toEqual({
			valid: false,
			reason: 'missing_header',
		});
	}
});

test("twilio: repeated parameters as Twilio's own test signs them (deduplicated, then sorted)", () => {
	// twilio-node spec/validation.spec.js @45d3d65a, "should validate request body with multiple params and values".
	const body = 'Sid=CA123&SidAccount=AC123&Digits=5678&Digits=1234&Digits=1234';
	const scheme = SIGNATURE_SCHEMES.twilio;
	const verdict = (signature) =>
		verifySignature(
			scheme,
			{
				headers: { 'x-twilio-signature': signature },
				body: Buffer.from(body),
				url: 'https://mycompany.com/myapp.php?foo=1&bar=2',
			},
			[signingKey('12345', scheme.secretFormat, 'secret')],
			{ nowSeconds: 0, toleranceSeconds: 300 },
		);
	expect(verdict('IK+Dwps556ElfBT0I3Rgjkr1wJU=')).toEqual({ valid: true });
	expect(verdict('RSOYDt4T1cUTdK1PDd93/VVr8B8=')).toEqual({ valid: false, reason: 'mismatch' });
});
