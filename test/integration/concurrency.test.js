// Exactly one winner under concurrency, one statement per execution, safe first-time table creation.
const { test, expect } = require('@jest/globals');
const { poolFor } = require('../../dist/nodes/shared/transport/poolCache');
const { useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { webhookItem } = require('../support/webhookItems');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');

const db = useTestDatabase();

test('64 executions started at the same moment with one key: exactly one is new', async () => {
	const credentials = db.credential({ maxConnections: 32 });
	const item = () => webhookItem({ body: { id: 'evt_race', type: 'order.created' } });
	const runs = await Promise.all(
		Array.from(
			{ length: 64 },
			async () => await runWorkflow(reserveWorkflow, [item()], { credentials }),
		),
	);

	expect(runs.every((run) => run.status === 'success')).toBe(true);
	const newCount = runs.filter((run) => run.output('Idempotency Reserve', 0).length === 1).length;
	const duplicateCount = runs.filter(
		(run) => run.output('Idempotency Reserve', 1).length === 1,
	).length;
	expect(newCount).toBe(1);
	expect(duplicateCount).toBe(63);
	const { rows } = await db.query(
		`SELECT count(*)::int AS n FROM processed_events WHERE key = 'evt:evt_race'`,
	);
	expect(rows[0].n).toBe(1);
});

test('10,000 items with repeats: correct split in one statement', async () => {
	const credentials = db.credential();
	// Warm up: the first execution through a pool also checks the table once (and creates it, so
	// this test does not depend on an earlier one having done so).
	await runWorkflow(reserveWorkflow, [webhookItem({ body: { id: 'warmup_for_bulk' } })], {
		credentials,
	});
	// Keys 0..1999 exist before the run; the batch holds 0..7999 and repeats 7000..8999 once more.
	await db.query(
		`INSERT INTO processed_events (key) SELECT 'evt:bulk_' || g FROM generate_series(0, 1999) g`,
	);
	const ids = [
		...Array.from({ length: 8000 }, (_, i) => i),
		...Array.from({ length: 2000 }, (_, i) => 7000 + i),
	];
	const items = ids.map((i) => webhookItem({ body: { id: `bulk_${i}` }, withRawBody: false }));
	const { pool } = poolFor(credentials);
	let statements = 0;
	const countStatement = () => (statements += 1);
	pool.on('acquire', countStatement);
	let run;
	try {
		run = await runWorkflow(reserveWorkflow, items, { credentials });
	} finally {
		pool.off('acquire', countStatement);
	}

	const isNewFor = (item) => item.json.idempotency.isNew;
	const trueItems = run.output('Idempotency Reserve', 0);
	const falseItems = run.output('Idempotency Reserve', 1);
	expect(trueItems).toHaveLength(6000 + 1000); // 2000..7999 new, plus 8000..8999 first occurrence
	expect(falseItems).toHaveLength(2000 + 1000); // 0..1999 existed, 7000..7999 repeated in the batch
	expect(trueItems.every(isNewFor)).toBe(true);
	expect(falseItems.some(isNewFor)).toBe(false);
	// The first occurrence in the batch wins, the repeat is the duplicate (pairedItem points at the input).
	const newIndexes = new Set(trueItems.map((item) => item.pairedItem.item));
	expect(newIndexes.has(ids.indexOf(7500))).toBe(true);
	expect(newIndexes.has(8000 + 500)).toBe(false);
	// Every statement checks a client out of the pool once: one round trip for 10,000 items.
	expect(statements).toBe(1);
	const { rows } = await db.query(
		`SELECT count(*)::int AS n FROM processed_events WHERE key LIKE 'evt:bulk_%'`,
	);
	expect(rows[0].n).toBe(9000);
});

/** A different, reproducible order of `ids` per seed (Fisher-Yates with a small LCG). */
function shuffled(ids, seed) {
	const order = [...ids];
	let state = seed + 1;
	for (let i = order.length - 1; i > 0; i--) {
		state = (state * 1103515245 + 12345) % 2147483648;
		const j = state % (i + 1);
		[order[i], order[j]] = [order[j], order[i]];
	}
	return order;
}

test('executions with overlapping batches in different orders never deadlock, each key is new once', async () => {
	const credentials = db.credential({ maxConnections: 16 });
	const ids = Array.from({ length: 300 }, (_, i) => `overlap_${i}`);
	const runs = await Promise.all(
		Array.from(
			{ length: 16 },
			async (_, seed) =>
				await runWorkflow(
					reserveWorkflow,
					shuffled(ids, seed).map((id) => webhookItem({ body: { id }, withRawBody: false })),
					{
						credentials,
					},
				),
		),
	);
	expect(runs.map((run) => run.status)).toEqual(Array(16).fill('success'));
	const newKeys = runs.flatMap((run) =>
		run.output('Idempotency Reserve', 0).map((item) => item.json.idempotency.key),
	);
	expect(newKeys).toHaveLength(ids.length);
	expect(new Set(newKeys).size).toBe(ids.length);
	const duplicates = runs.reduce(
		(sum, run) => sum + run.output('Idempotency Reserve', 1).length,
		0,
	);
	expect(duplicates).toBe(15 * ids.length);
});

test('lease mode locks every expired row it takes over: overlapping batches in different orders still never deadlock', async () => {
	// Rows that exist and whose lease ended: the takeover UPDATE locks each one in the order of the
	// keys, so two executions taking them in different orders would deadlock (PostgreSQL 40P01)
	// unless the keys are sent sorted. Without the sort in KeyStore this test fails with
	// "deadlock detected".
	const credentials = db.credential({ maxConnections: 16 });
	const ids = Array.from({ length: 2000 }, (_, i) => `expired_${i}`);
	const lease = {
		nodeOverrides: { 'Idempotency Reserve': { parameters: { mode: 'lease', leaseSeconds: 60 } } },
	};
	// The first execution creates the table (with the lease columns), so this test also runs alone.
	await runWorkflow(reserveWorkflow, [webhookItem({ body: { id: 'expired_warmup' } })], {
		credentials,
		...lease,
	});
	await db.query(
		`INSERT INTO processed_events (key, status, owner_token, lease_until)
		 SELECT 'evt:expired_' || g, 'in_progress', 'dead-execution', now() - interval '1 minute' FROM generate_series(0, 1999) g`,
	);
	const runs = await Promise.all(
		Array.from(
			{ length: 12 },
			async (_, seed) =>
				await runWorkflow(
					reserveWorkflow,
					shuffled(ids, seed).map((id) => webhookItem({ body: { id }, withRawBody: false })),
					{
						credentials,
						...lease,
					},
				),
		),
	);
	expect(runs.map((run) => run.error?.message)).toEqual(Array(12).fill(undefined));
	const takenOver = runs.flatMap((run) =>
		run.output('Idempotency Reserve', 0).map((item) => item.json.idempotency),
	);
	expect(takenOver).toHaveLength(ids.length);
	expect(new Set(takenOver.map((reserved) => reserved.key)).size).toBe(ids.length);
	expect(takenOver.every((reserved) => reserved.attempt === 2)).toBe(true);
}, 120_000);
