// Hostile text in the built-in workflow's generator (planner/builtIn/builtInInputs.ts) and hostile event ids
// at run time (planner/builtIn/builtInKey.ts), checked with n8n-workflow's own expression engine.
// 1. Every generator input × strings made of "{{", "}}", NUL, lone surrogates, quotes, backslashes,
//    line breaks: either refused with a message naming the input, or every expression of the
//    workflow is still one whole `{{ … }}` for n8n, and the Key node evaluates the input back
//    unchanged. 12 inputs × 80 runs = 960 generated workflows (about 2 s).
// 2. Any JSON value or hostile text as event id: the Key node's key and problem agree with the
//    package's own rules (normalizeId and composeKey): 400 runs per key source, 3 key sources.
const { describe, test, expect } = require('@jest/globals');
const fc = require('fast-check');

const { builtIn, settings, node } = require('../support/builtInWorkflow');
const { normalizeId } = require('../../dist/nodes/shared/keys/idText');
const { composeKey } = require('../../dist/nodes/shared/keys/composeKey');
const { keySourceDefinition } = require('../../dist/nodes/shared/keys/keySourceTable');
const {
	expressionsOf,
	isOneWholeExpression,
	storedExpressions,
} = require('../support/n8nExpressions');

const { builtInWorkflow, BuiltInError } = builtIn;

/** Pieces hostile text is made of; fast-check's own strings fill the gaps. */
const FRAGMENTS = [
	'{{',
	'}}',
	'{',
	'}',
	'{{ $env.SECRET }}',
	'\u0000',
	'\ud800',
	'\udc00',
	'"',
	"'",
	'`',
	'${',
	'\\',
	'\\}}',
	'\n',
	'\r\n',
	'\u2028',
	'=',
	':',
	'/',
	'é',
	'😀',
];
const hostileText = fc
	.array(
		fc.oneof(
			fc.constantFrom(...FRAGMENTS),
			fc.string({ maxLength: 4 }),
			fc.string({ unit: 'binary', maxLength: 2 }),
		),
		{ maxLength: 8 },
	)
	.map((parts) => parts.join(''));

const BODY_ID = 'evt_1';
const HASH = 'ab'.repeat(32);

/**
 * Each input: the settings and options it is set in, the words a refusal must name it by, and what
 * the workflow must show when the input is taken.
 * @type {Array<{ name: string, names: RegExp, apply: (value: string) => { settings: any, options: any }, taken?: (workflow: any, value: string) => void }>}
 */
