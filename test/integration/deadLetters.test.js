// Dead letters (issue 53: keys the Redrive Trigger gave up on) as the operator meets them, through
// n8n-core's engine on a real PostgreSQL: the Keys node's Look Up (a key's status and attempts, and
// Look Up → Dead Letters), its Report, Retry Dead Letters and Drop Dead Letters (only dead letters
// change; the output says which keys were and which were not), the Keys node's Purge by state; Release
// Key by key alone; Purge Keys after the retention; and the stuck-keys template's dead-letter branch.
const { describe, test, expect, beforeEach } = require('@jest/globals');

const { KeyStore } = require('../../dist/nodes/shared/store/KeyStore');
const { tableRef } = require('../../dist/nodes/shared/store/identifiers');
const sql = require('../../dist/nodes/shared/store/sql');
const { poolFor } = require('../../dist/nodes/shared/transport/poolCache');
const { useTestDatabase } = require('../support/database');
const { KEYS_NODE, keysWorkflow: keysNodeWorkflow } = require('../support/keysWorkflow');
const { runWorkflow } = require('../support/engine');
const { webhookItem } = require('../support/webhookItems');
const purgeWorkflow = require('../fixtures/purge.workflow.json');
const releaseWorkflow = require('../fixtures/release.workflow.json');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');
const stuckTemplate = require('../../workflows/stuck-keys-alert.json');
const deadLettersTemplate = require('../../workflows/dead-letters.json');

const db = useTestDatabase();

const NODE = KEYS_NODE;
const TABLE = 'processed_events';
const ref = tableRef('public', TABLE);

/** A workflow of the Keys node, with these parameters (and node fields) on top of the defaults. */
const keysWorkflow = (parameters, nodeFields = {}) =>
	keysNodeWorkflow(TABLE, parameters, nodeFields);

async function run(parameters, items = [{ json: {} }], nodeFields = {}) {
	const result = await runWorkflow(keysWorkflow(parameters, nodeFields), items, {
		credentials: db.credential(),
	});
	if (result.status !== 'success') throw result.error ?? new Error(`run ${result.status}`);
	return result.output(NODE).map((item) => item.json);
}

const rowOf = async (key) =>
	(
		await db.query(
			`SELECT status, attempts, owner_token, lease_until < now() AS lease_ended, delivery
			 FROM ${TABLE} WHERE key = $1`,
			[key],
		)
	).rows[0];

/**
 * The lease table as Reserve creates it (with the delivery column), holding two dead letters (made
 * by UPDATE, as the claim leaves them: no owner, no lease, their attempts), a completed key, one in
 * progress with a running lease, a stuck one, and a legacy row.
 */
async function seed() {
	await db.query(`DROP TABLE IF EXISTS ${ref.qualified}`);
	await db.query(sql.createTableSql(ref, { lease: true }));
	// Reserve adds the optional columns it needs; answer first's is `delivery`.
	await db.query(`ALTER TABLE ${ref.qualified} ADD COLUMN IF NOT EXISTS delivery jsonb`);
	await db.query(
		`INSERT INTO ${ref.qualified} (key, first_seen, status, owner_token, lease_until, completed_at, attempts, delivery) VALUES
		 ('evt:dl_old', now() - interval '3 hours', 'in_progress', 'tok-1', now() - interval '2 hours', NULL, 5, '{"v":1,"body":{"id":"dl_old"}}'),
		 ('evt:dl_new', now() - interval '1 hour', 'in_progress', 'tok-2', now() - interval '30 minutes', NULL, 5, '{"v":1,"body":{"id":"dl_new"}}'),
		 ('evt:done', now() - interval '2 hours', 'completed', 'tok-done', NULL, now() - interval '119 minutes', 1, NULL),
		 ('evt:running', now() - interval '1 minute', 'in_progress', 'tok-running', now() + interval '5 minutes', NULL, 1, '{"v":1,"body":{}}'),
		 ('evt:stuck', now() - interval '20 minutes', 'in_progress', 'tok-stuck', now() - interval '10 minutes', NULL, 2, NULL),
		 ('evt:legacy', now() - interval '3 days', NULL, NULL, NULL, NULL, 1, NULL)`,
	);
	await db.query(
		`UPDATE ${ref.qualified} SET status = 'dead_letter', owner_token = NULL, lease_until = NULL
		 WHERE key IN ('evt:dl_old', 'evt:dl_new')`,
	);
}

