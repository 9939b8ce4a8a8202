// More executions than pooled connections: they wait their turn; a pool that stays full fails clearly.
const { test, expect } = require('@jest/globals');
const { poolFor } = require('../../dist/nodes/shared/transport/poolCache');
const { useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { webhookItem } = require('../support/webhookItems');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');

const db = useTestDatabase();

test('40 concurrent executions through a pool of 2 all succeed, each key once', async () => {
	const credentials = db.credential({ maxConnections: 2 });
	const runs = await Promise.all(
		Array.from(
			{ length: 40 },
			async (_, i) =>
				await runWorkflow(reserveWorkflow, [webhookItem({ body: { id: `pool_${i % 20}` } })], {
					credentials,
				}),
		),
	);
	expect(runs.map((run) => run.status)).toEqual(Array(40).fill('success'));
	expect(runs.filter((run) => run.output('Idempotency Reserve', 0).length === 1)).toHaveLength(20);
	expect(poolFor(credentials).pool.totalCount).toBeLessThanOrEqual(2);
});

test('a pool whose connections stay busy fails the execution after the wait, with a clear sentence', async () => {
	const credentials = db.credential({ maxConnections: 1 });
	await runWorkflow(reserveWorkflow, [webhookItem({ body: { id: 'pool_warm' } })], { credentials });
	const held = await poolFor(credentials).pool.connect();
	try {
		const started = Date.now();
		const run = await runWorkflow(
			reserveWorkflow,
			[webhookItem({ body: { id: 'pool_starved' } })],
			{ credentials },
		);
		expect(Date.now() - started).toBeGreaterThanOrEqual(9_000);
		expect(run.status).toBe('error');
		expect(run.error.name).toBe('NodeApiError');
		expect(run.error.message).toMatch(/All 1 pooled connections to .* stayed busy for 10 s/);
		const { rows } = await db.query(
			`SELECT key FROM processed_events WHERE key = 'evt:pool_starved'`,
		);
		expect(rows).toHaveLength(0);
	} finally {
		held.release();
	}
	const retry = await runWorkflow(
		reserveWorkflow,
		[webhookItem({ body: { id: 'pool_starved' } })],
		{ credentials },
	);
	expect(retry.output('Idempotency Reserve', 0)).toHaveLength(1);
}, 60_000);
