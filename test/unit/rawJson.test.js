// The raw-body reader for numeric ids: it must find exactly the value JSON.parse put in $json.body,
// as the sender wrote it, and refuse what JSON.parse refuses. JSON.parse is the oracle throughout.
const { describe, test, expect } = require('@jest/globals');
const fc = require('fast-check');

const {
	decodeRawBody,
	lookUpRawJson,
	RawJsonError,
	rawJsonValueAt,
} = require('../../dist/nodes/shared/keys/rawJson');

/** What JSON.parse (after n8n's one-BOM strip) has at `path`, in rawJsonValueAt's terms, or undefined. */
function oracle(text, path) {
	let value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
	for (const step of path) {
		if (value === null || typeof value !== 'object') return undefined;
		if (Array.isArray(value) && !/^(0|[1-9]\d*)$/.test(step)) return undefined;
		if (!Object.prototype.hasOwnProperty.call(value, step)) return undefined;
		value = value[step];
	}
	if (Array.isArray(value)) return { kind: 'array' };
	if (value === null || typeof value === 'boolean') return { kind: 'literal', text: String(value) };
	if (typeof value === 'object') return { kind: 'object' };
	if (typeof value === 'string') return { kind: 'string', value };
	return { kind: 'number', value };
}

/** rawJsonValueAt's answer in the oracle's terms (a number compared by value). */
function scanned(text, path) {
	const found = rawJsonValueAt(text, path);
	if (found?.kind !== 'number') return found;
	return { kind: 'number', value: Number(found.text) };
}

function parses(text) {
	try {
		JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
		return true;
	} catch {
		return false;
	}
}

describe('exact number text', () => {
	test.each([
		['{"id": 98765432101234567891}', ['id'], '98765432101234567891'],
		['{"id":1e21}', ['id'], '1e21'],
		['{"id":1000000000000000000000}', ['id'], '1000000000000000000000'],
		['{"id": -0.10E+003 }', ['id'], '-0.10E+003'],
		['  \r\n\t{ "a" : { "b" : [ 1 , { "id" : 12345.0 } ] } } \n', ['a', 'b', '1', 'id'], '12345.0'],
		['98765432101234567891', [], '98765432101234567891'],
		['[5,6,7]', ['2'], '7'],
	])('%s at %j is %s', (text, path, expected) => {
		expect(rawJsonValueAt(text, path)).toEqual({ kind: 'number', text: expected });
	});
});

describe('paths follow JSON.parse', () => {
	test('the last of duplicate member names wins, at every level', () => {
		expect(rawJsonValueAt('{"id":1,"id":2}', ['id'])).toEqual({ kind: 'number', text: '2' });
		expect(rawJsonValueAt('{"id":1,"x":{"id":3},"id":"two"}', ['id'])).toEqual({
			kind: 'string',
			value: 'two',
		});
		// The first "a" has the id; JSON.parse keeps the second, which has none.
		expect(rawJsonValueAt('{"a":{"id":1},"a":{"x":2}}', ['a', 'id'])).toBeUndefined();
		expect(rawJsonValueAt('{"a":{"x":2},"a":{"id":9}}', ['a', 'id'])).toEqual({
			kind: 'number',
			text: '9',
		});
	});

	test('member names are compared unescaped', () => {
		expect(rawJsonValueAt('{"\\u0069d": 7, "i\\"d": 8, "\\/": 9}', ['id'])).toEqual({
			kind: 'number',
			text: '7',
		});
		expect(rawJsonValueAt('{"i\\"d": 8}', ['i"d'])).toEqual({ kind: 'number', text: '8' });
		expect(rawJsonValueAt('{"\\ud83c\\udf89": 1}', ['🎉'])).toEqual({ kind: 'number', text: '1' });
		expect(rawJsonValueAt('{"é": 1}', ['é'])).toEqual({ kind: 'number', text: '1' });
	});

	test('array steps are canonical indexes, as in JavaScript', () => {
		expect(rawJsonValueAt('[1,2]', ['01'])).toBeUndefined();
		expect(rawJsonValueAt('[1,2]', ['2'])).toBeUndefined();
		expect(rawJsonValueAt('[]', ['0'])).toBeUndefined();
		expect(rawJsonValueAt('{"0":4}', ['0'])).toEqual({ kind: 'number', text: '4' });
	});

	test('a scalar has no members; a missing member is undefined', () => {
		expect(rawJsonValueAt('{"id":"abc"}', ['id', 'length'])).toBeUndefined();
		expect(rawJsonValueAt('{}', ['id'])).toBeUndefined();
		expect(rawJsonValueAt('{"id":null}', ['id'])).toEqual({ kind: 'literal', text: 'null' });
	});

	test('one byte order mark is dropped, as n8n does; a second one is not JSON', () => {
		expect(rawJsonValueAt('\ufeff{"id":1}', ['id'])).toEqual({ kind: 'number', text: '1' });
		expect(() => rawJsonValueAt('\ufeff\ufeff{"id":1}', ['id'])).toThrow(RawJsonError);
		// The bytes EF BB BF decode to the BOM, kept for rawJsonValueAt to drop.
		expect(decodeRawBody(Buffer.from('\ufeff{"id":1}'))).toBe('\ufeff{"id":1}');
	});

	test('deep nesting does not overflow the stack', () => {
		const depth = 200_000;
		const text = `{"skip":${'['.repeat(depth)}${']'.repeat(depth)},"id":5}`;
		expect(rawJsonValueAt(text, ['id'])).toEqual({ kind: 'number', text: '5' });
	});
});

