// The Idempotency Keys node (operators' view) through n8n's engine on a real PostgreSQL: Look Up
// (keys, prefix, stuck), Report and the targeted Purge, on a table holding keys in every state and on
// the hand-built two-column table. Then EXPLAIN on 1,000,000 keys: every statement walks an index,
// none reads the key table sequentially.
const { describe, test, expect, beforeAll } = require('@jest/globals');
const { createHash } = require('node:crypto');

const { tableRef } = require('../../dist/nodes/shared/store/identifiers');
const sql = require('../../dist/nodes/shared/store/sql');
const { prefixEnd } = require('../../dist/nodes/shared/store/operatorQueries');
const { useTestDatabase } = require('../support/database');
const { KEYS_NODE, keysWorkflow: keysNodeWorkflow } = require('../support/keysWorkflow');
const { runWorkflow } = require('../support/engine');
const { waitFor } = require('../support/waitFor');

const db = useTestDatabase();

const NODE = KEYS_NODE;

const keysWorkflow = (parameters) => keysNodeWorkflow('ops_events', parameters);

async function run(parameters, items = [{ json: {} }]) {
	const result = await runWorkflow(keysWorkflow(parameters), items, {
		credentials: db.credential(),
	});
	if (result.status !== 'success') throw result.error ?? new Error(`run ${result.status}`);
	return result.output(NODE).map((item) => item.json);
}

const sha8 = (text) => createHash('sha256').update(text).digest('hex').slice(0, 8);

/**
 * The lease table as Reserve creates it, with a key in each state: completed (with fingerprint and
 * stored response), in progress with a running lease, stuck (lease ended 10 min ago, taken over
 * once), legacy (status NULL), old ones of a namespace, and an old stuck one.
 */
async function seedLeaseTable(table = 'ops_events') {
	const ref = tableRef('public', table);
	await db.query(`DROP TABLE IF EXISTS ${ref.qualified}`);
	await db.query(sql.createTableSql(ref, { lease: true }));
	await db.query(
		`INSERT INTO ${ref.qualified} (key, first_seen, status, owner_token, lease_until, completed_at, attempts, fingerprint, response) VALUES
		 ('evt:done', now() - interval '2 hours', 'completed', 'tok-done', NULL, now() - interval '119 minutes', 1, 'fp1', '{"statusCode":201,"headers":{},"body":"{\\"id\\":7}"}'),
		 ('evt:running', now() - interval '1 minute', 'in_progress', 'tok-running', now() + interval '5 minutes', NULL, 1, NULL, NULL),
		 ('evt:stuck', now() - interval '20 minutes', 'in_progress', 'tok-stuck', now() - interval '10 minutes', NULL, 2, NULL, NULL),
		 ('evt:legacy', now() - interval '3 days', NULL, NULL, NULL, NULL, 1, NULL, NULL),
		 ('ns1:a', now() - interval '40 days', 'completed', 'tok-a', NULL, now() - interval '40 days', 1, NULL, NULL),
		 ('ns1:b', now() - interval '41 days', NULL, NULL, NULL, NULL, 1, NULL, NULL),
		 ('ns1:c', now() - interval '42 days', 'in_progress', 'tok-c', now() + interval '5 minutes', NULL, 3, NULL, NULL),
		 ('ns10:x', now() - interval '45 days', 'completed', 'tok-x', NULL, now() - interval '45 days', 1, NULL, NULL),
		 ('ns2:old-stuck', now() - interval '50 days', 'in_progress', 'tok-os', now() - interval '49 days', NULL, 1, NULL, NULL)`,
	);
}

/** The hand-built pattern's table: key and first_seen only. */
async function seedTwoColumnTable() {
	await db.query(`DROP TABLE IF EXISTS legacy_events`);
	await db.query(
		`CREATE TABLE legacy_events (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())`,
	);
	await db.query(
		`INSERT INTO legacy_events (key, first_seen) VALUES ('evt:l1', now() - interval '40 days'), ('evt:l2', now() - interval '1 minute'), ('sha256:abc', now() - interval '2 days')`,
	);
}

