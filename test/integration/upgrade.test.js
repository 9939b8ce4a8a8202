// The operator who upgrades (docs/operations.md, "Upgrading the package"): a key table and saved
// workflows made by an earlier version, keys in flight, then today's nodes. Two starting points,
// each in test/fixtures/upgrade/<date>/ as that commit left them (its DDL and the rows its
// statements wrote, copied as they ran; its workflows/*.json copied as saved):
// - 2026-12-02, the package's first commit (e6f0a7c, templates 0cc9cab): the two-column table
//   (key, first_seen), Reserve version 1 in simple mode, the Release and Purge templates;
// - 2026-12-03, the last commit before fingerprints and stored answers (8dddd72): the lease
//   columns, Verify Webhook Signature, Reserve version 1 in lease mode, Complete Key, Exactly-Once SQL.
// Through n8n-core's WorkflowExecute, today's nodes run the saved workflows as they are (their node
// versions and parameters kept; n8n's own nodes by stand-ins of the same type), then today's
// template on the same table: no key is lost, no event runs its business step twice, every saved
// workflow still runs and answers as it did, and the table gains the columns today's nodes need.
const { describe, test, expect, beforeAll } = require('@jest/globals');
const { readFileSync } = require('node:fs');
const path = require('node:path');
const { useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { PROVIDERS } = require('../support/providerVectors');
const { takeAnswers } = require('../support/respondProbe');
const { useBusinessDatabase } = require('../support/baseNodeStandIns');
const { webhookItem } = require('../support/webhookItems');
require('../support/webhookStandIn');
const todaysTemplate = require('../../workflows/idempotent-webhook.json');

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'upgrade');
const SECRET = PROVIDERS.stripe.secret;
const BUSINESS_TABLE = `CREATE TABLE IF NOT EXISTS business_log (
  id bigserial PRIMARY KEY, event_key text NOT NULL, event_type text,
  created_at timestamptz NOT NULL DEFAULT now())`;

/** @param {string} release @param {string} file */
const fixture = (release, file) => readFileSync(path.join(FIXTURES, release, file), 'utf8');
/** A saved workflow as n8n runs it: sticky notes do not run. @param {string} release @param {string} file */
function savedWorkflow(release, file) {
	const workflow = JSON.parse(fixture(release, file));
	return {
		...workflow,
		nodes: workflow.nodes.filter(
			(/** @type {any} */ node) => node.type !== 'n8n-nodes-base.stickyNote',
		),
	};
}

/** A Stripe delivery of event `id`, signed as Stripe signs (a resend is signed anew). */
async function delivery(id) {
	const body = { id, type: 'charge.succeeded' };
	const raw = JSON.stringify(body);
	return webhookItem({
		body,
		rawBody: raw,
		headers: await PROVIDERS.stripe.sign(raw, { secret: SECRET }),
	});
}

/**
 * One release's starting point: its table, the keys its statements left, and helpers.
 * @param {string} release
 */
function startingPoint(release) {
	const db = useTestDatabase(async (database) => {
		await database.query(fixture(release, 'table.sql'));
		await database.query(fixture(release, 'keys.sql'));
		await database.query(BUSINESS_TABLE);
	});
	beforeAll(() => useBusinessDatabase((text, values) => db.query(text, values)));

	/** Runs a workflow with one delivery of event `id`; returns the run and the answer sent. */
	async function deliver(/** @type {any} */ workflow, /** @type {string} */ id) {
		takeAnswers();
		const run = await runWorkflow(workflow, [await delivery(id)], {
			credentials: db.credential(),
			credentialsByType: { webhookSigningSecretApi: { secret: SECRET }, postgres: {} },
		});
		expect(run.error).toBeUndefined();
		const answers = [
			...takeAnswers(),
			...run.webhookResponses.map((response) => ({ node: 'Reserve', ...response })),
		];
		return { run, answers };
	}
	const keys = async () =>
		(await db.query('SELECT key FROM processed_events ORDER BY key')).rows.map((row) => row.key);
	const businessRows = async (/** @type {string} */ key) =>
		(await db.query('SELECT count(*)::int AS n FROM business_log WHERE event_key = $1', [key]))
			.rows[0].n;
	const row = async (/** @type {string} */ key) =>
		(await db.query('SELECT * FROM processed_events WHERE key = $1', [key])).rows[0];
	const columns = async () =>
		(
			await db.query(
				"SELECT column_name FROM information_schema.columns WHERE table_name = 'processed_events' ORDER BY ordinal_position",
			)
		).rows.map((column) => column.column_name);
	return { db, deliver, keys, businessRows, row, columns };
}

/** What an answer says: its node, status code and body's status. @param {any[]} answers */
const said = (answers) =>
	answers.map((answer) => [answer.node, answer.statusCode, JSON.parse(answer.body ?? '{}').status]);

