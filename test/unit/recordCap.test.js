// The one size cap on every record (step records, Exactly-Once SQL's recorded rows, stored answers),
// measured on the JSON as stored, after storableJson's encoding. Pure functions.
const { describe, test, expect } = require('@jest/globals');
const { storedResponseOf } = require('../../dist/nodes/shared/answers/storedResponse');
const { MAX_RECORD_BYTES, oversizedRecord } = require('../../dist/nodes/shared/store/recordSize');
const { toStorableJson } = require('../../dist/nodes/shared/store/storableJson');
const {
	recordingProblem,
	DEFAULT_MAX_STEP_BYTES,
} = require('../../dist/nodes/IdempotencyStep/helpers/stepItems');

describe('oversizedRecord', () => {
	test('counts UTF-8 bytes of the stored text, up to and over the cap', () => {
		expect(DEFAULT_MAX_STEP_BYTES).toBe(MAX_RECORD_BYTES);
		expect(oversizedRecord('x'.repeat(MAX_RECORD_BYTES))).toBeUndefined();
		expect(oversizedRecord('x'.repeat(MAX_RECORD_BYTES + 1))).toEqual({
			bytes: MAX_RECORD_BYTES + 1,
			limit: MAX_RECORD_BYTES,
		});
		// 3 bytes per character: 87,382 of them are over 256 KiB though the text is shorter.
		expect(oversizedRecord('€'.repeat(87_382))).toEqual({
			bytes: 262_146,
			limit: MAX_RECORD_BYTES,
		});
		expect(oversizedRecord('€'.repeat(10), 29)).toEqual({ bytes: 30, limit: 29 });
	});

	test('a step output is measured as stored: the encoding of a NUL counts', () => {
		// One NUL is 7 bytes in the wrapper's text (its escape, escaped once more), not 1.
		const items = [{ text: '\u0000'.repeat(100) }];
		const stored = toStorableJson(items);
		expect(stored.length).toBeGreaterThan(700);
		expect(recordingProblem('s', items, stored.length - 1)?.message).toBe(
			`Step "s" produced ${stored.length} bytes of output, over the limit of ${stored.length - 1} bytes to record`,
		);
		expect(recordingProblem('s', items, stored.length)).toBeUndefined();
	});
});

describe('storedResponseOf and the cap', () => {
	/** @type {import('../../dist/nodes/shared/answers/storedResponse').ResponseSettings} */
	const settings = { maxBytes: 1_000_000, whenTooLarge: 'error' };
	test('a body with NUL and lone surrogates is stored as it is', () => {
		const stored = storedResponseOf(200, { 'X-A': 'v\u0000\ud800' }, 'a\u0000b\udc00', settings);
		expect(stored).toEqual({
			statusCode: 200,
			headers: { 'x-a': 'v\u0000\ud800' },
			body: 'a\u0000b\udc00',
		});
	});

	test('Max Response Size above the cap does not raise it: over the cap is an error, or a marker', () => {
		const body = 'x'.repeat(MAX_RECORD_BYTES);
		expect(() => storedResponseOf(200, {}, body, settings)).toThrow(
			/^The response to store is \d+ bytes with its headers, over the cap of 262144 bytes on what a key keeps per record$/,
		);
		const marker = storedResponseOf(200, { a: 'b' }, body, { ...settings, whenTooLarge: 'marker' });
		expect(marker).toEqual({
			statusCode: 200,
			headers: { a: 'b' },
			body: null,
			tooLarge: { bytes: expect.any(Number), limit: MAX_RECORD_BYTES },
		});
		expect(marker.tooLarge.bytes).toBeGreaterThan(MAX_RECORD_BYTES);
	});

	test('headers alone over the cap fail even with a marker', () => {
		const headers = { big: 'h'.repeat(MAX_RECORD_BYTES) };
		expect(() =>
			storedResponseOf(200, headers, 'ok', { ...settings, whenTooLarge: 'marker' }),
		).toThrow(/and its headers alone are over that cap/);
	});
});