async function tableKeys(table = 'ops_events') {
	const { rows } = await db.query(`SELECT key FROM ${table} ORDER BY key COLLATE "C"`);
	return rows.map((row) => row.key);
}

describe('Look Up', () => {
	beforeAll(async () => await seedLeaseTable());

	test('keys: one item per key in order, in the table terms, a missing key found: false, the holder a hash label', async () => {
		const out = await run({
			operation: 'lookUp',
			lookUpBy: 'keys',
			keys: 'evt:done\nevt:missing\nevt:running\nevt:stuck\nevt:legacy',
		});
		expect(out.map((json) => [json.key, json.found, json.status])).toEqual([
			['evt:done', true, 'completed'],
			['evt:missing', false, undefined],
			['evt:running', true, 'in_progress'],
			['evt:stuck', true, 'in_progress'],
			['evt:legacy', true, 'legacy'],
		]);
		expect(out[1]).toEqual({ key: 'evt:missing', found: false });
		const [done, , running, stuck, legacy] = out;
		expect(done).toMatchObject({
			attempt: 1,
			leaseUntil: null,
			hasFingerprint: true,
			hasResponse: true,
			holder: sha8('tok-done'),
		});
		expect(Date.parse(done.completedAt)).toBeGreaterThan(Date.parse(done.firstSeenAt));
		expect(done).not.toHaveProperty('response');
		expect(JSON.stringify(out)).not.toContain('tok-');
		expect(running).toMatchObject({
			leaseRunning: true,
			hasFingerprint: false,
			hasResponse: false,
		});
		expect(stuck).toMatchObject({ attempt: 2, leaseRunning: false, holder: sha8('tok-stuck') });
		expect(stuck.leaseEndedSecondsAgo).toBeGreaterThanOrEqual(599);
		expect(legacy).toMatchObject({ attempt: 1, holder: null, leaseUntil: null, completedAt: null });
	});

	test('keys from every item (an expression giving a list too), each paired with its item; the stored response on request', async () => {
		const result = await runWorkflow(
			keysWorkflow({ operation: 'lookUp', keys: '={{ $json.keys }}', includeResponse: true }),
			[{ json: { keys: ['evt:done', 'evt:nope'] } }, { json: { keys: 'evt:legacy' } }],
			{ credentials: db.credential() },
		);
		const items = result.output(NODE);
		expect(items.map((item) => [item.json.key, item.pairedItem])).toEqual([
			['evt:done', { item: 0 }],
			['evt:nope', { item: 0 }],
			['evt:legacy', { item: 1 }],
		]);
		expect(items[0].json.response).toEqual({ statusCode: 201, headers: {}, body: '{"id":7}' });
		expect(items[2].json).not.toHaveProperty('response');
	});

	test('keys starting with a prefix: exactly that namespace (ns1: is not ns10:), in byte order', async () => {
		const out = await run({ operation: 'lookUp', lookUpBy: 'prefix', keyPrefix: 'ns1:' });
		expect(out.map((json) => [json.key, json.status])).toEqual([
			['ns1:a', 'completed'],
			['ns1:b', 'legacy'],
			['ns1:c', 'in_progress'],
		]);
		const limited = await run({
			operation: 'lookUp',
			lookUpBy: 'prefix',
			keyPrefix: 'ns',
			limit: 2,
		});
		// Byte order, as the index keeps them: '0' (0x30) sorts before ':' (0x3a).
		expect(limited.map((json) => json.key)).toEqual(['ns10:x', 'ns1:a']);
		expect(prefixEnd('ns1:')).toBe('ns1;');
		expect(prefixEnd('a\u{10FFFF}')).toBe('b');
		expect(prefixEnd('\u{D7FF}')).toBe('\u{E000}');
	});

	test('stuck keys: in progress past lease end + grace, longest stuck first, nothing running or completed', async () => {
		const out = await run({ operation: 'lookUp', lookUpBy: 'stuck', graceSeconds: 60 });
		expect(out.map((json) => json.key)).toEqual(['ns2:old-stuck', 'evt:stuck']);
		expect(out.every((json) => json.status === 'in_progress' && !json.leaseRunning)).toBe(true);
		// A grace longer than evt:stuck has been stuck leaves only the old one.
		const graced = await run({ operation: 'lookUp', lookUpBy: 'stuck', graceSeconds: 3600 });
		expect(graced.map((json) => json.key)).toEqual(['ns2:old-stuck']);
	});

	test('a bad key is an item error naming the problem; with continue on fail the other items still get their rows', async () => {
		const result = await runWorkflow(
			{
				...keysWorkflow({ operation: 'lookUp', keys: '={{ $json.k }}' }),
				nodes: keysWorkflow({ operation: 'lookUp', keys: '={{ $json.k }}' }).nodes.map((node) => ({
					...node,
					onError: 'continueRegularOutput',
				})),
			},
			[{ json: { k: 'evt:done' } }, { json: { k: 'a\u0000b' } }],
			{ credentials: db.credential() },
		);
		const items = result.output(NODE);
		expect(items[0].json).toMatchObject({ key: 'evt:done', found: true });
		expect(items[1].json.error).toMatch(/NUL|null/i);
	});

	test('a table that does not exist fails the node with a clear error and creates nothing', async () => {
		const result = await runWorkflow(
			keysWorkflow({ operation: 'lookUp', keys: 'evt:done', table: 'no_such_table' }),
			[{ json: {} }],
			{ credentials: db.credential() },
		);
		expect(result.status).toBe('error');
		expect(result.error.message).toMatch(/no_such_table/);
		const { rows } = await db.query(`SELECT to_regclass('public.no_such_table') AS t`);
		expect(rows[0].t).toBeNull();
	});
});