const INPUTS = [
	{
		name: 'provider',
		names: /provider/,
		apply: (value) => ({ settings: settings(), options: { provider: value } }),
	},
	{
		name: 'keySource',
		names: /key source/,
		apply: (value) => ({ settings: settings({ keySource: value }), options: stripe }),
	},
	{
		name: 'eventIdPath (Event ID)',
		names: /Event ID/,
		apply: (value) => ({
			settings: settings({ keySource: 'eventIdOrBodyHash', eventIdPath: value }),
			options: stripe,
		}),
		taken: (workflow, value) => {
			if (/^=?\s*\{\{/.test(value)) return; // an expression: the user's own code
			expect(keyOf(workflow)).toEqual({
				key: value === '' ? `sha256:${HASH}` : `evt:${value}`,
				keyProblem: '',
			});
		},
	},
	{
		name: 'eventIdPath (Custom Key)',
		names: /Custom Key/,
		apply: (value) => ({
			settings: settings({ keySource: 'custom', eventIdPath: value }),
			options: stripe,
		}),
		taken: (workflow, value) => {
			if (/^=?\s*\{\{/.test(value)) return;
			expect(keyOf(workflow)).toEqual({ key: value, keyProblem: '' });
		},
	},
	{
		name: 'namespace',
		names: /namespace/,
		apply: (value) => ({ settings: settings({ namespace: value }), options: stripe }),
		taken: (workflow, value) =>
			expect(keyOf(workflow)).toEqual({
				key: value === '' ? `evt:${BODY_ID}` : `${value}:evt:${BODY_ID}`,
				keyProblem: '',
			}),
	},
	{
		name: 'schema',
		names: /schema/,
		apply: (value) => ({ settings: settings({ schema: value }), options: stripe }),
		taken: (workflow, value) =>
			expect(node(workflow, 'Reserve Key').parameters.query).toContain(
				`"${value}"."processed_events"`,
			),
	},
	{
		name: 'table',
		names: /table/,
		apply: (value) => ({ settings: settings({ table: value }), options: stripe }),
		taken: (workflow, value) =>
			expect(node(workflow, 'Reserve Key').parameters.query).toContain(`"public"."${value}"`),
	},
	{
		name: 'mode',
		names: /mode/,
		apply: (value) => ({ settings: settings({ mode: value }), options: stripe }),
	},
	{
		name: 'leaseSeconds',
		names: /lease/,
		apply: (value) => ({ settings: settings({ leaseSeconds: value }), options: stripe }),
	},
	{
		name: 'webhookPath',
		names: /webhook path/,
		apply: (value) => ({ settings: settings(), options: { ...stripe, webhookPath: value } }),
		taken: (workflow, value) => expect(node(workflow, 'Webhook').parameters.path).toBe(value),
	},
	{
		name: 'n8nLine',
		names: /n8n version/,
		apply: (value) => ({ settings: settings(), options: { ...stripe, n8nLine: value } }),
	},
	{
		name: 'replayGuard',
		names: /replay guard/,
		apply: (value) => ({ settings: settings(), options: { ...stripe, replayGuard: value } }),
	},
];

const stripe = { provider: 'stripe' };

/** The Key node's fields for a Stripe-like delivery `{ id: BODY_ID }`, as n8n evaluates them. */
function keyOf(/** @type {any} */ workflow, id = /** @type {unknown} */ (BODY_ID)) {
	const item = { json: { headers: {}, body: { id }, bodySha256: HASH } };
	const { evaluate } = expressionsOf(workflow);
	const fields = node(workflow, 'Key').parameters.assignments.assignments;
	return Object.fromEntries(
		fields.map((/** @type {any} */ field) => [field.name, evaluate('Key', field.value, item)]),
	);
}

describe('every generator input × hostile text: refused naming the input, or read back unchanged', () => {
	test.each(INPUTS)('$name', ({ names, apply, taken }) => {
		let refused = 0;
		fc.assert(
			fc.property(hostileText, (value) => {
				const { settings: s, options } = apply(value);
				let workflow;
				try {
					workflow = builtInWorkflow(s, options);
				} catch (error) {
					expect(error).toBeInstanceOf(BuiltInError);
					expect(/** @type {Error} */ (error).message).toMatch(names);
					refused++;
					return;
				}
				for (const { at, text } of storedExpressions(workflow))
					expect([at, isOneWholeExpression(text)]).toEqual([at, true]);
				taken?.(workflow, value);
			}),
			{ numRuns: 80 },
		);
		// Both outcomes happen for the free-text inputs; the report counts them.
		expect(refused).toBeGreaterThan(0);
	});

	test.each([
		[
			'namespace ord}}ers',
			{ namespace: 'ord}}ers' },
			stripe,
			/^The namespace "ord}}ers" contains "}}"/,
		],
		['namespace a{{b', { namespace: 'a{{b' }, stripe, /^The namespace "a{{b" contains "{{"/],
		[
			'Event ID evt}}1',
			{ keySource: 'eventIdOrBodyHash', eventIdPath: 'evt}}1' },
			stripe,
			/^The Event ID "evt}}1" mixes/,
		],
		['schema a}}', { schema: 'a}}' }, stripe, /^The schema "a}}" contains "}}"/],
		['table {{x', { table: '{{x' }, stripe, /^The table "{{x" contains "{{"/],
		[
			'path hook}}',
			{},
			{ ...stripe, webhookPath: 'hook}}' },
			/^The webhook path "hook}}" contains "}}"/,
		],
		[
			'path =hook',
			{},
			{ ...stripe, webhookPath: '=hook' },
			/^The webhook path "=hook" is not a plain webhook path/,
		],
		[
			'a namespace with NUL',
			{ namespace: 'a\u0000b' },
			stripe,
			/^The namespace "a\\u0000b" cannot be a namespace: The key contains a NUL/,
		],
		[
			'a fixed Event ID of 1,000 characters',
			{ keySource: 'eventIdOrBodyHash', eventIdPath: 'x'.repeat(1000) },
			stripe,
			/^The Event ID .* cannot be part of a key: The key is 1004 bytes/,
		],
	])('%s refused, the input named', (_what, changes, options, message) => {
		expect(() => builtInWorkflow(settings(changes), options)).toThrow(message);
	});

	test('a fixed id and namespace of quotes, backslashes and line breaks read back unchanged', () => {
		const namespace = 'o"r\'d`e\\rs$\n{';
		const workflow = builtInWorkflow(
			settings({ namespace, keySource: 'eventIdOrBodyHash', eventIdPath: '} \\"\u2028' }),
			stripe,
		);
		expect(keyOf(workflow)).toEqual({ key: `${namespace}:evt:} \\"\u2028`, keyProblem: '' });
	});
});

describe('the Key node at run time agrees with the package on every event id', () => {
	const idValues = fc.oneof(
		fc.jsonValue({ maxDepth: 2 }),
		hostileText,
		fc.constantFrom(-0, 1.5, 2 ** 53, -(2 ** 53 - 1), 'x'.repeat(996), 'é'.repeat(499), true),
	);

	/** The package's key for this id, or its refusal's message (nodes/shared/keys). */
	function packageKey(
		/** @type {unknown} */ id,
		/** @type {string} */ namespace,
		custom = false,
		/** @type {string|undefined} */ scope = undefined,
	) {
		try {
			const text = normalizeId(id, custom ? 'custom key' : 'event id');
			if (text === undefined && custom) return { problem: 'The custom key is empty' };
			const identity =
				text === undefined
					? { kind: 'bodyHash' }
					: custom
						? { kind: 'custom', key: text }
						: { kind: 'eventId', id: text, scope };
			return { key: composeKey(/** @type {any} */ (identity), namespace, HASH) };
		} catch (error) {
			return { problem: /** @type {Error} */ (error).message };
		}
	}

	test.each([
		['stripe', '', 'stripe preset'],
		// Every other preset keys under its provider's value, as the package does: notion:<id>.
		['notion', 'billing', 'notion preset'],
		['eventIdOrBodyHash', 'billing', 'Event ID expression'],
		['custom', 'orders', 'Custom Key expression'],
	])('%s, namespace "%s" (%s)', (keySource, namespace) => {
		const custom = keySource === 'custom';
		const workflow = builtInWorkflow(
			settings({ keySource, namespace, eventIdPath: '{{ $json.body.id }}' }),
			stripe,
		);
		fc.assert(
			fc.property(idValues, (id) => {
				const expected = packageKey(id, namespace, custom, keySourceDefinition(keySource)?.scope);
				const actual = keyOf(workflow, id);
				if ('key' in expected) expect(actual).toEqual({ key: expected.key, keyProblem: '' });
				else {
					expect(actual.key).toBe('');
					expect(actual.keyProblem).not.toBe('');
				}
			}),
			{ numRuns: 400 },
		);
	});

	test.each([
		['an object', { a: 1 }, 'The event id is an object, not a text or number'],
		['an array', [1, 2], 'The event id is an array, not a text or number'],
		['a boolean', true, 'The event id is a boolean, not a text or number'],
		['NUL', 'a\u0000b', 'The key contains a NUL character, which PostgreSQL text cannot store'],
		['a lone surrogate', '\ud800x', /^The key contains half of a UTF-16 surrogate pair/],
		['1,002 bytes', 'é'.repeat(499), 'The key is 1002 bytes long; at most 1000 are allowed'],
		['-0', -0, /^The event id is the number -0, which is not a safe integer/],
		['2^53', 2 ** 53, /^The event id is the number 9007199254740992, which is not a safe integer/],
	])('%s: no key, the reason', (_what, id, reason) => {
		const { key, keyProblem } = keyOf(builtInWorkflow(settings(), stripe), id);
		expect(key).toBe('');
		expect(keyProblem).toMatch(reason);
	});
});