describe('what JSON.parse refuses is refused', () => {
	test.each([
		'',
		' ',
		'{"id":01}',
		'{"id":1.}',
		'{"id":.5}',
		'{"id":+1}',
		'{"id":1e}',
		'{"id":-}',
		'{"id":NaN}',
		"{'id':1}",
		'{"id":1,}',
		'[1,]',
		'{"id" 1}',
		'{"id":1}}',
		'{"id":"a\nb"}',
		'{"id":"\u001f"}',
		'{"id":"\\x"}',
		'{"id":"\\u12"}',
		'{"id":tru}',
		'{"id":1} x',
		'{"id":"open}',
		'\u00a0{"id":1}',
	])('%j', (text) => {
		expect(parses(text)).toBe(false);
		expect(() => rawJsonValueAt(text, ['id'])).toThrow(RawJsonError);
		expect(lookUpRawJson(text, ['id'])).toEqual({ invalid: expect.any(String) });
	});
});

describe('properties against JSON.parse', () => {
	/** Every path into a parsed value, so the generated lookups hit real members. */
	function pathsOf(value, prefix = []) {
		const paths = [prefix];
		if (value !== null && typeof value === 'object') {
			for (const key of Object.keys(value)) paths.push(...pathsOf(value[key], [...prefix, key]));
		}
		return paths;
	}

	test('any JSON value, any indentation: every path finds what JSON.parse has', () => {
		fc.assert(
			fc.property(fc.jsonValue(), fc.integer({ min: 0, max: 3 }), (value, indent) => {
				const text = JSON.stringify(value, null, indent);
				for (const path of pathsOf(JSON.parse(text)))
					expect(scanned(text, path)).toEqual(oracle(text, path));
			}),
			{ numRuns: 300 },
		);
	});

	// Objects written by hand: duplicate names, escaped names, odd whitespace, number texts in every form.
	const numberText = fc
		.tuple(
			fc.constantFrom('', '-'),
			fc.oneof(fc.constant('0'), fc.stringMatching(/^[1-9][0-9]{0,25}$/)),
			fc.option(fc.stringMatching(/^\.[0-9]{1,20}$/), { nil: '' }),
			fc.option(fc.stringMatching(/^[eE][+-]?[0-9]{1,3}$/), { nil: '' }),
		)
		.map((parts) => parts.join(''));
	const space = fc.stringMatching(/^[ \t\r\n]{0,3}$/);
	const name = fc.constantFrom('id', 'event_id', 'a', 'é', '');
	const escapeName = (text) =>
		[...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
	const leaf = fc.oneof(
		numberText,
		fc.constantFrom('true', 'null', '"x"', '"\\"}"', '[]', '{}', '[1,{"id":2}]'),
	);
	const member = fc.record({
		name,
		escaped: fc.boolean(),
		value: leaf,
		before: space,
		after: space,
	});
	const objectText = fc
		.array(member, { maxLength: 6 })
		.map(
			(members) =>
				`{${members.map((m) => `${m.before}"${m.escaped ? escapeName(m.name) : m.name}"${m.after}:${m.after}${m.value}${m.before}`).join(',')}}`,
		);

	test('hand-written objects: duplicates, escapes, spaces and number forms read as JSON.parse reads them', () => {
		fc.assert(
			fc.property(
				objectText,
				fc.constantFrom(['id'], ['a'], ['é'], [''], ['event_id']),
				fc.boolean(),
				(text, path, bom) => {
					const source = bom ? `\ufeff${text}` : text;
					expect(scanned(source, path)).toEqual(oracle(source, path));
				},
			),
			{ numRuns: 1000 },
		);
	});

	test('a number token is returned exactly as written', () => {
		fc.assert(
			fc.property(numberText, space, (text, pad) => {
				expect(rawJsonValueAt(`{"id":${pad}${text}${pad}}`, ['id'])).toEqual({
					kind: 'number',
					text,
				});
			}),
		);
	});

	test('valid exactly when JSON.parse accepts, for text near JSON', () => {
		const nearJson = fc
			.tuple(
				fc.jsonValue().map((v) => JSON.stringify(v)),
				fc.nat(),
				fc.constantFrom('', ',', '}', ']', '"', '\\', '0', '-', ' ', '\u0001', '\u001f', 'e'),
			)
			.map(([text, at, insert]) => {
				const i = text.length === 0 ? 0 : at % (text.length + 1);
				// Either insert a character or cut one out, so most cases are one edit away from valid JSON.
				return at % 2 === 0
					? text.slice(0, i) + insert + text.slice(i)
					: text.slice(0, i) + text.slice(i + 1);
			});
		fc.assert(
			fc.property(fc.oneof(nearJson, fc.string()), (text) => {
				const lookup = lookUpRawJson(text, []);
				expect('invalid' in lookup).toBe(!parses(text));
			}),
			{ numRuns: 2000 },
		);
	});
});
