// What Complete Key and Exactly-Once SQL send with Respond to Webhook: the same status, headers and
// body text Store Response stores, with a Content-Type when the user gave none. Pure functions.
const { describe, test, expect } = require('@jest/globals');
const { webhookAnswerOf } = require('../../dist/nodes/shared/answers/webhookAnswer');
const { storedResponseOf } = require('../../dist/nodes/shared/answers/storedResponse');

/** @type {import('../../dist/nodes/shared/answers/storedResponse').ResponseSettings} */
const settings = { maxBytes: 1000, whenTooLarge: 'error' };
const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';

describe('webhookAnswerOf', () => {
	test.each([
		['an object', { status: 'processed' }, '{"status":"processed"}', JSON_TYPE],
		['an array', [1, 2], '[1,2]', JSON_TYPE],
		['JSON text', ' {"status":"processed"}', ' {"status":"processed"}', JSON_TYPE],
		['text that only starts like JSON', '{not json', '{not json', TEXT_TYPE],
		['plain text', 'ok', 'ok', TEXT_TYPE],
		['nothing', '', '', TEXT_TYPE],
	])('%s is sent as %j with the right Content-Type', (_what, body, text, type) => {
		expect(webhookAnswerOf(201, {}, body)).toEqual({
			statusCode: 201,
			headers: { 'content-type': type },
			body: text,
		});
	});

	test("the user's Content-Type wins, whatever its case; other headers pass as Store Response stores them", () => {
		const headers = { 'Content-Type': 'application/problem+json', 'Retry-After': 5 };
		const answer = webhookAnswerOf('409', headers, { title: 'busy' });
		expect(answer.headers).toEqual({
			'content-type': 'application/problem+json',
			'retry-after': '5',
		});
		const stored = storedResponseOf('409', headers, { title: 'busy' }, settings);
		expect([answer.statusCode, answer.body]).toEqual([stored.statusCode, stored.body]);
		expect(answer.headers).toEqual(stored.headers);
	});

	test('a status outside 100–599 is refused with the same error as storing it', () => {
		expect(() => webhookAnswerOf(42, {}, 'x')).toThrow(
			'The response status code 42 is not an HTTP status (100 to 599)',
		);
		expect(() => storedResponseOf(42, {}, 'x', settings)).toThrow(
			'The response status code 42 is not an HTTP status (100 to 599)',
		);
	});
});
