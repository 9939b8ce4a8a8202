// The rules that keep one key per event: which numbers are their own text, one id per header,
// namespaces that cannot be read two ways. Pure functions (the planner page will run them too).
const { describe, test, expect } = require('@jest/globals');
const { KeyError } = require('../../dist/nodes/shared/keys/KeyError');
const { normalizeId } = require('../../dist/nodes/shared/keys/idText');
const { headerIdText } = require('../../dist/nodes/shared/keys/headerValue');
const { namespaceText } = require('../../dist/nodes/shared/keys/namespace');

describe('normalizeId', () => {
	test.each([
		['abc', 'abc'],
		[42, '42'],
		[0, '0'],
		[-7, '-7'],
		[Number.MAX_SAFE_INTEGER, '9007199254740991'],
		[BigInt('9007199254740993'), '9007199254740993'],
	])('%p becomes %p', (value, expected) => expect(normalizeId(value, 'id')).toBe(expected));

	test.each([undefined, null, ''])('%p is absent', (value) =>
		expect(normalizeId(value, 'id')).toBeUndefined(),
	);

	test.each([[{}], [[1]], [true], [Number.NaN], [Infinity]])('%p is refused', (value) => {
		expect(() => normalizeId(value, 'id')).toThrow(KeyError);
	});

	// Where no raw body can tell which text the sender wrote, only a safe integer has one text.
	test.each([
		[-1.5],
		[0.1],
		[1e21],
		[2 ** 53],
		[-(2 ** 53)],
		[JSON.parse('98765432101234567891')],
		[-0],
	])('the number %p is refused', (value) => {
		expect(() => normalizeId(value, 'id')).toThrow(
			expect.objectContaining({ name: 'KeyError', hint: expect.stringMatching(/Raw Body/) }),
		);
	});
});

describe('headers that are not one value', () => {
	test.each([
		['abc', 'abc'],
		['  abc\t', 'abc'],
		['abc, abc', 'abc'],
		[['abc', ' abc '], 'abc'],
		['abc, ', 'abc'],
		['', undefined],
		['  ', undefined],
		[' , ', undefined],
		[[], undefined],
		[undefined, undefined],
		[42, '42'],
	])('%j → %j', (value, expected) => expect(headerIdText(value, 'X-Id')).toBe(expected));

	test.each([['a, b'], [['a', 'b']], [['a', 'b, a']], ['a,b,c']])(
		'%j (two different ids) is an item error',
		(value) => {
			expect(() => headerIdText(value, 'X-Id')).toThrow(
				/X-Id header has \d different values .*sent more than once/,
			);
		},
	);

	test('a header that is an object is refused, not stringified', () => {
		expect(() => headerIdText({ a: 1 }, 'X-Id')).toThrow(/an object/);
	});
});

describe('namespace', () => {
	test.each([
		[undefined, ''],
		['', ''],
		['orders', 'orders'],
		['évt-1 a', 'évt-1 a'],
		[7, '7'],
		['EVT', 'EVT'],
	])('%j → %j', (value, expected) => expect(namespaceText(value)).toBe(expected));

	test.each([['a:b'], [':'], ['evt'], ['sha256'], [{}], [['a']], [1.5]])(
		'%j is refused',
		(value) => {
			expect(() => namespaceText(value)).toThrow(KeyError);
		},
	);
});
