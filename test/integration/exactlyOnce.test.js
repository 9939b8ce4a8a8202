// The exactly-once step: the business statements and the completion of the key commit in one
// transaction, or neither does. Owner check under the row lock (fencing of a stale execution),
// rollback on a statement error, batches locked in key order, parameters of every type, rows out.
const { describe, test, expect, beforeAll } = require('@jest/globals');
const { useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { sleep, waitFor } = require('../support/waitFor');
const { webhookItem } = require('../support/webhookItems');
const exactlyOnceWorkflow = require('../fixtures/exactly-once.workflow.json');

const STEP = 'Business Step (exactly once)';

const db = useTestDatabase(async (database) => {
	await database.query(`CREATE TABLE business_log (
		id bigserial PRIMARY KEY,
		event_key text NOT NULL,
		event_type text CHECK (event_type IS DISTINCT FROM 'refused.by.check'),
		created_at timestamptz NOT NULL DEFAULT now()
	)`);
});

/** The step alone, fed items that carry a key and a token (a sub-workflow, or a test of fencing). */
const stepOnlyWorkflow = {
	...exactlyOnceWorkflow,
	nodes: exactlyOnceWorkflow.nodes
		.filter((node) => node.name === STEP)
		.map((node) => ({
			...node,
			onError: undefined,
			parameters: { ...node.parameters, reservation: '={{ $json.idempotency.token }}' },
		})),
	connections: {},
};

/** @param {object[]} items @param {Record<string, unknown>} [parameters] the step's, and `continueOnFail` */
async function runStepOnly(items, { onError, ...parameters } = {}) {
	return await runWorkflow(stepOnlyWorkflow, items, {
		credentials: db.credential({ maxConnections: 4 }),
		nodeOverrides: { [STEP]: { parameters, ...(onError ? { onError } : {}) } },
	});
}

/** Reserve → the step (error output → Release), as the template wires them. */
async function deliver(body, { step = {}, reserveParameters = {} } = {}) {
	return await runWorkflow(exactlyOnceWorkflow, [webhookItem({ body })], {
		credentials: db.credential({ maxConnections: 4 }),
		nodeOverrides: {
			[STEP]: { parameters: step },
			'Idempotency Reserve': { parameters: reserveParameters },
		},
	});
}

/** Reserves one key in lease mode and returns its `idempotency` (key, token, …). */
async function reserve(id, { leaseSeconds = 60 } = {}) {
	const run = await runWorkflow(
		{ ...exactlyOnceWorkflow, nodes: exactlyOnceWorkflow.nodes.slice(0, 1), connections: {} },
		[webhookItem({ body: { id } })],
		{
			credentials: db.credential(),
			nodeOverrides: { 'Idempotency Reserve': { parameters: { leaseSeconds } } },
		},
	);
	expect(run.error).toBeUndefined();
	const [reserved] = run.output('Idempotency Reserve', 0);
	expect(reserved).toBeDefined();
	return reserved.json.idempotency;
}

async function businessRows(eventKey) {
	return (
		await db.query('SELECT event_key, event_type FROM business_log WHERE event_key = $1', [
			eventKey,
		])
	).rows;
}

async function keyRow(key) {
	const { rows } = await db.query(
		'SELECT status, owner_token, attempts, completed_at FROM processed_events WHERE key = $1',
		[key],
	);
	return rows[0];
}

async function expireLease(key) {
	await db.query(
		`UPDATE processed_events SET lease_until = now() - interval '1 second' WHERE key = $1`,
		[key],
	);
}

/** A session of the test's own that holds `keys`' rows locked until commit(). */
async function holdRows(keys) {
	const client = await db.connect();
	await client.query('BEGIN');
	await client.query('SELECT key FROM processed_events WHERE key = ANY($1) FOR UPDATE', [keys]);
	return {
		commit: async () => {
			await client.query('COMMIT');
			await client.end();
		},
	};
}

/** How many sessions of this database wait for a row lock right now. */
async function lockWaiters() {
	const { rows } = await db.query(
		`SELECT count(*)::int AS waiting FROM pg_stat_activity
		 WHERE datname = current_database() AND wait_event_type = 'Lock'`,
	);
	return rows[0].waiting;
}

describe('one event, one transaction', () => {
	test('a new event: the row is inserted, the key completed in the same commit, the rows are the output', async () => {
		const run = await deliver({ id: 'eo_new', type: 'order.paid' });
		expect(run.error).toBeUndefined();
		const [out] = run.output(STEP);
		expect(out.json).toEqual({
			id: expect.any(String),
			event_key: 'evt:eo_new',
			idempotency: { key: 'evt:eo_new', completed: true },
		});
		expect(run.ran('Release Key')).toBe(false);
		expect(await businessRows('evt:eo_new')).toEqual([
			{ event_key: 'evt:eo_new', event_type: 'order.paid' },
		]);
		const row = await keyRow('evt:eo_new');
		expect(row.status).toBe('completed');
		expect(row.completed_at).toBeInstanceOf(Date);

		// The retry is a completed duplicate: Reserve's false output, the step does not run.
		const retry = await deliver({ id: 'eo_new', type: 'order.paid' });
		expect(retry.ran(STEP)).toBe(false);
		expect(retry.output('Idempotency Reserve', 1)[0].json.idempotency.status).toBe('completed');
		expect(await businessRows('evt:eo_new')).toHaveLength(1);
	});

	test('a statement that returns no rows gives one item with its row count', async () => {
		const run = await deliver(
			{ id: 'eo_norows', type: 'x' },
			{ step: { query: 'INSERT INTO business_log (event_key, event_type) VALUES ($1, $2)' } },
		);
		expect(run.error).toBeUndefined();
		expect(run.output(STEP).map((item) => item.json)).toEqual([
			{ rowCount: 1, idempotency: { key: 'evt:eo_norows', completed: true } },
		]);
	});

	test('a statement error rolls back everything: no row, the key still reserved, then the error output releases it', async () => {
		const run = await deliver({ id: 'eo_fails', type: 'refused.by.check' });
		expect(run.error).toBeUndefined();
		expect(run.output(STEP, 0)).toHaveLength(0);
		const [failed] = run.output(STEP, 1);
		expect(failed.json.error).toMatch(
			/^The step's SQL failed, so nothing was committed and the key is still reserved: new row for relation "business_log" violates check constraint/,
		);
		expect(failed.json.message).toMatch(/SQLSTATE 23514.*Release Key/);
		expect(await businessRows('evt:eo_fails')).toHaveLength(0);
		expect(run.output('Release Key')[0].json.idempotency).toEqual({
			key: 'evt:eo_fails',
			released: true,
		});
		expect(await keyRow('evt:eo_fails')).toBeUndefined();

		// The retry runs the step again, and this time it succeeds.
		const retry = await deliver({ id: 'eo_fails', type: 'accepted' });
		expect(retry.output(STEP)[0].json.idempotency.completed).toBe(true);
		expect(await businessRows('evt:eo_fails')).toEqual([
			{ event_key: 'evt:eo_fails', event_type: 'accepted' },
		]);
	});

	test('without the error output, a statement error fails the node and names the item', async () => {
		const reserved = await reserve('eo_fails_stop');
		const run = await runStepOnly([{ json: { idempotency: reserved, body: {} } }], {
			query: 'INSERT INTO business_log (no_such_column) VALUES ($1)',
		});
		expect(run.status).toBe('error');
		expect(run.error.name).toBe('NodeApiError');
		expect(run.error.message).toMatch(/column "no_such_column" of relation "business_log"/);
		expect(run.nodeError(STEP).context.itemIndex).toBe(0);
		expect(await keyRow('evt:eo_fails_stop')).toMatchObject({ status: 'in_progress' });
	});

	test('the same execution running the step again (n8n retried the node) commits nothing twice', async () => {
		const reserved = await reserve('eo_twice');
		const item = { json: { idempotency: reserved, body: { type: 'once' } } };
		const first = await runStepOnly([item]);
		expect(first.output(STEP)[0].json.idempotency).toEqual({
			key: 'evt:eo_twice',
			completed: true,
		});
		const second = await runStepOnly([item]);
		expect(second.error).toBeUndefined();
		expect(second.output(STEP).map((out) => out.json)).toEqual([
			{ idempotency: { key: 'evt:eo_twice', completed: true, alreadyCompleted: true } },
		]);
		expect(await businessRows('evt:eo_twice')).toHaveLength(1);
	});

	test('Release Key with the token of a completed key keeps it: its effect committed', async () => {
		const reserved = await reserve('eo_release_done');
		await runStepOnly([{ json: { idempotency: reserved, body: {} } }]);
		const releaseNode = exactlyOnceWorkflow.nodes.find((node) => node.name === 'Release Key');
		const run = await runWorkflow(
			{
				...exactlyOnceWorkflow,
				nodes: [
					{
						...releaseNode,
						parameters: {
							...releaseNode.parameters,
							key: '={{ $json.idempotency.key }}',
							reservation: '={{ $json.idempotency.token }}',
						},
					},
				],
				connections: {},
			},
			[{ json: { idempotency: reserved } }],
			{ credentials: db.credential() },
		);
		expect(run.output('Release Key')[0].json.idempotency).toEqual({
			key: 'evt:eo_release_done',
			released: false,
			reason: 'completed',
		});
		expect((await keyRow('evt:eo_release_done')).status).toBe('completed');
	});
});

describe('ownership under the row lock', () => {
	test('a stale execution whose lease was taken over commits nothing and names the key and attempt', async () => {
		const stale = await reserve('eo_stale');
		await expireLease('evt:eo_stale');
		const takeover = await reserve('eo_stale');
		expect(takeover.attempt).toBe(2);

		const late = await runStepOnly([{ json: { idempotency: stale, body: {} } }]);
		expect(late.status).toBe('error');
		expect(late.error.name).toBe('NodeOperationError');
		expect(late.error.message).toBe(
			`The key "evt:eo_stale" was taken over by another execution (attempt 2) after this execution's lease ended, so this step's statements were rolled back`,
		);
		expect(late.error.description).toMatch(/the effect happens once/);
		expect(await businessRows('evt:eo_stale')).toHaveLength(0);

		const current = await runStepOnly([{ json: { idempotency: takeover, body: {} } }]);
		expect(current.output(STEP)[0].json.idempotency.completed).toBe(true);
		expect(await businessRows('evt:eo_stale')).toHaveLength(1);
		// The stale one again, now that the key is completed by the other execution.
		const later = await runStepOnly([{ json: { idempotency: stale, body: {} } }]);
		expect(later.error.message).toMatch(/\(attempt 2\), which has completed it/);
		expect(await businessRows('evt:eo_stale')).toHaveLength(1);
	});

	test('a released key: nothing runs, and the error says so', async () => {
		const reserved = await reserve('eo_released');
		await db.query(`DELETE FROM processed_events WHERE key = 'evt:eo_released'`);
		const run = await runStepOnly([{ json: { idempotency: reserved, body: {} } }]);
		expect(run.error.message).toBe(
			'The key "evt:eo_released" is no longer reserved: it was released or purged (or lost by a key-store failover) before this step ran, so this step\'s statements were rolled back',
		);
		expect(await businessRows('evt:eo_released')).toHaveLength(0);
	});

	test('the lease ends while the step runs: the takeover waits for the row, finds it completed, and the effect happens once', async () => {
		const slow = await reserve('eo_slow', { leaseSeconds: 1 });
		const running = runStepOnly([{ json: { idempotency: slow, body: { type: 'slow' } } }], {
			query:
				'INSERT INTO business_log (event_key, event_type) SELECT $1, $2 FROM pg_sleep(1.5) RETURNING id',
		});
		await waitFor('the slow statement to run', async () => {
			const { rows } = await db.query(
				`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND query LIKE '%pg_sleep(1.5)%' AND state = 'active' AND pid <> pg_backend_pid()`,
			);
			return rows.length > 0;
		});
		await sleep(1100); // the 1 s lease has ended; the step still holds the row
		const retries = await Promise.all(
			Array.from({ length: 8 }, async () => await deliver({ id: 'eo_slow', type: 'slow' })),
		);
		const first = await running;
		expect(first.error).toBeUndefined();
		expect(first.output(STEP)[0].json.idempotency.completed).toBe(true);
		// Every retry was a duplicate (in flight while it waited, or completed): none ran the step.
		for (const retry of retries) {
			expect(retry.error).toBeUndefined();
			expect(retry.ran(STEP)).toBe(false);
		}
		expect(await businessRows('evt:eo_slow')).toHaveLength(1);
		expect(await keyRow('evt:eo_slow')).toMatchObject({ status: 'completed', attempts: 1 });
	});

	test('a row another session holds: the step gives up after the lock timeout, naming the key, and commits nothing', async () => {
		const reserved = await reserve('eo_locked');
		const holder = await holdRows(['evt:eo_locked']);
		const startedAt = Date.now();
		const run = await runStepOnly([{ json: { idempotency: reserved, body: {} } }]);
		const waitedMs = Date.now() - startedAt;
		await holder.commit();
		expect(run.error.message).toMatch(
			/^Key "evt:eo_locked" is held by another transaction: gave up waiting for it after the lock timeout/,
		);
		expect(waitedMs).toBeGreaterThanOrEqual(1900);
		expect(await businessRows('evt:eo_locked')).toHaveLength(0);
		expect((await keyRow('evt:eo_locked')).status).toBe('in_progress');
	});
});

describe('batches', () => {
	test('several items in one transaction: every row, every key completed; one lost key rolls back all of them', async () => {
		const a = await reserve('eo_batch_a');
		const b = await reserve('eo_batch_b');
		const c = await reserve('eo_batch_c');
		await db.query(`DELETE FROM processed_events WHERE key = 'evt:eo_batch_c'`);
		const items = [a, b, c].map((idempotency) => ({ json: { idempotency, body: { type: 'b' } } }));

		const stopped = await runStepOnly(items);
		expect(stopped.error.message).toMatch(/"evt:eo_batch_c" is no longer reserved/);
		expect(stopped.nodeError(STEP).context.itemIndex).toBe(2);
		for (const key of ['evt:eo_batch_a', 'evt:eo_batch_b']) {
			expect(await businessRows(key)).toHaveLength(0);
			expect((await keyRow(key)).status).toBe('in_progress');
		}

		// With "continue (using error output)", the lost item fails alone and the others commit.
		const continued = await runStepOnly(items, { onError: 'continueErrorOutput' });
		expect(continued.output(STEP, 0).map((out) => out.json.idempotency.key)).toEqual([
			'evt:eo_batch_a',
			'evt:eo_batch_b',
		]);
		expect(continued.output(STEP, 1)).toHaveLength(1);
		expect(continued.output(STEP, 1)[0].json.error).toMatch(/"evt:eo_batch_c"/);
		for (const key of ['evt:eo_batch_a', 'evt:eo_batch_b']) {
			expect(await businessRows(key)).toHaveLength(1);
			expect((await keyRow(key)).status).toBe('completed');
		}
	});

	test('two items of one key (an order and its lines) both run, in item order, and the key completes once', async () => {
		const reserved = await reserve('eo_lines');
		const items = ['line.1', 'line.2'].map((type) => ({
			json: { idempotency: reserved, body: { type } },
		}));
		const run = await runStepOnly(items);
		expect(run.output(STEP).map((out) => [out.json.event_key, out.pairedItem])).toEqual([
			['evt:eo_lines', { item: 0 }],
			['evt:eo_lines', { item: 1 }],
		]);
		expect((await businessRows('evt:eo_lines')).map((row) => row.event_type)).toEqual([
			'line.1',
			'line.2',
		]);
	});

	test('overlapping batches in opposite orders queue behind each other instead of deadlocking', async () => {
		const reserved = await reserve('eo_order_1');
		const second = await reserve('eo_order_2');
		const k1 = { ...reserved };
		const k2 = { ...second, token: reserved.token };
		// Both keys under one token, so either batch may complete them; the other then finds them done.
		await db.query(`UPDATE processed_events SET owner_token = $1 WHERE key = 'evt:eo_order_2'`, [
			reserved.token,
		]);
		const asItems = (keys) =>
			keys.map((idempotency) => ({ json: { idempotency, body: { type: 'order' } } }));

		// Two sessions hold one key each; both batches queue on them; both are let go at once.
		const holdsK1 = await holdRows(['evt:eo_order_1']);
		const holdsK2 = await holdRows(['evt:eo_order_2']);
		const forward = runStepOnly(asItems([k1, k2]));
		const backward = runStepOnly(asItems([k2, k1]));
		await waitFor('both batches to wait for a row', async () => (await lockWaiters()) >= 2);
		await Promise.all([holdsK1.commit(), holdsK2.commit()]);
		const runs = await Promise.all([forward, backward]);

		for (const run of runs) expect(run.error).toBeUndefined();
		const outcomes = runs.map((run) =>
			run.output(STEP).map((out) => out.json.idempotency.alreadyCompleted === true),
		);
		// One batch committed both rows, the other found both keys completed by their token.
		expect(outcomes.map((flags) => flags.join()).sort()).toEqual(['false,false', 'true,true']);
		expect(await businessRows('evt:eo_order_1')).toHaveLength(1);
		expect(await businessRows('evt:eo_order_2')).toHaveLength(1);
	});

	test('control: two transactions taking the same keys in item order, one at a time, deadlock', async () => {
		await db.query(
			`INSERT INTO processed_events (key, status) VALUES ('ctl:1', 'in_progress'), ('ctl:2', 'in_progress')`,
		);
		const lock = (client, key) =>
			client.query('SELECT 1 FROM processed_events WHERE key = $1 FOR UPDATE', [key]);
		const forward = await db.connect();
		const backward = await db.connect();
		try {
			await forward.query('BEGIN');
			await backward.query('BEGIN');
			await lock(forward, 'ctl:1');
			await lock(backward, 'ctl:2');
			const outcome = (promise) =>
				promise.then(
					() => 'locked',
					(error) => error.code,
				);
			const forwardSecond = outcome(lock(forward, 'ctl:2'));
			await waitFor('the first to wait for a row', async () => (await lockWaiters()) >= 1);
			const backwardSecond = outcome(lock(backward, 'ctl:1'));
			// 40P01: deadlock_detected, for one of them; the other gets its row once that one is gone.
			const [loser, code] = await Promise.race([
				forwardSecond.then((result) => ['forward', result]),
				backwardSecond.then((result) => ['backward', result]),
			]);
			expect(code).toBe('40P01');
			await (loser === 'forward' ? forward : backward).query('ROLLBACK');
			expect([await forwardSecond, await backwardSecond].sort()).toEqual(['40P01', 'locked']);
		} finally {
			await forward.query('ROLLBACK');
			await backward.query('ROLLBACK');
			await forward.end();
			await backward.end();
		}
	});
});

describe('statements and parameters', () => {
	beforeAll(async () => {
		await db.query(`CREATE TABLE typed_values (
			event_key text, a_text text, a_int integer, a_numeric numeric, a_bool boolean,
			a_null text, a_json jsonb, a_array integer[], a_time timestamptz
		)`);
	});

	const TYPED_INSERT = `INSERT INTO typed_values VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		RETURNING a_text, a_int, a_numeric::text AS a_numeric, a_bool, a_null, a_json, a_array, a_time`;
	const TYPED_EXPECTED = {
		a_text: "O'Brien, «ü» 🚀",
		a_int: 42,
		a_numeric: '12345678901234567890.5',
		a_bool: true,
		a_null: null,
		a_json: { nested: { list: [1, 'two'] } },
		a_array: [1, 2, 3],
		a_time: new Date('2026-01-02T03:04:05.000Z'),
	};
	const typedBody = {
		text: "O'Brien, «ü» 🚀",
		int: 42,
		numeric: '12345678901234567890.5',
		bool: true,
		json: { nested: { list: [1, 'two'] } },
		array: [1, 2, 3],
		time: '2026-01-02T03:04:05.000Z',
	};

	test('an expression that gives an array: text, numbers, booleans, null, objects, arrays and dates', async () => {
		const reserved = await reserve('eo_types_array');
		const run = await runStepOnly([{ json: { idempotency: reserved, body: typedBody } }], {
			query: TYPED_INSERT,
			queryParameters:
				'={{ [$json.idempotency.key, $json.body.text, $json.body.int, $json.body.numeric, $json.body.bool, null, $json.body.json, $json.body.array, new Date($json.body.time)] }}',
		});
		expect(run.error).toBeUndefined();
		const { idempotency, ...row } = run.output(STEP)[0].json;
		// Rows as the driver reads them, as in n8n's Postgres node (a timestamptz is a Date).
		expect(row).toEqual(TYPED_EXPECTED);
		expect(idempotency).toEqual({ key: 'evt:eo_types_array', completed: true });
	});

	test("a comma-separated list as in n8n's Postgres node: literals, and one expression per entry (commas inside it kept)", async () => {
		const reserved = await reserve('eo_types_list');
		const run = await runStepOnly([{ json: { idempotency: reserved, body: typedBody } }], {
			query:
				'INSERT INTO typed_values (event_key, a_text, a_int, a_bool) VALUES ($1, $2, $3, $4) RETURNING a_text, a_int, a_bool',
			queryParameters:
				'={{ $json.idempotency.key }}, {{ [$json.body.text].join(", ") }}, 7, {{ $json.body.bool }}',
		});
		expect(run.error).toBeUndefined();
		const { idempotency, ...row } = run.output(STEP)[0].json;
		expect(row).toEqual({ a_text: "O'Brien, «ü» 🚀", a_int: 7, a_bool: true });
		expect(idempotency.completed).toBe(true);
	});

	test('several statements without parameters run in order and give all their rows', async () => {
		const reserved = await reserve('eo_multi');
		const run = await runStepOnly([{ json: { idempotency: reserved, body: {} } }], {
			query: `INSERT INTO business_log (event_key, event_type) VALUES ('evt:eo_multi', 'first') RETURNING event_type;
				INSERT INTO business_log (event_key, event_type) VALUES ('evt:eo_multi', 'second') RETURNING event_type`,
			queryParameters: '',
		});
		expect(run.error).toBeUndefined();
		expect(run.output(STEP).map((out) => out.json.event_type)).toEqual(['first', 'second']);
	});

	test('several statements with parameters: a clear error that says how to join them', async () => {
		const reserved = await reserve('eo_multi_params');
		const run = await runStepOnly([{ json: { idempotency: reserved, body: {} } }], {
			query:
				'INSERT INTO business_log (event_key) VALUES ($1); INSERT INTO business_log (event_key) VALUES ($1)',
		});
		expect(run.error.message).toMatch(/cannot insert multiple commands into a prepared statement/);
		expect(run.error.description).toMatch(/WITH a AS \(INSERT …\) INSERT …/);
		expect(await businessRows('evt:eo_multi_params')).toHaveLength(0);
	});

	test.each([
		['COMMIT', 'INSERT INTO business_log (event_key) VALUES ($1); COMMIT'],
		['BEGIN', 'BEGIN; INSERT INTO business_log (event_key) VALUES ($1)'],
		['ROLLBACK', 'insert into business_log (event_key) values ($1);\n  rollback'],
	])('transaction control (%s) is refused before anything runs', async (word, query) => {
		const reserved = await reserve(`eo_control_${word}`);
		const run = await runStepOnly([{ json: { idempotency: reserved, body: {} } }], { query });
		expect(run.error.message).toBe(
			`The query contains ${word}: this step runs it inside its own transaction`,
		);
		expect(run.nodeError(STEP).context.itemIndex).toBe(0);
		expect(await keyRow(`evt:eo_control_${word}`)).toMatchObject({ status: 'in_progress' });
	});

	test('an item without a token is refused: only the execution that holds a key may finish it', async () => {
		const run = await runStepOnly([
			{ json: { idempotency: { key: 'evt:eo_no_token' }, body: {} } },
		]);
		expect(run.error.message).toBe(
			'The key "evt:eo_no_token" comes without the token of its reservation',
		);
	});
});