describe('Report', () => {
	beforeAll(async () => {
		await seedLeaseTable();
		await db.query('ANALYZE ops_events');
	});

	test('counts by state, stuck keys, oldest key, last hour and day, takeovers, and a purge preview that keeps running leases', async () => {
		const [report] = await run({
			operation: 'report',
			graceSeconds: 60,
			retentionAmount: 30,
			retentionUnit: 'days',
		});
		expect(report).toMatchObject({
			table: '"public"."ops_events"',
			hasLeaseColumns: true,
			estimatedTotal: 9,
			counts: { inProgress: 4, leaseRunning: 2, stuck: 2, completedOrLegacyEstimated: 5 },
			stuck: { count: 2, graceSeconds: 60 },
			oldest: { key: 'ns2:old-stuck' },
			reservedLastHour: 2,
			reservedLastDay: 3,
			takeovers: 2,
			// ns1:a, ns1:b, ns10:x, ns2:old-stuck; ns1:c is old but its lease runs.
			purgePreview: { olderThan: '30 days', wouldDelete: 4, keptLeaseRunning: 1 },
			capped: [],
		});
		expect(Date.parse(report.stuck.oldestLeaseEnd)).toBeLessThan(Date.now() - 48 * 86400_000);
	});

	test('counts stop at Count Up To and say so', async () => {
		const [report] = await run({ operation: 'report', countLimit: 2 });
		expect(report.counts.inProgress).toBe(2);
		expect(report.capped).toEqual(expect.arrayContaining(['inProgress', 'lastDay', 'purgeOlder']));
	});

	test('the indexes it needs were added', async () => {
		const { rows } = await db.query(
			`SELECT indexname FROM pg_indexes WHERE tablename = 'ops_events' ORDER BY 1`,
		);
		expect(rows.map((row) => row.indexname)).toEqual(
			expect.arrayContaining([
				'ops_events_first_seen_idx',
				'ops_events_in_progress_idx',
				'ops_events_takeover_idx',
			]),
		);
	});
});