describe('the Idempotency Keys node', () => {
	beforeEach(async () => await seed());

	test("Look Up → Keys: a dead letter's status and attempts, no lease, no holder", async () => {
		const [dead] = await run({ operation: 'lookUp', lookUpBy: 'keys', keys: 'evt:dl_old' });
		expect(dead).toMatchObject({
			key: 'evt:dl_old',
			found: true,
			status: 'dead_letter',
			attempt: 5,
			leaseUntil: null,
			completedAt: null,
			holder: null,
		});
		expect(dead).not.toHaveProperty('leaseRunning');
	});

	test('Look Up → Dead Letters: only dead letters, oldest first, at most Limit; none when there are none', async () => {
		const all = await run({ operation: 'lookUp', lookUpBy: 'deadLetters' });
		expect(all.map((json) => [json.key, json.status, json.attempt])).toEqual([
			['evt:dl_old', 'dead_letter', 5],
			['evt:dl_new', 'dead_letter', 5],
		]);
		expect(await run({ operation: 'lookUp', lookUpBy: 'deadLetters', limit: 1 })).toEqual([
			expect.objectContaining({ key: 'evt:dl_old' }),
		]);
		const { rows } = await db.query(
			`SELECT indexname FROM pg_indexes WHERE tablename = $1 AND indexname = $2`,
			[TABLE, `${TABLE}_dead_letter_idx`],
		);
		expect(rows).toHaveLength(1);
		await db.query(`DELETE FROM ${TABLE} WHERE status = 'dead_letter'`);
		expect(await run({ operation: 'lookUp', lookUpBy: 'deadLetters' })).toEqual([]);
	});

	test('Look Up → Stuck Keys does not list dead letters (saved alerts keep meaning stuck)', async () => {
		const stuck = await run({ operation: 'lookUp', lookUpBy: 'stuck' });
		expect(stuck.map((json) => json.key)).toEqual(['evt:stuck']);
	});

	test('Report: counts dead letters apart from keys in progress and names the oldest, with what to do next', async () => {
		await db.query(`ANALYZE ${TABLE}`);
		const [report] = await run({ operation: 'report' });
		expect(report.counts).toMatchObject({
			inProgress: 2,
			stuck: 1,
			deadLetters: 2,
			completedOrLegacyEstimated: 2,
		});
		expect(report.deadLetters).toEqual({
			count: 2,
			oldestKeys: ['evt:dl_old', 'evt:dl_new'],
			allListed: true,
			next: expect.stringMatching(/Look Up → Dead Letters.*Retry Dead Letters.*Drop Dead Letters/),
		});
		await db.query(`DELETE FROM ${TABLE} WHERE status = 'dead_letter'`);
		const [none] = await run({ operation: 'report' });
		expect(none.deadLetters).toEqual({ count: 0, oldestKeys: [], allListed: true });
	});

	test('Retry Dead Letters: only the dead letters become due with fresh attempts; the output says which keys were retried and why others were not', async () => {
		const before = {
			done: await rowOf('evt:done'),
			running: await rowOf('evt:running'),
			stuck: await rowOf('evt:stuck'),
		};
		const out = await run({ operation: 'retryDeadLetters', keys: '={{ $json.keys }}' }, [
			{ json: { keys: ['evt:dl_old', 'evt:done', 'evt:nope'] } },
			{ json: { keys: 'evt:running\nevt:stuck\nevt:legacy' } },
		]);
		expect(out).toEqual([
			{ key: 'evt:dl_old', retried: true },
			{ key: 'evt:done', retried: false, reason: 'not_dead_letter', status: 'completed' },
			{ key: 'evt:nope', retried: false, reason: 'not_found' },
			{ key: 'evt:running', retried: false, reason: 'not_dead_letter', status: 'in_progress' },
			{ key: 'evt:stuck', retried: false, reason: 'not_dead_letter', status: 'in_progress' },
			{ key: 'evt:legacy', retried: false, reason: 'not_dead_letter', status: 'legacy' },
		]);
		expect(await rowOf('evt:dl_old')).toMatchObject({
			status: 'in_progress',
			attempts: 0,
			owner_token: null,
			lease_ended: true,
			delivery: { v: 1, body: { id: 'dl_old' } },
		});
		expect(await rowOf('evt:dl_new')).toMatchObject({ status: 'dead_letter', attempts: 5 });
		expect(await rowOf('evt:done')).toEqual(before.done);
		expect(await rowOf('evt:running')).toEqual(before.running);
		expect(await rowOf('evt:stuck')).toEqual(before.stuck);

		// The Redrive Trigger's next claim runs it, as attempt 1; retrying again changes nothing.
		const claim = await new KeyStore(poolFor(db.credential()), ref).claimRedrives({
			token: 'claim-after-retry',
			leaseSeconds: 60,
			maxAttempts: 5,
			limit: 100,
			backoffSeconds: 30,
			workflowId: 'test-workflow',
			claimUnscoped: true,
		});
		expect(claim.claimed.map(({ key, attempt }) => [key, attempt])).toEqual([['evt:dl_old', 1]]);
		expect(await run({ operation: 'retryDeadLetters', keys: 'evt:dl_old' })).toEqual([
			{ key: 'evt:dl_old', retried: false, reason: 'not_dead_letter', status: 'in_progress' },
		]);
	});

	test('a key the claim made a dead letter (maxAttempts 1) is retried from the Keys node and claimed again', async () => {
		await db.query(`DELETE FROM ${TABLE}`);
		await runWorkflow(reserveWorkflow, [webhookItem({ body: { id: 'dl_claimed' } })], {
			credentials: db.credential(),
			nodeOverrides: {
				'Idempotency Reserve': {
					parameters: { mode: 'lease', leaseSeconds: 60, answerFirst: true },
				},
			},
		});
		await db.query(`UPDATE ${TABLE} SET lease_until = now() - interval '1 hour'`);
		const store = new KeyStore(poolFor(db.credential()), ref);
		const claim = async () =>
			await store.claimRedrives({
				token: `claim-${Math.random().toString(16).slice(2)}`,
				leaseSeconds: 60,
				maxAttempts: 1,
				limit: 100,
				backoffSeconds: 30,
				workflowId: 'test-workflow',
			});
		expect((await claim()).deadLetters).toEqual([{ key: 'evt:dl_claimed', attempts: 1 }]);
		expect(await run({ operation: 'lookUp', lookUpBy: 'deadLetters' })).toEqual([
			expect.objectContaining({ key: 'evt:dl_claimed', status: 'dead_letter', attempt: 1 }),
		]);
		expect(await run({ operation: 'retryDeadLetters', keys: 'evt:dl_claimed' })).toEqual([
			{ key: 'evt:dl_claimed', retried: true },
		]);
		// A fresh count: with Max Attempts 1 it is claimed once more instead of dying again.
		expect((await claim()).claimed.map(({ key, attempt }) => [key, attempt])).toEqual([
			['evt:dl_claimed', 1],
		]);
	});

	test('Drop Dead Letters: deletes the given dead letters and nothing else, saying which keys were not dead letters', async () => {
		const out = await run({
			operation: 'dropDeadLetters',
			keys: 'evt:dl_new\nevt:done\nevt:running\nevt:nope\nevt:dl_new',
		});
		expect(out).toEqual([
			{ key: 'evt:dl_new', dropped: true },
			{ key: 'evt:done', dropped: false, reason: 'not_dead_letter', status: 'completed' },
			{ key: 'evt:running', dropped: false, reason: 'not_dead_letter', status: 'in_progress' },
			{ key: 'evt:nope', dropped: false, reason: 'not_found' },
			{ key: 'evt:dl_new', dropped: true },
		]);
		const { rows } = await db.query(`SELECT key FROM ${TABLE} ORDER BY key`);
		expect(rows.map((row) => row.key)).toEqual([
			'evt:dl_old',
			'evt:done',
			'evt:legacy',
			'evt:running',
			'evt:stuck',
		]);
	});

	test('an item without a key is a NodeOperationError with its index and a hint; with continue on fail, the other items still run', async () => {
		const items = [{ json: { k: 'evt:dl_old' } }, { json: { k: '' } }];
		const failed = await runWorkflow(
			keysWorkflow({ operation: 'retryDeadLetters', keys: '={{ $json.k }}' }),
			items,
			{ credentials: db.credential() },
		);
		expect(failed.status).toBe('error');
		expect(failed.error.name).toBe('NodeOperationError');
		expect(failed.error.message).toBe('No dead letter to retry: Keys is empty');
		expect(failed.error.context.itemIndex).toBe(1);
		expect(failed.error.description).toMatch(/Look Up → Dead Letters/);
		// Nothing ran: the dead letter is still one.
		expect((await rowOf('evt:dl_old')).status).toBe('dead_letter');

		const out = await run({ operation: 'dropDeadLetters', keys: '={{ $json.k }}' }, items, {
			onError: 'continueRegularOutput',
		});
		expect(out[0]).toEqual({ key: 'evt:dl_old', dropped: true });
		expect(out[1]).toMatchObject({
			error: 'No dead letter to drop: Keys is empty',
			message: expect.stringMatching(/Look Up → Dead Letters/),
		});
	});

	test('a dead letter another operator drops while the retry waits for its row: changed_meanwhile, nothing retried', async () => {
		const psql = await db.connect();
		try {
			await psql.query('BEGIN');
			await psql.query(`DELETE FROM ${TABLE} WHERE key = 'evt:dl_old'`);
			const retry = run({ operation: 'retryDeadLetters', keys: 'evt:dl_old\nevt:dl_new' });
			await new Promise((resolve) => setTimeout(resolve, 300));
			await psql.query('COMMIT');
			expect(await retry).toEqual([
				{ key: 'evt:dl_old', retried: false, reason: 'changed_meanwhile', status: 'dead_letter' },
				{ key: 'evt:dl_new', retried: true },
			]);
		} finally {
			await psql.end();
		}
		expect(await rowOf('evt:dl_old')).toBeUndefined();
	});

	test('a dead letter held by an open transaction: the retry gives up after the lock bound naming why, and changes nothing', async () => {
		const psql = await db.connect();
		try {
			await psql.query('BEGIN');
			await psql.query(`SELECT 1 FROM ${TABLE} WHERE key = 'evt:dl_old' FOR UPDATE`);
			const started = Date.now();
			const result = await runWorkflow(
				keysWorkflow({ operation: 'retryDeadLetters', keys: 'evt:dl_old\nevt:dl_new' }),
				[{ json: {} }],
				{ credentials: db.credential() },
			);
			expect(result.status).toBe('error');
			expect(result.error.message).toMatch(/another transaction.*retry the dead letters/);
			expect(Date.now() - started).toBeLessThan(sql.LOCK_WAIT_MS + 3_000);
		} finally {
			await psql.end();
		}
		expect((await rowOf('evt:dl_new')).status).toBe('dead_letter');
	});

	test('Purge by state: Dead Letter selects only them; Completed or Legacy never deletes a dead letter', async () => {
		const [dryRun] = await run({
			operation: 'purge',
			purgeBy: 'age',
			retentionAmount: 0,
			retentionUnit: 'days',
			statusFilter: 'deadLetter',
		});
		expect(dryRun).toMatchObject({
			dryRun: true,
			wouldDelete: 2,
			keys: ['evt:dl_new', 'evt:dl_old'],
		});
		const [done] = await run({
			operation: 'purge',
			purgeBy: 'age',
			retentionAmount: 0,
			retentionUnit: 'days',
			statusFilter: 'completedOrLegacy',
			dryRun: false,
		});
		expect(done).toMatchObject({ deleted: 2, keys: ['evt:done', 'evt:legacy'] });
		expect((await rowOf('evt:dl_old')).status).toBe('dead_letter');
		const [dead] = await run({
			operation: 'purge',
			purgeBy: 'keys',
			keys: 'evt:dl_old\nevt:stuck',
			statusFilter: 'deadLetter',
			dryRun: false,
		});
		expect(dead).toMatchObject({ deleted: 1, keys: ['evt:dl_old'] });
	});

	test('the hand-built two-column table: nothing is a dead letter there, and nothing changes', async () => {
		await db.query(`DROP TABLE IF EXISTS plain_events`);
		await db.query(
			`CREATE TABLE plain_events (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())`,
		);
		await db.query(`INSERT INTO plain_events (key) VALUES ('evt:p1')`);
		const table = { table: 'plain_events' };
		expect(await run({ operation: 'lookUp', lookUpBy: 'deadLetters', ...table })).toEqual([]);
		expect(await run({ operation: 'retryDeadLetters', keys: 'evt:p1\nevt:p2', ...table })).toEqual([
			{ key: 'evt:p1', retried: false, reason: 'not_dead_letter', status: 'legacy' },
			{ key: 'evt:p2', retried: false, reason: 'not_found' },
		]);
		expect(await run({ operation: 'dropDeadLetters', keys: 'evt:p1', ...table })).toEqual([
			{ key: 'evt:p1', dropped: false, reason: 'not_dead_letter', status: 'legacy' },
		]);
		const [report] = await run({ operation: 'report', ...table });
		expect(report.deadLetters).toEqual({ count: 0, oldestKeys: [], allListed: true });
		expect((await db.query(`SELECT count(*)::int AS n FROM plain_events`)).rows[0].n).toBe(1);
	});
});

