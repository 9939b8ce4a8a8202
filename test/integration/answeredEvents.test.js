// No operator action loses an answered event, against a real PostgreSQL through n8n-core's engine.
// A key in progress that holds a stored delivery (Reserve's Answer First) is an event the sender was
// answered 2xx for and will never resend: only the Redrive Trigger runs it. So Release Key (with or
// without the reservation's token), Purge Keys and the Keys node's Purge (by keys, prefix, state,
// age) keep it, saying so, unless Drop Answered Events is on, and then say what they dropped; the
// owner's own release reopens it for the redrive instead of deleting it. The report and Look Up tell
// "waiting for the redrive" (nothing to do) apart from stuck (only a resend or an operator helps).
const { describe, test, expect, beforeEach } = require('@jest/globals');

const { KeyStore } = require('../../dist/nodes/shared/store/KeyStore');
const { tableRef } = require('../../dist/nodes/shared/store/identifiers');
const sql = require('../../dist/nodes/shared/store/sql');
const { poolFor } = require('../../dist/nodes/shared/transport/poolCache');
const { useTestDatabase } = require('../support/database');
const { KEYS_NODE, keysWorkflow } = require('../support/keysWorkflow');
const { runWorkflow } = require('../support/engine');
const { webhookItem } = require('../support/webhookItems');
const purgeWorkflow = require('../fixtures/purge.workflow.json');
const releaseWorkflow = require('../fixtures/release.workflow.json');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');

const db = useTestDatabase();
const TABLE = 'processed_events';
const ref = tableRef('public', TABLE);

async function keys(parameters) {
	const result = await runWorkflow(keysWorkflow(TABLE, parameters), [{ json: {} }], {
		credentials: db.credential(),
	});
	if (result.status !== 'success') throw result.error ?? new Error(`run ${result.status}`);
	return result.output(KEYS_NODE).map((item) => item.json);
}

async function release(idempotency, parameters = {}) {
	const result = await runWorkflow(
		releaseWorkflow,
		[idempotency].flat().map((one) => ({ json: { idempotency: one } })),
		{ credentials: db.credential(), nodeOverrides: { 'Release Key': { parameters } } },
	);
	if (result.status !== 'success') throw result.error ?? new Error(`run ${result.status}`);
	return result.output('Release Key').map((item) => item.json.idempotency);
}

async function purgeKeys(parameters = {}) {
	const result = await runWorkflow(purgeWorkflow, [{ json: {} }], {
		credentials: db.credential(),
		nodeOverrides: { 'Purge Keys': { parameters } },
	});
	if (result.status !== 'success') throw result.error ?? new Error(`run ${result.status}`);
	return result.output('Purge Keys')[0].json;
}

const remaining = async () =>
	(await db.query(`SELECT key FROM ${TABLE} ORDER BY key`)).rows.map((row) => row.key);

const rowOf = async (key) =>
	(
		await db.query(
			`SELECT status, owner_token, lease_until <= now() AS lease_ended, delivery FROM ${TABLE} WHERE key = $1`,
			[key],
		)
	).rows[0];

/**
 * Keys first seen 40 days ago: an answered event waiting for the redrive (lease ended), one whose
 * lease runs (a redrive at work), a stuck key without a stored delivery, a completed key and a dead
 * letter (holding its delivery, but given up on: not in progress).
 */
async function seed() {
	await db.query(`DROP TABLE IF EXISTS ${ref.qualified}`);
	await db.query(sql.createTableSql(ref, { lease: true }));
	await db.query(`ALTER TABLE ${ref.qualified} ADD COLUMN IF NOT EXISTS delivery jsonb`);
	await db.query(
		`INSERT INTO ${ref.qualified} (key, first_seen, status, owner_token, lease_until, completed_at, attempts, delivery) VALUES
		 ('evt:answered', now() - interval '40 days', 'in_progress', 'tok-a', now() - interval '10 minutes', NULL, 1, '{"v":1,"body":{"id":"answered"}}'),
		 ('evt:redriving', now() - interval '40 days', 'in_progress', 'tok-r', now() + interval '5 minutes', NULL, 2, '{"v":1,"body":{"id":"redriving"}}'),
		 ('evt:stuck', now() - interval '40 days', 'in_progress', 'tok-s', now() - interval '10 minutes', NULL, 1, NULL),
		 ('evt:done', now() - interval '40 days', 'completed', 'tok-d', NULL, now() - interval '40 days', 1, NULL),
		 ('evt:dead', now() - interval '40 days', 'dead_letter', NULL, NULL, NULL, 5, '{"v":1,"body":{"id":"dead"}}')`,
	);
}