describe('from the first commit (2026-12-02): the two-column table, Reserve version 1 in simple mode', () => {
	const start = startingPoint('2026-12-02');
	const before = ['evt:evt_answered', 'evt:evt_old', 'evt:evt_running'];
	/**
	 * The saved workflow with the one change docs/operations.md asks for before the upgrade: its
	 * Reserve version 1 saved no Mode (there was none: it reserved at most once), and version 1's
	 * Mode now defaults to lease, so the operator sets Simple (At Most Once), what it did then.
	 */
	const asBefore = () => {
		const saved = savedWorkflow('2026-12-02', 'idempotent-webhook.json');
		const reserve = saved.nodes.find(
			(/** @type {any} */ node) => node.name === 'Idempotency Reserve',
		);
		expect(reserve.typeVersion).toBe(1);
		expect(reserve.parameters.mode).toBeUndefined();
		reserve.parameters.mode = 'simple';
		return saved;
	};

	test("the saved webhook workflow, Mode set to Simple, runs on today's nodes: its keys stay duplicates, a new event runs once", async () => {
		const saved = asBefore();
		for (const id of ['evt_answered', 'evt_running']) {
			const { answers } = await start.deliver(saved, id);
			expect(said(answers)).toEqual([['Respond 200 duplicate', 200, 'duplicate']]);
			expect(await start.businessRows(`evt:${id}`)).toBe(0);
		}
		const first = await start.deliver(saved, 'evt_after');
		expect(said(first.answers)).toEqual([['Respond 200', 200, 'processed']]);
		const again = await start.deliver(saved, 'evt_after');
		expect(said(again.answers)).toEqual([['Respond 200 duplicate', 200, 'duplicate']]);
		expect(await start.businessRows('evt:evt_after')).toBe(1);
		// Simple mode needs no new column: the table is left as that commit made it.
		expect(await start.columns()).toEqual(['key', 'first_seen']);
		expect(await start.keys()).toEqual([...before, 'evt:evt_after'].sort());
	});

	test('left as saved, it runs in lease mode without a Complete Key: its key stays in progress after the answer (why the Mode step)', async () => {
		const saved = savedWorkflow('2026-12-02', 'idempotent-webhook.json');
		const { answers } = await start.deliver(saved, 'evt_unchanged');
		expect(said(answers)).toEqual([['Respond 200', 200, 'processed']]);
		// Lease mode waits for a Complete Key the workflow does not have: once the lease ends, the
		// sender's next retry would take the event over and run its business step again.
		expect(await start.row('evt:evt_unchanged')).toMatchObject({ status: 'in_progress' });
		// Today's nodes added the lease columns: the old rows have no status and count as completed.
		expect(await start.columns()).toEqual(
			expect.arrayContaining(['status', 'owner_token', 'lease_until', 'attempts']),
		);
		expect((await start.row('evt:evt_running')).status).toBeNull();
		await start.db.query("DELETE FROM processed_events WHERE key = 'evt:evt_unchanged'");
		await start.db.query("DELETE FROM business_log WHERE event_key = 'evt:evt_unchanged'");
	});

	test("today's template on the same table: every old key a duplicate, a new event runs once", async () => {
		for (const id of ['evt_answered', 'evt_running', 'evt_after']) {
			const { run, answers } = await start.deliver(todaysTemplate, id);
			expect(run.output('Idempotency Reserve', 1).map((item) => item.json.idempotency.key)).toEqual(
				[`evt:${id}`],
			);
			expect(answers.map((answer) => answer.statusCode)).toEqual([200]);
		}
		const fresh = await start.deliver(todaysTemplate, 'evt_today');
		expect(fresh.run.output('Idempotency Reserve', 0)).toHaveLength(1);
		expect(fresh.answers.map((answer) => answer.statusCode)).toEqual([200]);
		expect(
			(await start.deliver(todaysTemplate, 'evt_today')).run.output('Idempotency Reserve', 1),
		).toHaveLength(1);
		for (const [key, rows] of [
			['evt:evt_answered', 0],
			['evt:evt_running', 0],
			['evt:evt_after', 1],
			['evt:evt_today', 1],
		])
			expect([key, await start.businessRows(String(key))]).toEqual([key, rows]);
		expect((await start.row('evt:evt_today')).status).toBe('completed');
		expect(await start.keys()).toEqual([...before, 'evt:evt_after', 'evt:evt_today'].sort());
	});

	test('the saved purge workflow runs: only the key past its 30 days goes', async () => {
		const { run } = await start.deliver(savedWorkflow('2026-12-02', 'purge-keys.json'), 'unused');
		expect(run.output('Purge Keys')[0].json).toMatchObject({ deleted: 1 });
		expect(await start.keys()).toEqual(
			['evt:evt_after', 'evt:evt_answered', 'evt:evt_running', 'evt:evt_today'].sort(),
		);
	});
});