describe('Release Key and Purge Keys', () => {
	beforeEach(async () => await seed());

	test('Release Key by key alone (no token: any holder) deletes a dead letter; with a token it is not the owner', async () => {
		const withToken = await runWorkflow(
			releaseWorkflow,
			[{ json: { idempotency: { key: 'evt:dl_old', token: 'tok-1' } } }],
			{ credentials: db.credential() },
		);
		expect(withToken.output('Release Key')[0].json.idempotency).toEqual({
			key: 'evt:dl_old',
			released: false,
			reason: 'not_owner',
		});
		expect((await rowOf('evt:dl_old')).status).toBe('dead_letter');

		const released = await runWorkflow(
			releaseWorkflow,
			[{ json: { idempotency: { key: 'evt:dl_old' } } }],
			{ credentials: db.credential() },
		);
		expect(released.output('Release Key')[0].json.idempotency).toEqual({
			key: 'evt:dl_old',
			released: true,
		});
		expect(await rowOf('evt:dl_old')).toBeUndefined();
		// The sender's resend is then a new event.
		const resend = await runWorkflow(reserveWorkflow, [webhookItem({ body: { id: 'dl_old' } })], {
			credentials: db.credential(),
			nodeOverrides: { 'Idempotency Reserve': { parameters: { mode: 'lease' } } },
		});
		expect(resend.output('Idempotency Reserve', 0)).toHaveLength(1);
	});

	test('Purge Keys deletes a dead letter older than the retention like any key, and keeps a younger one', async () => {
		await db.query(
			`UPDATE ${TABLE} SET first_seen = now() - interval '31 days' WHERE key = 'evt:dl_old'`,
		);
		const result = await runWorkflow(purgeWorkflow, [{ json: {} }], {
			credentials: db.credential(),
		});
		expect(result.status).toBe('success');
		expect(result.output('Purge Keys')[0].json).toMatchObject({ deleted: 1 });
		expect(await rowOf('evt:dl_old')).toBeUndefined();
		expect((await rowOf('evt:dl_new')).status).toBe('dead_letter');
	});
});

