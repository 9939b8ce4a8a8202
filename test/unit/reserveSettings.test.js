// Reserve's settings live in one module (nodes/shared/reserveRules/reserveSettings.ts). The one copy
// kept apart is the fingerprint default inside reserveOutputNames, whose source text n8n evaluates on
// its own as the node's `outputs` expression: it must agree with the shared rule.
const { describe, test, expect } = require('@jest/globals');
const {
	RESERVE_MODES,
	DEFAULT_MODE,
	DEFAULT_LEASE_SECONDS,
	MAX_LEASE_SECONDS,
	DEFAULT_FINGERPRINT_EXPRESSION,
	DEFAULT_REPLAY_GUARD,
	defaultFingerprint,
} = require('../../dist/nodes/shared/reserveRules/reserveSettings');
const { reserveOutputNames } = require('../../dist/nodes/shared/reserveRules/reserveOutputs');
const {
	IdempotencyReserve,
} = require('../../dist/nodes/IdempotencyReserve/IdempotencyReserve.node');

const properties = new IdempotencyReserve().description.properties;

/** Whether the outputs have `reused key`, which exists only where a fingerprint is recorded. */
const hasReusedKey = (parameters) =>
	reserveOutputNames({ onMismatch: 'output', ...parameters }, 2).includes('reused key');

describe("reserveOutputNames' inline fingerprint default", () => {
	test.each(RESERVE_MODES)('follows defaultFingerprint in %s mode', (mode) => {
		expect(hasReusedKey({ mode })).toBe(defaultFingerprint(mode) !== 'none');
	});

	test('follows it without a mode (a new node: the default mode)', () => {
		expect(hasReusedKey({})).toBe(defaultFingerprint(DEFAULT_MODE) !== 'none');
	});

	test.each(
		RESERVE_MODES.flatMap((mode) => ['rawBody', 'expression', 'none'].map((f) => [mode, f])),
	)('in %s mode, an explicit fingerprint %s wins over the default', (mode, fingerprint) => {
		expect(hasReusedKey({ mode, fingerprint })).toBe(fingerprint !== 'none');
	});
});

describe("the node's properties come from the settings", () => {
	test.each(RESERVE_MODES)(
		'the Fingerprint shown in %s mode defaults to defaultFingerprint',
		(mode) => {
			const shown = properties.filter(
				(p) => p.name === 'fingerprint' && p.displayOptions?.show?.mode?.includes(mode),
			);
			expect(shown).toHaveLength(1);
			expect(shown[0].default).toBe(defaultFingerprint(mode));
		},
	);

	test('Mode, Lease and Fingerprint Fields defaults', () => {
		const byName = (name) => properties.find((p) => p.name === name);
		expect(byName('mode').default).toBe(DEFAULT_MODE);
		const modeOptions = /** @type {import('n8n-workflow').INodePropertyOptions[]} */ (
			byName('mode').options
		);
		expect(modeOptions.map((o) => o.value)).toEqual([...RESERVE_MODES]);
		expect(byName('leaseSeconds').default).toBe(DEFAULT_LEASE_SECONDS);
		expect(byName('leaseSeconds').typeOptions.maxValue).toBe(MAX_LEASE_SECONDS);
		expect(byName('fingerprintExpression').default).toBe(DEFAULT_FINGERPRINT_EXPRESSION);
	});

	test('Options → Replay Guard defaults to DEFAULT_REPLAY_GUARD (the lint wants a literal there)', () => {
		const options = /** @type {import('n8n-workflow').INodeProperties[]} */ (
			properties.find((p) => p.name === 'options')?.options
		);
		expect(options.find((o) => o.name === 'replayGuard')?.default).toBe(DEFAULT_REPLAY_GUARD);
	});
});
