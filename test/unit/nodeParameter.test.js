// nodeParameter (nodes/shared/parameters/nodeParameter.ts): a literal is read from the node itself,
// anything n8n would resolve or could refuse goes through getNodeParameter, as n8n reads it.
const { test, expect } = require('@jest/globals');
const { nodeParameter } = require('../../dist/nodes/shared/parameters/nodeParameter');

/**
 * A node run with these parameters, counting what it asks n8n (and answering "n8n:<name>").
 * @returns {any} the few IExecuteFunctions it calls
 */
function runOf(parameters, asked) {
	return {
		getNode: () => ({ name: 'n', typeVersion: 1, parameters }),
		getNodeParameter: (name, itemIndex, fallback) => {
			asked.push([name, itemIndex, fallback]);
			return `n8n:${name}`;
		},
	};
}

test('literals (text, number, boolean, nested in a collection) are read from the node, n8n not asked', () => {
	const asked = [];
	const run = runOf(
		{ mode: 'lease', leaseSeconds: 300, createTable: false, options: { replayGuard: true } },
		asked,
	);
	expect(nodeParameter(run, 'mode', 'simple')).toBe('lease');
	expect(nodeParameter(run, 'leaseSeconds', 60)).toBe(300);
	expect(nodeParameter(run, 'createTable', true)).toBe(false);
	expect(nodeParameter(run, 'options.replayGuard', false)).toBe(true);
	expect(asked).toEqual([]);
});

test('unset: the fallback, as n8n gives it; without a fallback n8n decides (it throws "Could not get parameter")', () => {
	const asked = [];
	const run = runOf({ options: {} }, asked);
	expect(nodeParameter(run, 'answerRepeats', true)).toBe(true);
	expect(nodeParameter(run, 'options.waitInFlightSeconds', 0)).toBe(0);
	expect(nodeParameter(run, 'missing.deeper', 'x')).toBe('x');
	expect(asked).toEqual([]);
	expect(nodeParameter(run, 'keySource')).toBe('n8n:keySource');
	expect(asked).toEqual([['keySource', 0, undefined]]);
});

test('expressions, lists, collections and null go through n8n, with the item', () => {
	const asked = [];
	const run = runOf(
		{
			eventId: '={{ $json.body.id }}',
			mediaTypes: ['application/json'],
			options: { a: 1 },
			body: null,
		},
		asked,
	);
	expect(nodeParameter(run, 'eventId', '', 3)).toBe('n8n:eventId');
	expect(nodeParameter(run, 'mediaTypes')).toBe('n8n:mediaTypes');
	expect(nodeParameter(run, 'options')).toBe('n8n:options');
	expect(nodeParameter(run, 'body', '')).toBe('n8n:body');
	expect(asked).toEqual([
		['eventId', 3, ''],
		['mediaTypes', 0, undefined],
		['options', 0, undefined],
		['body', 0, ''],
	]);
});