beforeEach(async () => await seed());

describe('the report and Look Up tell waiting for the redrive apart from stuck', () => {
	test('Report: stuck counts only keys without a stored delivery; waitingForRedrive the answered ones', async () => {
		const [report] = await keys({ operation: 'report' });
		expect(report.counts).toMatchObject({ inProgress: 3, leaseRunning: 1, stuck: 1 });
		expect(report.counts.waitingForRedrive).toBe(1);
		expect(report.stuck.count).toBe(1);
		expect(report.waitingForRedrive).toMatchObject({
			count: 1,
			oldestLeaseEnd: expect.any(String),
			next: expect.stringMatching(/Redrive Trigger/),
		});
		// Purge Keys keeps the answered event: the preview does not count it.
		expect(report.purgePreview).toMatchObject({
			wouldDelete: 3,
			keptLeaseRunning: 1,
			keptAnsweredEvents: 1,
		});
	});

	test('Look Up → Stuck Keys lists only the stuck key; Waiting for Redrive the answered one; a look-up by key labels it', async () => {
		expect((await keys({ operation: 'lookUp', lookUpBy: 'stuck' })).map((j) => j.key)).toEqual([
			'evt:stuck',
		]);
		expect(
			(await keys({ operation: 'lookUp', lookUpBy: 'waitingForRedrive' })).map((j) => j.key),
		).toEqual(['evt:answered']);
		const looked = await keys({
			operation: 'lookUp',
			lookUpBy: 'keys',
			keys: 'evt:answered\nevt:stuck\nevt:redriving\nevt:dead',
		});
		expect(looked.map((j) => [j.key, j.hasDelivery, j.waiting])).toEqual([
			['evt:answered', true, 'redrive'],
			['evt:stuck', false, undefined],
			['evt:redriving', true, undefined],
			['evt:dead', true, undefined],
		]);
	});
});

describe('Release Key', () => {
	test('without a token: refuses the answered event, saying why; Drop Answered Events deletes it and says so', async () => {
		expect(await release({ key: 'evt:answered' })).toEqual([
			{ key: 'evt:answered', released: false, reason: 'answered_event' },
		]);
		expect(await rowOf('evt:answered')).toMatchObject({ status: 'in_progress' });
		// The dead letter and the stuck key are released as before.
		expect(await release([{ key: 'evt:dead' }, { key: 'evt:stuck' }])).toEqual([
			{ key: 'evt:dead', released: true },
			{ key: 'evt:stuck', released: true },
		]);
		expect(await release({ key: 'evt:answered' }, { dropAnsweredEvents: true })).toEqual([
			{ key: 'evt:answered', released: true, droppedAnsweredEvent: true },
		]);
		expect(await rowOf('evt:answered')).toBeUndefined();
	});

	test('a token beside a key without one (the owned-key statement): the tokenless answered event is refused', async () => {
		expect(await release([{ key: 'evt:answered' }, { key: 'evt:stuck', token: 'tok-s' }])).toEqual([
			{ key: 'evt:answered', released: false, reason: 'answered_event' },
			{ key: 'evt:stuck', released: true },
		]);
		expect(await remaining()).toContain('evt:answered');
	});

	test("the owner's release of its answer-first key (business step failed) reopens it, so the Redrive Trigger runs it again", async () => {
		const run = await runWorkflow(reserveWorkflow, [webhookItem({ body: { id: 'af_failed' } })], {
			credentials: db.credential(),
			nodeOverrides: {
				'Idempotency Reserve': {
					parameters: { mode: 'lease', leaseSeconds: 60, answerFirst: true },
				},
			},
		});
		const [{ json: reserved }] = run.output('Idempotency Reserve', 0);
		expect(reserved.idempotency).toMatchObject({ key: 'evt:af_failed', answerFirst: true });
		const { key, token } = reserved.idempotency;

		expect(await release({ key, token })).toEqual([
			{ key, released: true, reopened: true, waiting: 'redrive' },
		]);
		expect(await rowOf(key)).toMatchObject({
			status: 'in_progress',
			lease_ended: true,
			delivery: expect.objectContaining({ body: { id: 'af_failed' } }),
		});
		const store = new KeyStore(poolFor(db.credential()), ref);
		const { claimed } = await store.claimRedrives({
			token: 'claim-after-release',
			leaseSeconds: 60,
			maxAttempts: 5,
			limit: 100,
			backoffSeconds: 0,
			workflowId: 'test-workflow',
		});
		expect(claimed.map((one) => one.key)).toContain(key);
	});

	test('the owner with Drop Answered Events deletes its answered key and says so', async () => {
		await db.query(
			`UPDATE ${TABLE} SET lease_until = now() + interval '1 minute' WHERE key = 'evt:answered'`,
		);
		expect(
			await release({ key: 'evt:answered', token: 'tok-a' }, { dropAnsweredEvents: true }),
		).toEqual([{ key: 'evt:answered', released: true, droppedAnsweredEvent: true }]);
		expect(await rowOf('evt:answered')).toBeUndefined();
	});
});