describe('from lease mode (2026-12-03): the lease columns, keys in flight, Verify, Reserve version 1, Complete Key', () => {
	const start = startingPoint('2026-12-03');
	const before = ['evt:evt_done', 'evt:evt_killed', 'evt:evt_running'];

	test('the saved webhook workflow: completed stays duplicate, a running lease answers 409, the killed one runs once', async () => {
		const saved = savedWorkflow('2026-12-03', 'idempotent-webhook.json');
		const done = await start.deliver(saved, 'evt_done');
		expect(said(done.answers)).toEqual([['Respond 200 duplicate', 200, 'duplicate']]);

		const running = await start.deliver(saved, 'evt_running');
		expect(said(running.answers)).toEqual([['Respond 409 in flight', 409, 'in_progress']]);
		// The execution that holds it keeps it: same owner, same lease.
		expect((await start.row('evt:evt_running')).owner_token).toBe('token-running');

		const killed = await start.deliver(saved, 'evt_killed');
		expect(said(killed.answers)).toEqual([['Respond 200', 200, 'processed']]);
		expect(await start.row('evt:evt_killed')).toMatchObject({ status: 'completed', attempts: 2 });
		const resent = await start.deliver(saved, 'evt_killed');
		expect(said(resent.answers)).toEqual([['Respond 200 duplicate', 200, 'duplicate']]);

		const fresh = await start.deliver(saved, 'evt_after');
		expect(said(fresh.answers)).toEqual([['Respond 200', 200, 'processed']]);
		expect(said((await start.deliver(saved, 'evt_after')).answers)).toEqual([
			['Respond 200 duplicate', 200, 'duplicate'],
		]);
		for (const [key, rows] of [
			['evt:evt_done', 0],
			['evt:evt_running', 0],
			['evt:evt_killed', 1],
			['evt:evt_after', 1],
		])
			expect([key, await start.businessRows(String(key))]).toEqual([key, rows]);
		expect(await start.keys()).toEqual([...before, 'evt:evt_after'].sort());
	});

	test("today's template: the running key still in flight, then, its execution gone, run once", async () => {
		const running = await start.deliver(todaysTemplate, 'evt_running');
		expect(
			running.run.output('Idempotency Reserve', 2).map((item) => item.json.idempotency.key),
		).toEqual(['evt:evt_running']);
		expect(running.answers.map((answer) => answer.statusCode)).toEqual([409]);
		// The old n8n stopped for the upgrade: the execution that held it never completes, its lease ends.
		await start.db.query(
			"UPDATE processed_events SET lease_until = now() - interval '1 second' WHERE key = 'evt:evt_running'",
		);
		const takenOver = await start.deliver(todaysTemplate, 'evt_running');
		expect(takenOver.run.output('Idempotency Reserve', 0)).toHaveLength(1);
		expect(await start.row('evt:evt_running')).toMatchObject({ status: 'completed', attempts: 2 });
		for (const id of ['evt_done', 'evt_killed', 'evt_after', 'evt_running']) {
			const { run } = await start.deliver(todaysTemplate, id);
			expect([id, run.output('Idempotency Reserve', 1).length]).toEqual([id, 1]);
		}
		expect(await start.businessRows('evt:evt_running')).toBe(1);
		expect(await start.businessRows('evt:evt_killed')).toBe(1);
		// Today's template added the one column its settings need (Reserve's fingerprint), nullable:
		// the old rows read as before.
		expect(await start.columns()).toEqual([
			'key',
			'first_seen',
			'status',
			'owner_token',
			'lease_until',
			'completed_at',
			'attempts',
			'fingerprint',
		]);
		expect(await start.keys()).toEqual([...before, 'evt:evt_after'].sort());
	});

	test('the saved exactly-once workflow runs: its statement and the completion commit once', async () => {
		const saved = savedWorkflow('2026-12-03', 'exactly-once-postgres.json');
		const first = await start.deliver(saved, 'evt_once');
		expect(said(first.answers)).toEqual([['Respond 200', 200, 'processed']]);
		const again = await start.deliver(saved, 'evt_once');
		expect(said(again.answers)).toEqual([['Respond 200 duplicate', 200, 'duplicate']]);
		expect(await start.businessRows('evt:evt_once')).toBe(1);
		expect((await start.row('evt:evt_once')).status).toBe('completed');
	});

	test('the saved purge workflow runs and deletes nothing younger than 30 days', async () => {
		const { run } = await start.deliver(savedWorkflow('2026-12-03', 'purge-keys.json'), 'unused');
		expect(run.output('Purge Keys')[0].json).toMatchObject({ deleted: 0 });
		expect(await start.keys()).toEqual([...before, 'evt:evt_after', 'evt:evt_once'].sort());
	});
});

test('docs/operations.md says the upgrade in the order this file runs it', () => {
	const doc = readFileSync(path.join(__dirname, '..', '..', 'docs', 'operations.md'), 'utf8');
	const start = doc.indexOf('\n## Upgrading the package\n');
	expect(start).toBeGreaterThan(0);
	const section = doc.slice(start, doc.indexOf('\n## ', start + 1));
	const steps = [...section.matchAll(/^\d+\. \*\*([^*]+)\*\*/gm)].map((match) => match[1]);
	expect(steps).toEqual([
		"Read the CHANGELOG's section for development builds",
		'The table.',
		'Install and restart',
		'Saved workflows keep their node versions',
		'Check',
	]);
	// The one change a saved workflow of the first build needs, as the tests above make it.
	expect(section).toContain('**Mode → Simple (At Most Once)**');
	expect(section).toContain('`test/integration/upgrade.test.js`');
	expect(section).toContain('`test/fixtures/upgrade/`');
});
