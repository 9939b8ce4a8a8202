// Bad items under each "On Error" setting: a clear error with the item index, never the `false` output.
const { describe, test, expect, beforeAll, afterAll } = require('@jest/globals');
const { closeAllPools } = require('../../dist/nodes/shared/transport/poolCache');
const { createTestDatabase, useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { webhookItem } = require('../support/webhookItems');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');

const db = useTestDatabase(async (database) => {
	await database.query(
		`CREATE TABLE processed_events (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())`,
	);
	await database.query(`INSERT INTO processed_events (key) VALUES ('evt:already_seen')`);
});

const badItems = [
	['an object as id', { id: { nested: true } }, /is an object/],
	['an array as id', { id: ['a'] }, /is an array/],
	['a NUL byte', { id: 'evt_\u0000_nul' }, /NUL/],
	['a key over 1,000 bytes', { id: 'x'.repeat(2000) }, /bytes long/],
	['a boolean as id', { id: true }, /is a boolean/],
	// PostgreSQL would store "\ud800" and "\udc00" both as U+FFFD: one key for two ids.
	['half a surrogate pair', { id: 'evt_\ud800' }, /surrogate/],
	// Without the raw body, n8n's rounded number is all there is: never a key (issue 15).
	[
		'a number beyond 2^53 without the raw body',
		{ id: JSON.parse('98765432101234567891') },
		/beyond 2\^53.*no raw body/,
		{ withRawBody: false },
	],
	['a fraction without the raw body', { id: 0.1 }, /fraction or exponent/, { withRawBody: false }],
];

function mixedItems(bad, spec = {}) {
	return [
		webhookItem({ body: { id: `fresh_${Math.random().toString(36).slice(2)}` } }),
		webhookItem({ body: bad, ...spec }),
		webhookItem({ body: { id: 'already_seen' } }),
	];
}

const run = async (items, onError) =>
	await runWorkflow(reserveWorkflow, items, {
		credentials: db.credential(),
		nodeOverrides: onError ? { 'Idempotency Reserve': { onError } } : {},
	});

describe.each(/** @type {Array<[string, any, RegExp, any]>} */ (badItems))(
	'%s',
	(_label, body, message, spec) => {
		test('stops the workflow with the item index and reserves nothing', async () => {
			const items = mixedItems(body, spec);
			const result = await run(items);
			expect(result.status).toBe('error');
			expect(result.error.name).toBe('NodeOperationError');
			expect(result.error.message).toMatch(message);
			expect(result.error.context.itemIndex).toBe(1);
			expect(result.error.description).toBeTruthy();
			const { rows } = await db.query('SELECT 1 FROM processed_events WHERE key = $1', [
				`evt:${items[0].json.body.id}`,
			]);
			expect(rows).toHaveLength(0);
		});

		test('continue: the error item goes on `true` as an error, never on `false`', async () => {
			const result = await run(mixedItems(body, spec), 'continueRegularOutput');
			expect(result.status).toBe('success');
			const trueItems = result.output('Idempotency Reserve', 0);
			const falseItems = result.output('Idempotency Reserve', 1);
			expect(trueItems.map((item) => item.pairedItem.item)).toEqual([0, 1]);
			expect(trueItems[0].json.idempotency.isNew).toBe(true);
			expect(trueItems[1].json.error).toMatch(message);
			expect(trueItems[1].json.idempotency).toBeUndefined();
			expect(falseItems.map((item) => item.json.idempotency.key)).toEqual(['evt:already_seen']);
			expect(falseItems.some((item) => item.json.error !== undefined)).toBe(false);
		});

		test('continue using error output: the error item goes to the error output', async () => {
			const result = await run(mixedItems(body, spec), 'continueErrorOutput');
			expect(result.status).toBe('success');
			expect(result.outputCount('Idempotency Reserve')).toBe(3);
			expect(result.output('Idempotency Reserve', 0).map((item) => item.pairedItem.item)).toEqual([
				0,
			]);
			expect(result.output('Idempotency Reserve', 1).map((item) => item.pairedItem.item)).toEqual([
				2,
			]);
			const errors = result.output('Idempotency Reserve', 2);
			expect(errors).toHaveLength(1);
			expect(errors[0].json.error).toMatch(message);
		});
	},
);

test('a namespace expression that gives an object is an item error, not "[object Object]"', async () => {
	const result = await runWorkflow(
		reserveWorkflow,
		[webhookItem({ body: { id: 'ns_obj', tenant: { a: 1 } } })],
		{
			credentials: db.credential(),
			nodeOverrides: {
				'Idempotency Reserve': { parameters: { namespace: '={{ $json.body.tenant }}' } },
			},
		},
	);
	expect(result.status).toBe('error');
	expect(result.error.message).toMatch(/namespace is an object/);
});

describe('a database failure (the key column is not text)', () => {
	let broken;

	beforeAll(async () => {
		broken = await createTestDatabase();
		await broken.query(
			`CREATE TABLE processed_events (key integer PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())`,
		);
	});

	afterAll(async () => {
		await closeAllPools();
		await broken.drop();
	});

	const runBroken = async (onError) =>
		await runWorkflow(
			reserveWorkflow,
			[webhookItem({ body: { id: 'a' } }), webhookItem({ body: { id: 'b' } })],
			{
				credentials: broken.credential(),
				nodeOverrides: onError ? { 'Idempotency Reserve': { onError } } : {},
			},
		);

	test('stops the workflow with a NodeApiError naming the cause', async () => {
		const result = await runBroken();
		expect(result.status).toBe('error');
		expect(result.error.name).toBe('NodeApiError');
		expect(result.error.message).toMatch(/PostgreSQL could not reserve the keys/);
		// The node failed as a whole: n8n recorded its error and no output, and nothing was stored.
		expect(result.nodeError('Idempotency Reserve').message).toMatch(/could not reserve/);
		expect(result.outputCount('Idempotency Reserve')).toBe(0);
		const { rows } = await broken.query('SELECT count(*)::int AS n FROM processed_events');
		expect(rows[0].n).toBe(0);
	});

	test.each(['continueRegularOutput', 'continueErrorOutput'])(
		'%s: every item becomes an error item, none is routed as new or duplicate',
		async (onError) => {
			const result = await runBroken(onError);
			expect(result.status).toBe('success');
			expect(result.outputCount('Idempotency Reserve')).toBe(
				onError === 'continueErrorOutput' ? 3 : 2,
			);
			const errorOutput = onError === 'continueErrorOutput' ? 2 : 0;
			const errors = result.output('Idempotency Reserve', errorOutput);
			expect(errors.map((item) => item.pairedItem.item)).toEqual([0, 1]);
			expect(errors.every((item) => /could not reserve/.test(item.json.error))).toBe(true);
			expect(result.output('Idempotency Reserve', 1)).toHaveLength(0);
			if (onError === 'continueErrorOutput')
				expect(result.output('Idempotency Reserve', 0)).toHaveLength(0);
		},
	);
});
