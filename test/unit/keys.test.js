// Key derivation is pure: the same functions will run in the browser planner.
const { describe, test, expect } = require('@jest/globals');
const { PROVIDERS } = require('../../dist/nodes/shared/webhook/providers');
const { KeyError } = require('../../dist/nodes/shared/keys/KeyError');
const {
	composeKey,
	MAX_KEY_BYTES,
	utf8ByteLength,
} = require('../../dist/nodes/shared/keys/composeKey');
const { bodyBytesWithoutRawBody } = require('../../dist/nodes/shared/webhook/requestBody');
const {
	readHeader,
	resolveKeyIdentity,
	settleNumericId,
} = require('../../dist/nodes/shared/keys/keySources');
const { KEY_SOURCES } = require('../../dist/nodes/shared/keys/keySourceTable');

/** @typedef {import('../../dist/nodes/shared/keys/keySources').NumericId} NumericId */

describe('resolveKeyIdentity', () => {
	const item = {
		headers: { 'X-GitHub-Delivery': 'gh-1', 'webhook-id': 'msg_1', 'svix-id': 'msg_svix' },
		body: { id: 'evt_1', event_id: 'Ev_slack' },
	};

	test('presets read their own field, in their own key space (Stripe keeps evt:)', () => {
		expect(resolveKeyIdentity('stripe', item)).toEqual({ kind: 'eventId', id: 'evt_1' });
		expect(resolveKeyIdentity('github', item)).toEqual({
			kind: 'eventId',
			id: 'gh-1',
			scope: 'github',
		});
		expect(resolveKeyIdentity('standardWebhooks', item)).toEqual({
			kind: 'eventId',
			id: 'msg_1',
			scope: 'standardWebhooks',
		});
		expect(resolveKeyIdentity('svix', item)).toEqual({
			kind: 'eventId',
			id: 'msg_svix',
			scope: 'svix',
		});
		expect(resolveKeyIdentity('slack', item)).toEqual({
			kind: 'eventId',
			id: 'Ev_slack',
			scope: 'slack',
		});
		expect(resolveKeyIdentity('shopify', item)).toEqual({ kind: 'bodyHash' });
	});

	test('Shopify: the event id, else the webhook id; an empty event id counts as none', () => {
		const headers = { 'x-shopify-event-id': 'ev-1', 'x-shopify-webhook-id': 'wh-1' };
		const scope = 'shopify';
		expect(resolveKeyIdentity('shopify', { headers })).toEqual({
			kind: 'eventId',
			id: 'ev-1',
			scope,
		});
		expect(
			resolveKeyIdentity('shopify', { headers: { ...headers, 'x-shopify-event-id': ' ' } }),
		).toEqual({ kind: 'eventId', id: 'wh-1', scope });
		expect(resolveKeyIdentity('shopify', { headers: { 'x-shopify-webhook-id': 'wh-1' } })).toEqual({
			kind: 'eventId',
			id: 'wh-1',
			scope,
		});
		// Two event ids is an error, not a reason to use the other header.
		expect(() =>
			resolveKeyIdentity('shopify', {
				headers: { ...headers, 'x-shopify-event-id': 'ev-1, ev-2' },
			}),
		).toThrow(KeyError);
	});

	test('Standard Webhooks and Svix read only their own header', () => {
		expect(resolveKeyIdentity('standardWebhooks', { headers: { 'svix-id': 'msg_x' } })).toEqual({
			kind: 'bodyHash',
		});
		expect(resolveKeyIdentity('svix', { headers: { 'webhook-id': 'msg_x' } })).toEqual({
			kind: 'bodyHash',
		});
	});

	test('the default source uses the evaluated parameter, else the body hash', () => {
		expect(resolveKeyIdentity('eventIdOrBodyHash', item, 'evt_x')).toEqual({
			kind: 'eventId',
			id: 'evt_x',
		});
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
		// @ts-expect-error -- the point: a source outside the list
		expect(() => resolveKeyIdentity('nope', item)).toThrow(KeyError);
	});

	test('header lookup is case-insensitive and tolerates missing headers', () => {
		expect(readHeader({ 'X-Shopify-Webhook-Id': 's' }, 'x-shopify-webhook-id')).toBe('s');
		expect(readHeader(undefined, 'a')).toBeUndefined();
	});
});

