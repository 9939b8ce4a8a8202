// The fast path for plain `$json` path expressions must read exactly what n8n's evaluator reads.
const { test, expect } = require('@jest/globals');
const { bodyPathOfParameter } = require('../../dist/nodes/shared/parameters/itemParameter');
const {
	jsonPathOf,
	readJsonPath,
	NEEDS_EVALUATION,
} = require('../../dist/nodes/shared/keys/jsonPath');

test.each([
	['={{ $json.body.id }}', ['body', 'id']],
	['={{$json.body.id}}', ['body', 'id']],
	['={{ $json["x-github-delivery"] }}', ['x-github-delivery']],
	["={{ $json.headers['webhook-id'] }}", ['headers', 'webhook-id']],
	['={{ $json.items[0].id }}', ['items', '0', 'id']],
])('%s is the path %p', (expression, path) => expect(jsonPathOf(expression)).toEqual(path));

test.each([
	'{{ $json.body.id }}', // not an expression (no leading =)
	'={{ $json.body.id + "x" }}',
	'={{ $json.body.id }} suffix',
	'={{ $("Webhook").item.json.body.id }}',
	'={{ $json.body.id.toString() }}',
	'={{ $json }}',
	'={{ $json["a\\"b"] }}',
])('%s goes through n8n', (expression) => expect(jsonPathOf(expression)).toBeUndefined());

test('reading follows own properties; undefined and null stop it; the rest is left to n8n', () => {
	const json = { body: { id: 5, list: [{ id: 'a' }], text: 'abc', nil: null } };
	expect(readJsonPath(json, ['body', 'id'])).toBe(5);
	expect(readJsonPath(json, ['body', 'list', '0', 'id'])).toBe('a');
	expect(readJsonPath(json, ['body', 'missing', 'id'])).toBeUndefined();
	expect(readJsonPath(json, ['body', 'nil', 'id'])).toBeUndefined();
	expect(readJsonPath(json, ['body', 'list', 'length'])).toBe(1);
	expect(readJsonPath(json, ['body', 'text', 'length'])).toBe(NEEDS_EVALUATION);
	expect(readJsonPath(json, ['body', 'toString'])).toBe(NEEDS_EVALUATION);
});

// Where a numeric id's exact text is looked up in the raw body: only a plain path into $json.body.
test.each([
	['={{ $json.body.id }}', ['id']],
	['={{ $json.body.data.object.id }}', ['data', 'object', 'id']],
	['={{ $json["body"]["event_id"] }}', ['event_id']],
	['={{ $json.body.items[0].id }}', ['items', '0', 'id']],
	['={{ $json.body }}', []],
	['={{ $json.headers.id }}', undefined],
	['={{ $json.body?.id }}', undefined],
	['={{ $json.body.id + 0 }}', undefined],
	['literal', undefined],
	[undefined, undefined],
])('the body path of %p is %p', (expression, path) => {
	// Only getNode() is read: the rest of n8n's execute context is not needed.
	const context = /** @type {import('n8n-workflow').IExecuteFunctions} */ (
		/** @type {unknown} */ ({ getNode: () => ({ parameters: { eventId: expression } }) })
	);
	expect(bodyPathOfParameter(context, 'eventId')).toEqual(path);
});