describe('adding its indexes to a table in use', () => {
	test('reservations go on while the report builds its indexes (CONCURRENTLY), and the report waits for the build', async () => {
		await seedLeaseTable('busy_events');
		// An open transaction that wrote to the table: a plain CREATE INDEX would queue behind it and
		// hold back every INSERT that comes after; CREATE INDEX CONCURRENTLY only waits for it.
		const writer = await db.connect();
		let writerOpen = true;
		const endWriter = async () => {
			if (writerOpen) await writer.end();
			writerOpen = false;
		};
		await writer.query('BEGIN');
		await writer.query(`INSERT INTO busy_events (key) VALUES ('evt:open-tx')`);
		let report;
		try {
			report = run({ operation: 'report', table: 'busy_events' });
			await waitFor('the index build to wait for the open transaction', async () => {
				const { rows } = await db.query(
					`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'CREATE INDEX%' AND wait_event_type IS NOT NULL`,
				);
				return rows.length > 0;
			});
			const startedAt = Date.now();
			// Bounded, so a build that blocks writes fails this test instead of hanging it.
			await db.query(`SET statement_timeout = '3s'`);
			try {
				await db.query(`INSERT INTO busy_events (key) VALUES ('evt:during-build')`);
			} finally {
				await db.query(`RESET statement_timeout`);
			}
			const insertMs = Date.now() - startedAt;
			let reportDone = false;
			void report.then(() => (reportDone = true));
			expect(insertMs).toBeLessThan(1000);
			expect(reportDone).toBe(false);
			await writer.query('COMMIT');
			await endWriter();
		} finally {
			// On a failure above, the open transaction must not keep the database from being dropped.
			await endWriter();
		}
		const [result] = await report;
		expect(result.counts.inProgress).toBe(4);
		const { rows } = await db.query(
			`SELECT c.relname::text AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
			 WHERE i.indrelid = 'busy_events'::regclass AND i.indisvalid ORDER BY 1`,
		);
		expect(rows.map((row) => row.name)).toEqual(
			expect.arrayContaining(['busy_events_in_progress_idx', 'busy_events_takeover_idx']),
		);
	});
});

describe('Purge', () => {
	beforeAll(async () => await seedLeaseTable());

	/** @type {Array<[string, Record<string, unknown>, string[]]>} */
	const purgeCases = [
		[
			'age, any state',
			{ purgeBy: 'age', retentionAmount: 30, retentionUnit: 'days' },
			['ns1:a', 'ns1:b', 'ns10:x', 'ns2:old-stuck'],
		],
		[
			'age, only completed',
			{ purgeBy: 'age', retentionAmount: 30, retentionUnit: 'days', statusFilter: 'completed' },
			['ns1:a', 'ns10:x'],
		],
		[
			'prefix ns1:, running lease kept',
			{ purgeBy: 'prefix', keyPrefix: 'ns1:' },
			['ns1:a', 'ns1:b'],
		],
		[
			'keys, running lease kept',
			{ purgeBy: 'keys', keys: 'evt:running\nevt:stuck\nevt:missing' },
			['evt:stuck'],
		],
		[
			'keys, only legacy',
			{ purgeBy: 'keys', keys: 'evt:legacy\nevt:done', statusFilter: 'legacy' },
			['evt:legacy'],
		],
		[
			'keys, running lease deleted when asked',
			{ purgeBy: 'keys', keys: 'evt:running', includeRunningLeases: true },
			['evt:running'],
		],
	];

	test.each(purgeCases)(
		'%s: the dry run deletes nothing, the purge deletes exactly what it reported',
		async (_name, selection, expected) => {
			await seedLeaseTable();
			const before = await tableKeys();
			const [dry] = await run({ operation: 'purge', dryRun: true, ...selection });
			expect(await tableKeys()).toEqual(before);
			expect(dry).toMatchObject({
				dryRun: true,
				wouldDelete: expected.length,
				capped: false,
				keysComplete: true,
			});
			expect(dry.keys).toEqual([...expected].sort());

			const [done] = await run({ operation: 'purge', dryRun: false, batchSize: 1, ...selection });
			expect(done).toMatchObject({ dryRun: false, deleted: dry.wouldDelete, keysComplete: true });
			expect(done.keys).toEqual(dry.keys);
			expect(done.batches).toBe(expected.length + 1);
			expect(await tableKeys()).toEqual(before.filter((key) => !expected.includes(key)));
		},
	);

	test('Dry Run is on by default: a purge deletes only when told to', async () => {
		await seedLeaseTable();
		const before = await tableKeys();
		const [out] = await run({ operation: 'purge', purgeBy: 'age', retentionAmount: 0 });
		expect(out.dryRun).toBe(true);
		expect(out.wouldDelete).toBe(before.length - 2);
		expect(await tableKeys()).toEqual(before);
	});

	test('keys come from every item; an empty prefix is refused before any SQL', async () => {
		await seedLeaseTable();
		const result = await runWorkflow(
			keysWorkflow({
				operation: 'purge',
				dryRun: false,
				purgeBy: 'keys',
				keys: '={{ $json.key }}',
			}),
			[{ json: { key: 'ns1:a' } }, { json: { key: 'ns1:b' } }],
			{ credentials: db.credential() },
		);
		expect(result.output(NODE)[0].json).toMatchObject({ deleted: 2, keys: ['ns1:a', 'ns1:b'] });
		const refused = await runWorkflow(
			keysWorkflow({ operation: 'purge', dryRun: false, purgeBy: 'prefix', keyPrefix: '' }),
			[{ json: {} }],
			{ credentials: db.credential() },
		);
		expect(refused.status).toBe('error');
		expect(refused.error.message).toMatch(/prefix is empty/);
	});
});

