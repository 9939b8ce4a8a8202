// The Idempotency Keys node's stored values: workflows saved before the dead-letter operations keep
// their behaviour because every value they could hold is still there with its default, and the new
// operations and options only add values. The new operations' parameters show only with them.
const { describe, test, expect } = require('@jest/globals');
const { IdempotencyKeys } = require('../../dist/nodes/IdempotencyKeys/IdempotencyKeys.node');

const { properties, subtitle } = new IdempotencyKeys().description;
const named = (name) => properties.filter((property) => property.name === name);
const values = (property) => property.options.map((option) => option.value);

describe('Idempotency Keys: stored values', () => {
	test('Operation: the three saved values, default Look Up, then Retry and Drop Dead Letters', () => {
		const [operation] = named('operation');
		expect(operation.default).toBe('lookUp');
		expect(values(operation)).toEqual([
			'lookUp',
			'purge',
			'report',
			'retryDeadLetters',
			'dropDeadLetters',
		]);
		expect(operation.options.map((option) => option.name)).toEqual([
			'Look Up',
			'Purge',
			'Report',
			'Retry Dead Letters',
			'Drop Dead Letters',
		]);
	});

	test('Look Up keeps its values and default; Dead Letters and Waiting for Redrive are added, with Limit', () => {
		const [lookUpBy] = named('lookUpBy');
		expect(lookUpBy.default).toBe('keys');
		expect(values(lookUpBy).sort()).toEqual([
			'deadLetters',
			'keys',
			'prefix',
			'stuck',
			'waitingForRedrive',
		]);
		const [limit] = named('limit');
		expect(limit.displayOptions.show.lookUpBy.sort()).toEqual([
			'deadLetters',
			'prefix',
			'stuck',
			'waitingForRedrive',
		]);
	});

	test("Purge's state filter keeps its values and default; Dead Letter is added", () => {
		const [statusFilter] = named('statusFilter');
		expect(statusFilter.default).toBe('any');
		expect(values(statusFilter)).toEqual(
			expect.arrayContaining(['any', 'completed', 'completedOrLegacy', 'inProgress', 'legacy']),
		);
		expect(values(statusFilter)).toContain('deadLetter');
	});

	test('Retry and Drop Dead Letters each take Keys, shown only with them', () => {
		const shownWith = named('keys').map((property) => property.displayOptions.show.operation);
		expect(shownWith).toEqual(expect.arrayContaining([['retryDeadLetters'], ['dropDeadLetters']]));
		for (const property of named('keys')) expect(property.required).toBe(true);
	});

	test('Drop Answered Events: off by default, so a saved purge keeps deleting what it deleted, bar answered events', () => {
		const [drop] = named('dropAnsweredEvents');
		expect([drop.type, drop.default]).toEqual(['boolean', false]);
		expect(drop.displayOptions.show.operation).toEqual(['purge']);
	});

	test('the subtitle names the new operations', () => {
		expect(subtitle).toContain('"retryDeadLetters":"Retry Dead Letters"');
		expect(subtitle).toContain('"dropDeadLetters":"Drop Dead Letters"');
	});
});

describe('Release Key and Purge Keys: Drop Answered Events', () => {
	const {
		IdempotencyRelease,
	} = require('../../dist/nodes/IdempotencyRelease/IdempotencyRelease.node');
	const { IdempotencyPurge } = require('../../dist/nodes/IdempotencyPurge/IdempotencyPurge.node');
	test.each([
		['Release Key', IdempotencyRelease],
		['Purge Keys', IdempotencyPurge],
	])('%s has it, a boolean off by default', (_name, Node) => {
		const drop = new Node().description.properties.find(
			(property) => property.name === 'dropAnsweredEvents',
		);
		expect([drop.displayName, drop.type, drop.default]).toEqual([
			'Drop Answered Events',
			'boolean',
			false,
		]);
	});
});