describe('workflows/stuck-keys-alert.json', () => {
	beforeEach(async () => await seed());

	test('its dead-letter look-up hands the alert one item per dead letter, beside the stuck keys', async () => {
		const keysNodes = stuckTemplate.nodes.filter(
			(node) => node.type === 'n8n-nodes-idempotency.idempotencyKeys',
		);
		const alert = stuckTemplate.nodes.find((node) => node.type === 'n8n-nodes-base.noOp');
		expect(keysNodes.map((node) => node.parameters.lookUpBy).sort()).toEqual([
			'deadLetters',
			'stuck',
		]);
		const trigger = stuckTemplate.nodes.find((node) => node.type.endsWith('scheduleTrigger'));
		const fromTrigger = stuckTemplate.connections[trigger.name].main[0].map((c) => c.node).sort();
		expect(fromTrigger).toEqual(keysNodes.map((node) => node.name).sort());
		const found = {};
		for (const node of keysNodes) {
			expect(stuckTemplate.connections[node.name].main[0][0].node).toBe(alert.name);
			const result = await runWorkflow(
				{ name: 'alert', nodes: [node], connections: {}, settings: stuckTemplate.settings },
				[{ json: {} }],
				{ credentials: db.credential() },
			);
			found[node.parameters.lookUpBy] = result.output(node.name).map((item) => item.json);
		}
		expect(found.deadLetters.map((json) => [json.key, json.status, json.attempt])).toEqual([
			['evt:dl_old', 'dead_letter', 5],
			['evt:dl_new', 'dead_letter', 5],
		]);
		expect(found.stuck.map((json) => json.key)).toEqual(['evt:stuck']);
	});
});