describe('the hand-built two-column table', () => {
	beforeAll(async () => await seedTwoColumnTable());
	const on = (parameters) => ({ table: 'legacy_events', ...parameters });

	test('look up: legacy rows, attempt 1, no lease; missing found: false; no stuck keys; prefix', async () => {
		const out = await run(on({ operation: 'lookUp', keys: 'evt:l1\nevt:nope' }));
		expect(out[0]).toMatchObject({
			key: 'evt:l1',
			found: true,
			status: 'legacy',
			attempt: 1,
			leaseUntil: null,
			completedAt: null,
			hasFingerprint: false,
			hasResponse: false,
			holder: null,
		});
		expect(out[1]).toEqual({ key: 'evt:nope', found: false });
		expect(await run(on({ operation: 'lookUp', lookUpBy: 'stuck' }))).toEqual([]);
		const prefixed = await run(on({ operation: 'lookUp', lookUpBy: 'prefix', keyPrefix: 'evt:' }));
		expect(prefixed.map((json) => json.key)).toEqual(['evt:l1', 'evt:l2']);
	});

	test('report: no lease columns, nothing in progress, recent and old keys counted; no column added', async () => {
		const [report] = await run(on({ operation: 'report' }));
		expect(report).toMatchObject({
			hasLeaseColumns: false,
			counts: { inProgress: 0, leaseRunning: 0, stuck: 0 },
			takeovers: 0,
			oldest: { key: 'evt:l1' },
			reservedLastHour: 1,
			reservedLastDay: 1,
			purgePreview: { wouldDelete: 1, keptLeaseRunning: 0 },
		});
		const { rows } = await db.query(
			`SELECT column_name FROM information_schema.columns WHERE table_name = 'legacy_events' ORDER BY 1`,
		);
		expect(rows.map((row) => row.column_name)).toEqual(['first_seen', 'key']);
	});

	test('purge: only completed finds nothing there, legacy by age deletes what the dry run said', async () => {
		const [completed] = await run(
			on({ operation: 'purge', purgeBy: 'age', retentionAmount: 1, statusFilter: 'completed' }),
		);
		expect(completed.wouldDelete).toBe(0);
		const selection = { purgeBy: 'age', retentionAmount: 1, statusFilter: 'legacy' };
		const [dry] = await run(on({ operation: 'purge', ...selection }));
		expect(dry.keys).toEqual(['evt:l1', 'sha256:abc']);
		const [done] = await run(on({ operation: 'purge', dryRun: false, ...selection }));
		expect(done.keys).toEqual(dry.keys);
		expect(await tableKeys('legacy_events')).toEqual(['evt:l2']);
	});
});

