// What Idempotency Step v2 may answer without a read (nodes/shared/run/knownSteps.ts): only this
// execution's answer for this key, table and token, at most 2 s old and 1 s before the lease can
// end, and never after a node of the execution changed the key's row.
const { test, expect } = require('@jest/globals');
const {
	forgetKnownSteps,
	knownStepsOf,
	monotonicNow,
	noteKnownSteps,
} = require('../../dist/nodes/shared/run/knownSteps');

const here = { executionId: '7', scope: '1\u0000public.processed_events' };
const note = (key, { token = 'tok', names = [], ago = 0, leaseMs = 60_000 } = {}) =>
	noteKnownSteps(here, key, { token, names, sentAt: monotonicNow() - ago, leaseMs });

test('the answer stands for the same execution, table, key and token only', () => {
	note('evt:a', { names: ['create customer'] });
	expect([...(knownStepsOf(here, 'evt:a', 'tok') ?? [])]).toEqual(['create customer']);
	expect(knownStepsOf(here, 'evt:a', 'another token')).toBeUndefined();
	expect(knownStepsOf({ ...here, executionId: '8' }, 'evt:a', 'tok')).toBeUndefined();
	expect(knownStepsOf({ ...here, scope: '1\u0000public.other' }, 'evt:a', 'tok')).toBeUndefined();
	expect(knownStepsOf(here, 'evt:b', 'tok')).toBeUndefined();
});

test('an answer older than 2 s, or within 1 s of the lease end, is not kept', () => {
	note('evt:old', { ago: 2_001 });
	expect(knownStepsOf(here, 'evt:old', 'tok')).toBeUndefined();
	note('evt:short', { leaseMs: 1_000 });
	expect(knownStepsOf(here, 'evt:short', 'tok')).toBeUndefined();
	note('evt:ending', { leaseMs: 1_500, ago: 600 });
	expect(knownStepsOf(here, 'evt:ending', 'tok')).toBeUndefined();
	note('evt:fresh', { leaseMs: 3_000, ago: 500 });
	expect(knownStepsOf(here, 'evt:fresh', 'tok')).toBeDefined();
});

test('a node that changes the row forgets it', () => {
	note('evt:forget');
	forgetKnownSteps(here, 'evt:forget');
	expect(knownStepsOf(here, 'evt:forget', 'tok')).toBeUndefined();
});
