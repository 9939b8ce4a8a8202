// Key derivation is pure: the same functions will run in the browser planner.
const { KeyError } = require('../../dist/nodes/shared/keys/KeyError');
const { composeKey, bodyBytesWithoutRawBody, MAX_KEY_BYTES } = require('../../dist/nodes/shared/keys/composeKey');
const { normalizeId, readHeader, resolveKeyIdentity } = require('../../dist/nodes/shared/keys/keySources');

describe('normalizeId', () => {
	test.each([
		['abc', 'abc'],
		[42, '42'],
		[0, '0'],
		[-1.5, '-1.5'],
		[BigInt('9007199254740993'), '9007199254740993'],
	])('%p becomes %p', (value, expected) => expect(normalizeId(value, 'id')).toBe(expected));

	test.each([undefined, null, ''])('%p is absent', (value) => expect(normalizeId(value, 'id')).toBeUndefined());

	test.each([[{}], [[1]], [true], [Number.NaN], [Infinity]])('%p is refused', (value) => {
		expect(() => normalizeId(value, 'id')).toThrow(KeyError);
	});
});

describe('resolveKeyIdentity', () => {
	const item = { headers: { 'X-GitHub-Delivery': 'gh-1', 'webhook-id': 'msg_1' }, body: { id: 'evt_1' } };

	test('presets read their own field', () => {
		expect(resolveKeyIdentity('stripe', item)).toEqual({ kind: 'eventId', id: 'evt_1' });
		expect(resolveKeyIdentity('github', item)).toEqual({ kind: 'eventId', id: 'gh-1' });
		expect(resolveKeyIdentity('standardWebhooks', item)).toEqual({ kind: 'eventId', id: 'msg_1' });
		expect(resolveKeyIdentity('shopify', item)).toEqual({ kind: 'bodyHash' });
	});

	test('the default source uses the evaluated parameter, else the body hash', () => {
		expect(resolveKeyIdentity('eventIdOrBodyHash', item, 'evt_x')).toEqual({ kind: 'eventId', id: 'evt_x' });
		expect(resolveKeyIdentity('eventIdOrBodyHash', item, undefined)).toEqual({ kind: 'bodyHash' });
	});

	test('stripe ignores an id that is not in an object body', () => {
		expect(resolveKeyIdentity('stripe', { body: 'id=1' })).toEqual({ kind: 'bodyHash' });
		expect(resolveKeyIdentity('stripe', { body: [{ id: 1 }] })).toEqual({ kind: 'bodyHash' });
	});

	test('a custom key must not be empty', () => {
		expect(() => resolveKeyIdentity('custom', item, '')).toThrow(/custom key is empty/);
		expect(resolveKeyIdentity('custom', item, 7)).toEqual({ kind: 'custom', key: '7' });
	});

	test('an unknown source is refused', () => {
		expect(() => resolveKeyIdentity('nope', item)).toThrow(KeyError);
	});

	test('header lookup is case-insensitive and tolerates missing headers', () => {
		expect(readHeader({ 'X-Shopify-Webhook-Id': 's' }, 'x-shopify-webhook-id')).toBe('s');
		expect(readHeader(undefined, 'a')).toBeUndefined();
	});
});

describe('composeKey', () => {
	test('prefixes and namespace', () => {
		expect(composeKey({ kind: 'eventId', id: 'e' }, '')).toBe('evt:e');
		expect(composeKey({ kind: 'eventId', id: 'e' }, 'ns')).toBe('ns:evt:e');
		expect(composeKey({ kind: 'bodyHash' }, '', 'ab12')).toBe('sha256:ab12');
		expect(composeKey({ kind: 'custom', key: 'k' }, 'ns')).toBe('ns:k');
	});

	test('the byte limit counts UTF-8 bytes, not characters', () => {
		const fits = 'é'.repeat((MAX_KEY_BYTES - 4) / 2); // 2 bytes each, plus "evt:"
		expect(composeKey({ kind: 'eventId', id: fits }, '')).toHaveLength(4 + fits.length);
		expect(() => composeKey({ kind: 'eventId', id: `${fits}x` }, '')).toThrow(/1001 bytes long/);
	});

	test('NUL anywhere is refused, in the namespace too', () => {
		expect(() => composeKey({ kind: 'eventId', id: 'a' }, 'n\u0000s')).toThrow(/NUL/);
	});

	test('a missing body hash is a bug, not a key', () => {
		expect(() => composeKey({ kind: 'bodyHash' }, '')).toThrow(KeyError);
	});
});

test('body bytes without a raw body: text as is, anything else as JSON', () => {
	expect(Buffer.from(bodyBytesWithoutRawBody('a b')).toString()).toBe('a b');
	expect(Buffer.from(bodyBytesWithoutRawBody({ a: 1 })).toString()).toBe('{"a":1}');
	expect(Buffer.from(bodyBytesWithoutRawBody(null)).toString()).toBe('null');
	expect(bodyBytesWithoutRawBody(undefined)).toBeUndefined();
});