/** Every plan node of an EXPLAIN (FORMAT JSON), flattened. */
function planNodes(plan) {
	const nodes = [plan];
	for (const child of plan.Plans ?? []) nodes.push(...planNodes(child));
	return nodes;
}

describe('EXPLAIN on 1,000,000 keys: every statement walks an index, none scans the table', () => {
	const ref = tableRef('public', 'big_events');
	/** @type {Record<string, import('../../dist/nodes/shared/store/sql').KeySelection>} */
	// As the nodes send them: answered events kept, or (Drop Answered Events) dropped and named.
	const selections = {
		keys: {
			by: 'keys',
			status: 'any',
			includeRunningLeases: false,
			lease: true,
			answeredEvents: 'keep',
		},
		prefix: {
			by: 'prefix',
			status: 'completed',
			includeRunningLeases: false,
			lease: true,
			answeredEvents: 'keep',
		},
		age: {
			by: 'age',
			status: 'completedOrLegacy',
			includeRunningLeases: false,
			lease: true,
			answeredEvents: 'keep',
		},
		ageAny: {
			by: 'age',
			status: 'any',
			includeRunningLeases: true,
			lease: true,
			answeredEvents: 'drop',
		},
		ageAnswered: {
			by: 'age',
			status: 'any',
			includeRunningLeases: false,
			lease: true,
			answeredEvents: 'only',
		},
	};
	const keys = Array.from({ length: 1000 }, (_, i) => `evt:${i * 997}`);

	beforeAll(async () => {
		await db.query(sql.createTableSql(ref, { lease: true }));
		// 1% in progress (half of them stuck), 10% legacy, the rest completed; 0.1% taken over;
		// first seen over 60 days; 10% of the keys in namespace ns7.
		await db.query(`INSERT INTO big_events (key, first_seen, status, owner_token, lease_until, completed_at, attempts)
			SELECT CASE WHEN i % 10 = 7 THEN 'ns7:' ELSE 'evt:' END || i,
			  now() - (i % 86400) * interval '1 minute',
			  CASE WHEN i % 100 = 0 THEN 'in_progress' WHEN i % 10 = 1 THEN NULL ELSE 'completed' END,
			  md5(i::text),
			  CASE WHEN i % 100 = 0 THEN now() + CASE WHEN i % 200 = 0 THEN interval '5 minutes' ELSE interval '-1 hour' END END,
			  CASE WHEN i % 100 <> 0 AND i % 10 <> 1 THEN now() END,
			  CASE WHEN i % 1000 = 3 THEN 2 ELSE 1 END
			FROM generate_series(1, 1000000) AS i`);
		// The node adds its indexes on first use, as in production.
		const table = { table: 'big_events' };
		await run({ operation: 'report', ...table });
		await run({ operation: 'lookUp', lookUpBy: 'prefix', keyPrefix: 'ns7:', ...table });
		await db.query('VACUUM ANALYZE big_events');
	}, 300_000);

	async function explain(text, values) {
		const { rows } = await db.query(`EXPLAIN (FORMAT JSON) ${text}`, values);
		return planNodes(rows[0]['QUERY PLAN'][0].Plan);
	}

	function expectIndexed(nodes) {
		const onTable = nodes.filter((node) => node['Relation Name'] === 'big_events');
		expect(onTable.length).toBeGreaterThan(0);
		expect(onTable.filter((node) => node['Node Type'] === 'Seq Scan')).toEqual([]);
		for (const node of onTable)
			expect(['Index Scan', 'Index Only Scan', 'Bitmap Heap Scan', 'ModifyTable']).toContain(
				node['Node Type'],
			);
		// Bitmap Index Scan nodes name their index but not the table.
		const indexes = nodes.map((node) => node['Index Name']).filter(Boolean);
		return indexes.filter((name) => name.startsWith('big_events'));
	}

	test('look up 1,000 keys: primary key probes', async () => {
		const used = expectIndexed(await explain(sql.lookUpKeysSql(ref), [keys, false]));
		expect(used).toContain('big_events_pkey');
	});

	test('look up a prefix: the byte-order key index', async () => {
		const used = expectIndexed(
			await explain(sql.lookUpPrefixSql(ref), ['ns7:', prefixEnd('ns7:'), 100, null, false]),
		);
		expect(used).toContain('big_events_key_c_idx');
	});

	test('look up stuck keys, and those waiting for the redrive: the in-progress index only', async () => {
		for (const answered of [false, true]) {
			const used = expectIndexed(
				await explain(sql.lookUpStuckSql(ref, { answered }), [60, 100, false]),
			);
			expect(used).toEqual(['big_events_in_progress_idx']);
		}
	});

	test('look up dead letters: the dead-letter index only', async () => {
		const used = expectIndexed(await explain(sql.lookUpDeadLettersSql(ref), [100, false]));
		expect(used).toEqual(['big_events_dead_letter_idx']);
	});

	test('retry and drop 1,000 dead letters: primary key probes', async () => {
		const sorted = [...keys].sort();
		for (const text of [sql.retryDeadLettersOutcomeSql(ref), sql.dropDeadLettersSql(ref)])
			expect(expectIndexed(await explain(text, [sorted]))).toContain('big_events_pkey');
	});

	test('purge the dead letters by age: an index, not the table', async () => {
		/** @type {import('../../dist/nodes/shared/store/sql').KeySelection} */
		const selection = { by: 'age', status: 'deadLetter', includeRunningLeases: false, lease: true };
		const cutoff = new Date(Date.now() - 30 * 86400_000);
		expect(
			expectIndexed(await explain(sql.keySelectionDeleteSql(ref, selection), [cutoff, 1000])),
		).not.toEqual([]);
	});

	test('the report: first_seen and the partial indexes, never the table', async () => {
		const cutoff = new Date(Date.now() - 30 * 86400_000);
		const nodes = await explain(sql.reportSql(ref, { lease: true }), [
			100000,
			60,
			cutoff,
			ref.qualified,
		]);
		const used = new Set(expectIndexed(nodes));
		expect([...used].sort()).toEqual([
			'big_events_dead_letter_idx',
			'big_events_first_seen_idx',
			'big_events_in_progress_idx',
			'big_events_takeover_idx',
		]);
	});

	test("reserve 1,000 keys in lease mode beside the operators' indexes: the takeover probes the primary key", async () => {
		// 5,000 expired in-progress keys here: from the in-progress index the planner would scan them
		// all for the takeover UPDATE (what bench:scale measured at 21× on 10M keys).
		const sorted = [...keys].sort();
		const nodes = await explain(sql.reserveLeaseSql(ref), [sorted, 'token', 300]);
		const used = expectIndexed(nodes);
		expect(used).toContain('big_events_pkey');
		expect(used).not.toContain('big_events_in_progress_idx');
	});

	test.each(Object.entries(selections))(
		'targeted purge by %s: dry run and batch both on an index',
		async (name, selection) => {
			const values = {
				keys: [keys],
				prefix: ['ns7:', prefixEnd('ns7:')],
				age: [new Date(Date.now() - 30 * 86400_000)],
			}[selection.by];
			const preview = expectIndexed(
				await explain(sql.keySelectionPreviewSql(ref, selection), [...values, 100001, 100]),
			);
			const batch = expectIndexed(
				await explain(sql.keySelectionDeleteSql(ref, selection), [...values, 1000]),
			);
			const index = {
				keys: 'big_events_pkey',
				prefix: 'big_events_key_c_idx',
				age: 'big_events_first_seen_idx',
			}[selection.by];
			expect(preview).toContain(index);
			expect(batch).toContain(index);
			expect(name).toBeDefined();
		},
	);
});