describe('Purge Keys (by age)', () => {
	test('keeps the answered event and counts it; Drop Answered Events deletes it and counts it', async () => {
		expect(await purgeKeys()).toMatchObject({ deleted: 3, keptAnsweredEvents: 1 });
		expect(await remaining()).toEqual(['evt:answered', 'evt:redriving']);
		expect(await purgeKeys({ dropAnsweredEvents: true })).toMatchObject({
			deleted: 1,
			droppedAnsweredEvents: 1,
			keptAnsweredEvents: 0,
		});
		expect(await remaining()).toEqual(['evt:redriving']);
	});
});

describe("the Keys node's Purge", () => {
	const selections = {
		keys: { purgeBy: 'keys', keys: 'evt:answered\nevt:stuck\nevt:dead' },
		prefix: { purgeBy: 'prefix', keyPrefix: 'evt:' },
		status: { purgeBy: 'age', retentionAmount: 30, statusFilter: 'inProgress' },
		age: { purgeBy: 'age', retentionAmount: 30 },
	};

	test.each(Object.entries(selections))(
		'by %s: keeps the answered event (dry run and purge say so); Drop Answered Events names it',
		async (_by, selection) => {
			const [preview] = await keys({ operation: 'purge', ...selection });
			expect(preview.keys).not.toContain('evt:answered');
			expect(preview).toMatchObject({ keptAnsweredEvents: 1, keptAnsweredKeys: ['evt:answered'] });

			const [purged] = await keys({ operation: 'purge', dryRun: false, ...selection });
			expect(purged.keys).not.toContain('evt:answered');
			expect(purged).toMatchObject({ keptAnsweredEvents: 1, keptAnsweredKeys: ['evt:answered'] });
			expect(await remaining()).toContain('evt:answered');

			const [dropPreview] = await keys({
				operation: 'purge',
				dropAnsweredEvents: true,
				...selection,
			});
			expect(dropPreview).toMatchObject({
				wouldDelete: 1,
				keys: ['evt:answered'],
				wouldDropAnsweredEvents: 1,
			});
			const [dropped] = await keys({
				operation: 'purge',
				dryRun: false,
				dropAnsweredEvents: true,
				...selection,
			});
			expect(dropped).toMatchObject({
				deleted: 1,
				keys: ['evt:answered'],
				droppedAnsweredEvents: 1,
				droppedAnsweredKeys: ['evt:answered'],
			});
			expect(await remaining()).not.toContain('evt:answered');
			// The lease running (a redrive at work) is kept whatever the setting.
			expect(await remaining()).toContain('evt:redriving');
		},
	);

	test('a dead letter is not in progress: Purge deletes it without the setting, as before', async () => {
		const [purged] = await keys({
			operation: 'purge',
			dryRun: false,
			purgeBy: 'age',
			retentionAmount: 30,
			statusFilter: 'deadLetter',
		});
		expect(purged).toMatchObject({ deleted: 1, keys: ['evt:dead'], keptAnsweredEvents: 0 });
	});
});