describe("numeric ids: the raw body's exact text", () => {
	const raw = (text) => Buffer.from(text);
	// A number read from a body path resolves to a NumericId that waits for the raw body.
	const pending = (value, bodyPath = ['id']) =>
		/** @type {NumericId} */ (resolveKeyIdentity('eventIdOrBodyHash', {}, value, bodyPath));

	test('a number from a body path waits for the raw body', () => {
		expect(pending(12345)).toEqual({
			kind: 'number',
			value: 12345,
			as: 'eventId',
			what: 'event id',
			bodyPath: ['id'],
		});
	});

	test.each([
		['{"id": 98765432101234567891}', JSON.parse('98765432101234567891'), '98765432101234567891'],
		['{"id": 98765432101234567892}', JSON.parse('98765432101234567892'), '98765432101234567892'],
		['{"id":1e21}', 1e21, '1e21'],
		['{"id":1000000000000000000000}', 1e21, '1000000000000000000000'],
		['{"id":12345}', 12345, '12345'],
		['{"id":12345.0}', 12345, '12345.0'],
		['{"id":-0}', -0, '-0'],
		['{"id":0.1}', 0.1, '0.1'],
	])('%s gives evt:%s', (body, value, text) => {
		expect(settleNumericId(pending(value), raw(body))).toEqual({ kind: 'eventId', id: text });
	});

	test('a safe integer keeps its key without a raw body, or when the raw body does not have it', () => {
		expect(settleNumericId(pending(12345), undefined)).toEqual({ kind: 'eventId', id: '12345' });
		expect(settleNumericId(pending(12345), raw('not json'))).toEqual({
			kind: 'eventId',
			id: '12345',
		});
		expect(settleNumericId(pending(12345), raw('{"id":"12345"}'))).toEqual({
			kind: 'eventId',
			id: '12345',
		});
	});

	test.each([
		['no raw body', undefined, /no raw body/, /Raw Body/],
		['a raw body that is not JSON', raw('id=1'), /not JSON/, /as the Webhook node received it/],
		[
			'a raw body without that number',
			raw('{"other":1}'),
			/no number at id/,
			/as the Webhook node received it/,
		],
		[
			'a raw body with another number there',
			raw('{"id":98765432101234000000}'),
			/has 98765432101234000000 at id, not this number/,
			/received/,
		],
	])('a large number with %s is an item error', (_label, rawBody, message, hint) => {
		const error = (() => {
			try {
				settleNumericId(pending(JSON.parse('98765432101234567891')), rawBody);
			} catch (thrown) {
				return thrown;
			}
		})();
		expect(error).toBeInstanceOf(KeyError);
		expect(error.message).toMatch(message);
		expect(error.hint).toMatch(hint);
	});

	test('a large number from an expression that is not a plain body path is refused at once', () => {
		expect(() =>
			resolveKeyIdentity('eventIdOrBodyHash', {}, JSON.parse('98765432101234567891'), undefined),
		).toThrow(/plain \{\{ \$json\.body/);
		expect(() => resolveKeyIdentity('custom', {}, 0.5, undefined)).toThrow(KeyError);
		// A safe integer from such an expression needs no raw body.
		expect(resolveKeyIdentity('custom', {}, 77, undefined)).toEqual({ kind: 'custom', key: '77' });
	});

	test('presets read numbers from their own body path', () => {
		const slack = /** @type {NumericId} */ (
			resolveKeyIdentity('slack', { body: { event_id: 1e21 } })
		);
		expect(slack).toMatchObject({ kind: 'number', bodyPath: ['event_id'], scope: 'slack' });
		expect(settleNumericId(slack, raw('{"event_id":1E+21}'))).toEqual({
			kind: 'eventId',
			id: '1E+21',
			scope: 'slack',
		});
		expect(composeKey(settleNumericId(slack, raw('{"event_id":1E+21}')), '')).toBe('slack:1E+21');
		// Stripe's preset keeps the bare evt: key space.
		const stripe = /** @type {NumericId} */ (resolveKeyIdentity('stripe', { body: { id: 1e21 } }));
		expect(settleNumericId(stripe, raw('{"id":1E+21}'))).toEqual({ kind: 'eventId', id: '1E+21' });
		const custom = /** @type {NumericId} */ (
			resolveKeyIdentity('custom', {}, 2 ** 60, ['order', 'n'])
		);
		expect(settleNumericId(custom, raw('{"order":{"n":1152921504606846976}}'))).toEqual({
			kind: 'custom',
			key: '1152921504606846976',
		});
	});
});

describe('the key source table', () => {
	test('every value the node stored before is still there, with the presets of issues 10, 38 and 63', () => {
		// Values saved in workflows before must stay; the table's new presets come on top.
		expect(KEY_SOURCES.map((source) => source.value)).toEqual(
			expect.arrayContaining([
				'bodyHash',
				'custom',
				'eventIdOrBodyHash',
				'github',
				'gmailMessage',
				'idempotencyKeyHeader',
				'imapEmail',
				'rabbitmqMessage',
				'shopify',
				'slack',
				'standardWebhooks',
				'stripe',
				'svix',
			]),
		);
	});

	test("the node's Key Source options and subtitle are made from it", () => {
		const {
			IdempotencyReserve,
		} = require('../../dist/nodes/IdempotencyReserve/IdempotencyReserve.node');
		const { description } = new IdempotencyReserve();
		const options = /** @type {import('n8n-workflow').INodePropertyOptions[]} */ (
			description.properties.find((property) => property.name === 'keySource').options
		);
		expect(
			options.map(({ name, value, description: text }) => ({ name, value, description: text })),
		).toEqual(
			[...KEY_SOURCES]
				.sort((a, b) => a.name.localeCompare(b.name))
				.map(({ name, value, description: text }) => ({ name, value, description: text })),
		);
		const map = JSON.parse(
			/^=\{\{ (\{.*\})\[\$parameter\["keySource"\]\] \}\}$/.exec(description.subtitle)[1],
		);
		expect(map).toEqual(
			Object.fromEntries(KEY_SOURCES.map(({ value, subtitle }) => [value, subtitle])),
		);
		expect(map.standardWebhooks).toBe('Standard Webhooks');
		expect(map.svix).toBe('Svix');
	});

	test("docs/keys.md's Key sources table lists every source with its stored value and where it reads the id", () => {
		const doc = require('node:fs').readFileSync(
			require('node:path').join(__dirname, '../../docs/keys.md'),
			'utf8',
		);
		const keys = doc.slice(doc.indexOf('## Key sources'), doc.indexOf('## The rules'));
		// Provider presets are rows of docs/signatures.md's generated table (test/unit/signaturesDoc.test.js).
		/** @type {Set<string>} */
		const providers = new Set(PROVIDERS.map((provider) => provider.value));
		expect(keys).toContain('[provider table](signatures.md#providers)');
		for (const { name, value, location } of KEY_SOURCES) {
			if (providers.has(value)) continue;
			const row = keys.split('\n').find((line) => line.startsWith(`| ${name} (\`${value}\``));
			expect({ value, row }).toEqual({ value, row: expect.any(String) });
			if (location.kind === 'headers')
				for (const header of location.names) expect(row).toContain(`\`${header}\``);
			if (location.kind === 'body') expect(row).toContain(`\`body.${location.path.join('.')}\``);
		}
	});

	test('each preset names where it reads the id in its description', () => {
		for (const { location, description } of KEY_SOURCES) {
			if (location.kind === 'headers')
				for (const name of location.names) expect(description).toContain(name);
			if (location.kind === 'body')
				expect(description).toContain(`body.${location.path.join('.')}`);
		}
	});
});

describe('composeKey', () => {
	test('prefixes and namespace', () => {
		expect(composeKey({ kind: 'eventId', id: 'e' }, '')).toBe('evt:e');
		expect(composeKey({ kind: 'eventId', id: 'e' }, 'ns')).toBe('ns:evt:e');
		expect(composeKey({ kind: 'bodyHash' }, '', 'ab12')).toBe('sha256:ab12');
		expect(composeKey({ kind: 'custom', key: 'k' }, 'ns')).toBe('ns:k');
		// A provider preset's event ids are keyed under its value; a verified delivery's digest under signed:.
		expect(composeKey({ kind: 'eventId', id: 'Ev1', scope: 'slack' }, '')).toBe('slack:Ev1');
		expect(composeKey({ kind: 'eventId', id: 'msg_1', scope: 'svix' }, 'ns')).toBe('ns:svix:msg_1');
		expect(composeKey({ kind: 'signedContent', sha256Hex: 'cd34' }, '')).toBe('signed:cd34');
		expect(composeKey({ kind: 'signedContent', sha256Hex: 'cd34' }, 'ns')).toBe('ns:signed:cd34');
	});

	test('UTF-8 lengths are counted exactly as TextEncoder encodes, lone surrogates included', () => {
		const encoded = (text) => new TextEncoder().encode(text).length;
		const samples = [
			'',
			'evt:abc',
			'é',
			'€',
			'😀',
			'a😀b',
			'\ud83d', // a high surrogate alone, at the end: U+FFFD, 3 bytes
			'\ud83dx',
			'\ude00', // a low surrogate alone
			'\ude00\ud83d',
			'\ud83d\ud83d\ude00',
			'\u007f\u0080\u07ff\u0800\uffff',
		];
		// And random texts over the whole range of UTF-16 code units.
		let seed = 7;
		const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
		for (let n = 0; n < 200; n++)
			samples.push(
				String.fromCharCode(...Array.from({ length: next() % 12 }, () => next() % 0x10000)),
			);
		for (const text of samples) expect(utf8ByteLength(text)).toBe(encoded(text));
	});

	test('the byte limit counts UTF-8 bytes, not characters', () => {
		const fits = 'é'.repeat((MAX_KEY_BYTES - 4) / 2); // 2 bytes each, plus "evt:"
		expect(composeKey({ kind: 'eventId', id: fits }, '')).toHaveLength(4 + fits.length);
		expect(() => composeKey({ kind: 'eventId', id: `${fits}x` }, '')).toThrow(/1001 bytes long/);
	});

	test('NUL anywhere is refused, in the namespace too', () => {
		expect(() => composeKey({ kind: 'eventId', id: 'a' }, 'n\u0000s')).toThrow(/NUL/);
	});

	test('half a surrogate pair is refused: PostgreSQL would store "\\ud800" and "\\udc00" both as U+FFFD', () => {
		for (const id of ['\ud800', 'a\udc00', '\udbff\ud800', '\udc00\ud800']) {
			expect(() => composeKey({ kind: 'eventId', id }, '')).toThrow(/surrogate/);
		}
		expect(composeKey({ kind: 'eventId', id: '🎉\ud83c\udf89' }, '')).toBe('evt:🎉🎉');
	});

	test('a namespace that could be read two ways is refused here too', () => {
		expect(() => composeKey({ kind: 'custom', key: 'c' }, 'a:b')).toThrow(/contains ":"/);
		expect(() => composeKey({ kind: 'eventId', id: 'x' }, 'evt')).toThrow(/reserved/);
		// Every prefix an empty namespace's key starts with: evt, sha256, signed, idk, each provider's value.
		for (const reserved of ['sha256', 'signed', 'idk', ...PROVIDERS.map(({ value }) => value)])
			expect(() => composeKey({ kind: 'custom', key: 'x' }, reserved)).toThrow(/reserved/);
		// What those would collide with:
		expect(composeKey({ kind: 'custom', key: 'b:c' }, 'a')).toBe('a:b:c');
		expect(composeKey({ kind: 'eventId', id: 'evt:x' }, '')).toBe('evt:evt:x');
		expect(composeKey({ kind: 'eventId', id: 'evt:x', scope: 'svix' }, '')).toBe('svix:evt:x');
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
