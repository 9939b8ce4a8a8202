// "Nothing secret stored": what Answer First stores of a delivery (storedDelivery.ts) holds no
// secret of any sender of the provider table, whatever the headers named: not the shared secret a
// sender repeats (Graph's value[].clientState, Okta's header), not a body field its entry marks
// secret (Slack's legacy token…), not a signature header of any scheme, not a query parameter
// named as a credential. The senders are read from the table, so a new entry is covered as added.
const { test, expect, describe } = require('@jest/globals');
const fc = require('fast-check');

const {
	forbiddenStoredHeader,
	storedDeliveryOf,
	storedHeaderNames,
} = require('../../dist/nodes/shared/delivery/storedDelivery');
const { PROVIDERS } = require('../../dist/nodes/shared/webhook/providers');

/** @type {readonly any[]} */
const TABLE = PROVIDERS;

/** Where a sender's deliveries carry a secret, read from its entry: body paths and header names. */
function secretPlaces({ signing, secretParts }) {
	const body = [...(secretParts?.body ?? [])];
	const headers = [...(secretParts?.headers ?? [])];
	if ('sharedSecret' in signing) {
		const at = signing.sharedSecret;
		if (at.in === 'header') headers.push(at.header);
		else body.push([...at.array, '*', at.field]);
	}
	if ('signatureHeaders' in signing) headers.push(...signing.signatureHeaders);
	return { body, headers };
}

/** `body` with `value` at `path` (`*`: two elements), and a business field beside each step. */
function placed(body, path, value) {
	if (path.length === 0) return value;
	const [step, ...rest] = path;
	if (step === '*') {
		const array = Array.isArray(body) ? body : [{ kept: 'a' }, { kept: 'b' }];
		return array.map((element) => placed(element, rest, value));
	}
	const object = body !== null && typeof body === 'object' ? body : { kept: 'business' };
	return { ...object, [step]: placed(object[step], rest, value) };
}

const SECRET = 'S3CRET-VALUE';

/** The stored delivery of a request carrying a secret everywhere the sender puts one, all named. */
function storedFor(provider) {
	const places = secretPlaces(provider);
	let body = { event_id: 'Ev1', kept: 'business' };
	for (const path of places.body) body = placed(body, path, `${SECRET}-${path.join('.')}`);
	const headers = Object.fromEntries(places.headers.map((name) => [name, `${SECRET}-${name}`]));
	/** @type {any} */
	const outcome = storedDeliveryOf(
		{ headers: { ...headers, 'X-Kept': 'yes' }, body, query: { page: '2' } },
		// Named as if Also Store Headers or the signed headers held them: this is the last word.
		storedHeaderNames(Object.keys(headers), ['x-kept']),
	);
	return { places, stored: outcome.delivery };
}

const SHARED_SECRET_OR_TOKEN = TABLE.filter(
	(provider) => 'sharedSecret' in provider.signing || (provider.secretParts?.body?.length ?? 0) > 0,
);

test('the table marks the shared-secret and token-bearing senders (Graph, Okta, Slack among them)', () => {
	expect(SHARED_SECRET_OR_TOKEN.map(({ value }) => value)).toEqual(
		expect.arrayContaining(['microsoftGraph', 'oktaEventHooks', 'slack']),
	);
});

describe.each(SHARED_SECRET_OR_TOKEN.map((provider) => [provider.label, provider]))(
	'%s',
	(_label, provider) => {
		test('its stored delivery holds no secret value; the business fields stay', () => {
			const { places, stored } = storedFor(provider);
			expect(places.body.length + places.headers.length).toBeGreaterThan(0);
			expect(JSON.stringify(stored)).not.toContain(SECRET);
			expect(stored.body).toMatchObject({ event_id: 'Ev1', kept: 'business' });
			expect(stored.headers['x-kept']).toBe('yes');
			expect(stored.query).toEqual({ page: '2' });
		});
	},
);

test('no signature or credential header of any sender is stored, even named', () => {
	for (const provider of TABLE) {
		const { stored } = storedFor(provider);
		expect([provider.value, JSON.stringify(stored.headers)]).toEqual([
			provider.value,
			expect.not.stringContaining(SECRET),
		]);
	}
});

test("a Graph notification keeps everything but each element's clientState", () => {
	const body = {
		value: [
			{ subscriptionId: 's1', clientState: 'secretClientValue', resource: 'users/1/messages/2' },
			{ subscriptionId: 's1', clientState: 'secretClientValue', resource: 'users/1/messages/3' },
		],
	};
	/** @type {any} */
	const outcome = storedDeliveryOf({ headers: {}, body, query: {} }, storedHeaderNames([]));
	expect(outcome.delivery.body).toEqual({
		value: [
			{ subscriptionId: 's1', resource: 'users/1/messages/2' },
			{ subscriptionId: 's1', resource: 'users/1/messages/3' },
		],
	});
	// The item the business step runs now is not changed.
	expect(body.value[0].clientState).toBe('secretClientValue');
});

test('query parameters named as a credential are not stored, whatever their case; others are', () => {
	const secret = [
		'token',
		'access_token',
		'Api-Key',
		'apikey',
		'api_key',
		'key',
		'secret',
		'client_secret',
		'signature',
		'sig',
		'password',
		'auth',
		'hub.verify_token',
	];
	const query = {
		...Object.fromEntries(secret.map((name) => [name, SECRET])),
		page: '2',
		source: 'x',
	};
	/** @type {any} */
	const outcome = storedDeliveryOf({ headers: {}, body: {}, query }, []);
	expect(outcome.delivery.query).toEqual({ page: '2', source: 'x' });
});

/** A header name in any case, as senders spell them. */
const anyCase = (name) =>
	fc
		.array(fc.boolean(), { minLength: name.length, maxLength: name.length })
		.map((upper) => [...name].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''));

const SECRET_HEADERS = [
	...new Set(TABLE.flatMap((provider) => secretPlaces(provider).headers)),
	'Authorization',
	'Cookie',
];

test('a signature header of any scheme, in any case, is never stored and naming it is refused', () => {
	fc.assert(
		fc.property(fc.constantFrom(...SECRET_HEADERS).chain(anyCase), (name) => {
			/** @type {any} */
			const outcome = storedDeliveryOf(
				{ headers: { [name]: SECRET, 'content-type': 'application/json' }, body: {}, query: {} },
				storedHeaderNames([name]),
			);
			expect(outcome.delivery.headers).toEqual({ 'content-type': 'application/json' });
			// Whichever scheme verified the delivery (Verify Webhook Signature before Reserve: none here).
			expect(forbiddenStoredHeader(['x-github-event', name], [])).toBe(name);
		}),
	);
});

test("Generic HMAC's configured header is refused, in any case", () => {
	expect(forbiddenStoredHeader(['X-My-Check'], ['x-my-check'])).toBe('X-My-Check');
	expect(forbiddenStoredHeader(['x-github-event', 'webhook-id', 'X-Slack-Retry-Num'], [])).toBe(
		undefined,
	);
});
