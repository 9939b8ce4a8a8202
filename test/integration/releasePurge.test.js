// Release lets a retry run again; Purge deletes only old keys (optionally of one namespace), in batches.
const { describe, test, expect, beforeEach } = require('@jest/globals');
const { useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { webhookItem } = require('../support/webhookItems');
const purgeWorkflow = require('../fixtures/purge.workflow.json');
const releaseWorkflow = require('../fixtures/release.workflow.json');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');

const db = useTestDatabase();
const credentials = () => db.credential();

/** The hand-made two-column table, for tests that write rows before any node ran (each test stands alone). */
const ensureKeyTable = async () =>
	await db.query(
		`CREATE TABLE IF NOT EXISTS processed_events (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())`,
	);

const reserve = async (id) =>
	await runWorkflow(reserveWorkflow, [webhookItem({ body: { id } })], {
		credentials: credentials(),
	});

test('release after a failed business step: the retry is new again', async () => {
	const first = await reserve('evt_release_me');
	const reserved = first.output('Idempotency Reserve', 0);
	expect(reserved).toHaveLength(1);

	// The Release node gets the Reserve output (the business step's error output carries the same json).
	const released = await runWorkflow(releaseWorkflow, reserved, { credentials: credentials() });
	expect(released.output('Release Key')[0].json.idempotency).toEqual({
		key: 'evt:evt_release_me',
		released: true,
	});

	const retry = await reserve('evt_release_me');
	expect(retry.output('Idempotency Reserve', 0)).toHaveLength(1);
	const again = await reserve('evt_release_me');
	expect(again.output('Idempotency Reserve', 1)).toHaveLength(1);
});

test('release of a key that is not reserved says released: false', async () => {
	const result = await runWorkflow(
		releaseWorkflow,
		[{ json: { idempotency: { key: 'evt:never_reserved' } } }],
		{
			credentials: credentials(),
		},
	);
	expect(result.output('Release Key')[0].json.idempotency).toEqual({
		key: 'evt:never_reserved',
		released: false,
		reason: 'not_found',
	});
});

test('release of many keys, repeats included', async () => {
	await ensureKeyTable();
	await db.query(`INSERT INTO processed_events (key) VALUES ('evt:r1'), ('evt:r2')`);
	const items = ['evt:r1', 'evt:r2', 'evt:r1', 'evt:r3'].map((key) => ({
		json: { idempotency: { key } },
	}));
	const result = await runWorkflow(releaseWorkflow, items, { credentials: credentials() });
	expect(result.output('Release Key').map((item) => item.json.idempotency.released)).toEqual([
		true,
		true,
		true,
		false,
	]);
	const { rows } = await db.query(
		`SELECT key FROM processed_events WHERE key IN ('evt:r1', 'evt:r2')`,
	);
	expect(rows).toHaveLength(0);
});

test('release with an empty key is an item error with the index', async () => {
	const result = await runWorkflow(
		releaseWorkflow,
		[{ json: { idempotency: { key: 'evt:x' } } }, { json: {} }],
		{
			credentials: credentials(),
		},
	);
	expect(result.status).toBe('error');
	expect(result.error.message).toMatch(/key to release is empty/);
	expect(result.error.context.itemIndex).toBe(1);
});

describe('purge', () => {
	// Every purge test starts from the same rows, so each one can run alone or in any order.
	beforeEach(async () => {
		await ensureKeyTable();
		await db.query('TRUNCATE processed_events');
		await db.query(`
			INSERT INTO processed_events (key, first_seen)
			SELECT 'evt:old_' || g, now() - interval '40 days' FROM generate_series(1, 2500) g
			UNION ALL SELECT 'shop:evt:old_' || g, now() - interval '40 days' FROM generate_series(1, 300) g
			UNION ALL SELECT 'evt:recent_' || g, now() - interval '29 days' FROM generate_series(1, 50) g
			UNION ALL SELECT 'shop:evt:recent_' || g, now() - interval '1 day' FROM generate_series(1, 5) g`);
	});

	const purge = async (parameters) =>
		await runWorkflow(purgeWorkflow, [{ json: {} }], {
			credentials: credentials(),
			nodeOverrides: { 'Purge Keys': { parameters } },
		});

	test('only within its namespace', async () => {
		const result = await purge({ namespace: 'shop', batchSize: 1000 });
		const [summary] = result.output('Purge Keys');
		expect(summary.json).toMatchObject({ deleted: 300, batches: 1 });
		const { rows } = await db.query(
			`SELECT count(*)::int AS n FROM processed_events WHERE key LIKE 'shop:%'`,
		);
		expect(rows[0].n).toBe(5);
	});

	test('only rows older than the retention, in bounded batches', async () => {
		const result = await purge({ batchSize: 1000 });
		const [summary] = result.output('Purge Keys');
		expect(summary.json.deleted).toBe(2800);
		expect(summary.json.batches).toBe(3);
		const cutoff = Date.parse(summary.json.cutoff);
		expect(Math.abs(Date.now() - 30 * 86400 * 1000 - cutoff)).toBeLessThan(60_000);
		const { rows } = await db.query(`SELECT count(*)::int AS n FROM processed_events`);
		expect(rows[0].n).toBe(55);
	});

	test('a short retention in hours also deletes what a day-based one keeps', async () => {
		const result = await purge({
			namespace: 'shop',
			retentionAmount: 12,
			retentionUnit: 'hours',
			batchSize: 7,
		});
		// 300 old + 5 from a day ago, 7 per batch.
		expect(result.output('Purge Keys')[0].json).toMatchObject({ deleted: 305, batches: 44 });
		const { rows } = await db.query(`SELECT count(*)::int AS n FROM processed_events`);
		expect(rows[0].n).toBe(2550);
	});

	// Reserve's namespace rule: "a" would otherwise purge "a:b:…" keys of a namespace "a:b" too, and an object would be "[object Object]".
	test.each([
		['a:b', /contains ":"/],
		['evt', /reserved/],
		['={{ { a: 1 } }}', /namespace is an object/],
	])('namespace %j is refused, nothing deleted', async (namespace, message) => {
		await db.query(
			`INSERT INTO processed_events (key, first_seen) VALUES ('a:b:evt:kept', now() - interval '1 day') ON CONFLICT DO NOTHING`,
		);
		const { rows: before } = await db.query(`SELECT count(*)::int AS n FROM processed_events`);
		expect(before[0].n).toBeGreaterThan(0);
		// A retention of 0 would delete every row, were the namespace accepted.
		const result = await purge({ namespace, retentionAmount: 0 });
		expect(result.status).toBe('error');
		expect(result.error.name).toBe('NodeOperationError');
		expect(result.error.message).toMatch(message);
		const { rows: after } = await db.query(`SELECT count(*)::int AS n FROM processed_events`);
		expect(after[0].n).toBe(before[0].n);
	});

	test('a negative retention is refused', async () => {
		const result = await purge({ retentionAmount: -1 });
		expect(result.status).toBe('error');
		expect(result.error.message).toMatch(/Keep Keys For/);
		const { rows } = await db.query(`SELECT count(*)::int AS n FROM processed_events`);
		expect(rows[0].n).toBe(2855);
	});
});