describe('the templates, node by node (the n8n-nodes-base nodes around them are left to a real n8n)', () => {
	const stuckTemplate = require('../../workflows/stuck-keys-alert.json');
	const errorsTemplate = require('../../workflows/idempotency-errors.json');
	const reserveWorkflow = require('../fixtures/reserve.workflow.json');
	const completeWorkflow = require('../fixtures/complete.workflow.json');
	const { webhookItem } = require('../support/webhookItems');

	const reserve = async (id) => {
		const result = await runWorkflow(reserveWorkflow, [webhookItem({ body: { id } })], {
			credentials: db.credential(),
			nodeOverrides: {
				'Idempotency Reserve': { parameters: { mode: 'lease', leaseSeconds: 60 } },
			},
		});
		return result.output('Idempotency Reserve', 0)[0].json.idempotency;
	};
	const complete = async (idempotency) =>
		await runWorkflow(completeWorkflow, [{ json: { idempotency } }], {
			credentials: db.credential(),
		});
	/** What an execution killed mid-step leaves once its lease has run out, without waiting. */
	const expire = async (key) =>
		await db.query(
			`UPDATE processed_events SET lease_until = now() - interval '2 minutes' WHERE key = $1`,
			[key],
		);

	test('stuck-keys-alert: its look-up hands the alert one item per stuck key, key at the top level, no completed one', async () => {
		const dead = await reserve('tpl_killed');
		await expire(dead.key);
		const done = await reserve('tpl_done');
		expect((await complete(done)).status).toBe('success');
		await reserve('tpl_running');

		const lookUp = stuckTemplate.nodes.find(
			(node) => node.type === 'n8n-nodes-idempotency.idempotencyKeys',
		);
		expect(stuckTemplate.connections[lookUp.name].main[0][0].node).toBe('Alert (replace me)');
		const result = await runWorkflow(
			{ name: 'stuck', nodes: [lookUp], connections: {}, settings: stuckTemplate.settings },
			[{ json: {} }],
			{ credentials: db.credential() },
		);
		const items = result.output(lookUp.name).map((item) => item.json);
		expect(items.map((json) => json.key)).toEqual(['evt:tpl_killed']);
		expect(items[0]).toMatchObject({ status: 'in_progress', attempt: 1, leaseRunning: false });
	});

	test("idempotency-errors: the key expression reads the key from Complete Key's real lost-lease error", async () => {
		const dead = await reserve('tpl_lost');
		await expire(dead.key);
		const takeover = await reserve('tpl_lost');
		expect(takeover.attempt).toBe(2);
		const late = await complete(dead);
		expect(late.status).toBe('error');

		const fields = errorsTemplate.nodes.find((node) => node.type === 'n8n-nodes-base.set');
		const keyField = fields.parameters.assignments.assignments.find((a) => a.name === 'key');
		// The expression's JavaScript, evaluated on an Error Trigger item as n8n builds it.
		const evaluate = new Function('$json', `return (${keyField.value.slice(3, -2)});`);
		const errorTriggerJson = (message) => ({
			execution: { id: '231', error: { message }, lastNodeExecuted: 'Complete Key' },
			workflow: { id: '1', name: 'Idempotent webhook' },
		});
		expect(evaluate(errorTriggerJson(late.error.message))).toBe('evt:tpl_lost');
		expect(
			evaluate(errorTriggerJson('Key "evt:a b" is held by another transaction: gave up')),
		).toBe('evt:a b');
		expect(evaluate(errorTriggerJson('PostgreSQL is read-only'))).toBe('');
		expect(evaluate({})).toBe('');
	});
});