describe('workflows/dead-letters.json', () => {
	beforeEach(async () => await seed());

	const nodeRun = async (node, overrides = {}) => {
		const result = await runWorkflow(
			{
				name: 'dead letters',
				nodes: [{ ...node, disabled: false, parameters: { ...node.parameters, ...overrides } }],
				connections: {},
				settings: deadLettersTemplate.settings,
			},
			[{ json: {} }],
			{ credentials: db.credential() },
		);
		return { result, items: result.output(node.name)?.map((item) => item.json) };
	};
	const named = (name) => deadLettersTemplate.nodes.find((node) => node.name === name);

	test('Find Dead Letters hands the alert one item per dead letter; Retry and Drop, once given keys, act on them only', async () => {
		const found = await nodeRun(named('Find Dead Letters'));
		expect(found.items.map((json) => [json.key, json.status])).toEqual([
			['evt:dl_old', 'dead_letter'],
			['evt:dl_new', 'dead_letter'],
		]);
		// As shipped, Keys is empty: enabled and run without setting it, n8n refuses to start.
		await expect(nodeRun(named('Retry Dead Letters'))).rejects.toThrow(
			/Parameter "Keys" is required/,
		);
		expect((await rowOf('evt:dl_old')).status).toBe('dead_letter');

		const retried = await nodeRun(named('Retry Dead Letters'), { keys: 'evt:dl_old\nevt:stuck' });
		expect(retried.items).toEqual([
			{ key: 'evt:dl_old', retried: true },
			{ key: 'evt:stuck', retried: false, reason: 'not_dead_letter', status: 'in_progress' },
		]);
		const dropped = await nodeRun(named('Drop Dead Letters'), { keys: 'evt:dl_new' });
		expect(dropped.items).toEqual([{ key: 'evt:dl_new', dropped: true }]);
		expect(await rowOf('evt:dl_new')).toBeUndefined();
	});
});
