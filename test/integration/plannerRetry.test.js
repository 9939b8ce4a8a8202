// The key planner's "Explain a retry of a multi-step event", in Chromium, against rows the real
// nodes wrote: for each row the page says which steps the next retry skips and which it runs, and
// then the nodes themselves (Reserve, Idempotency Step's Skip If Done) do exactly that.
const { describe, test, expect, beforeAll, afterAll } = require('@jest/globals');
const { useTestDatabase } = require('../support/database');
const { PACKAGE, runWorkflow } = require('../support/engine');
const {
	chromiumAvailable,
	explainDuplicate,
	explainRetry,
	openPlanner,
} = require('../support/planner');
const { webhookItem } = require('../support/webhookItems');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');

const describeInBrowser = chromiumAvailable ? describe : describe.skip;
const db = useTestDatabase();
const table = { schema: 'public', table: 'processed_events' };
const STEPS = ['create customer', 'send receipt'];

const reserve = async (id) => {
	const run = await runWorkflow(reserveWorkflow, [webhookItem({ body: { id } })], {
		credentials: db.credential(),
		nodeOverrides: { 'Idempotency Reserve': { parameters: { mode: 'lease', leaseSeconds: 60 } } },
	});
	return run.output('Idempotency Reserve', 0)[0];
};

/** One Idempotency Step node fed the reserved item, with its key and token mapped from it. */
const stepNode = async (reserved, operation, step) => {
	const workflow = {
		name: `${operation} ${step}`,
		nodes: [
			{
				name: 'Step',
				type: `${PACKAGE}.idempotencyStep`,
				typeVersion: 1,
				position: [0, 0],
				parameters: {
					operation,
					step,
					key: '={{ $json.idempotency.key }}',
					reservation: '={{ $json.idempotency.token }}',
					...table,
				},
				credentials: { idempotencyPostgresApi: { id: '1', name: 'Idempotency Postgres' } },
			},
		],
		connections: {},
	};
	return await runWorkflow(workflow, [reserved], { credentials: db.credential() });
};

describeInBrowser('planner: explain a retry of a multi-step event', () => {
	/** @type {Awaited<ReturnType<typeof openPlanner>>} */
	let browser;
	beforeAll(async () => {
		browser = await openPlanner();
	});
	afterAll(async () => {
		await browser?.close();
	});

	/** The row as the page's own look-up SQL gives it. */
	async function rowOf(key) {
		const { sql } = await explainDuplicate(browser.page, { key });
		const { rows } = await db.query(sql.split('\n')[0], [key]);
		return JSON.stringify(rows);
	}

	const explain = async (row) => await explainRetry(browser.page, { steps: STEPS, row });

	test('a released event with one recorded step: the page says the retry skips it and runs the next, and the nodes do', async () => {
		const reserved = await reserve('evt_retry_plan');
		const recorded = await stepNode(
			{ ...reserved, json: { customerId: 'cus_1', idempotency: reserved.json.idempotency } },
			'record',
			'create customer',
		);
		expect(recorded.error).toBeUndefined();
		// The execution died (or released the key) before the second step: its lease has ended.
		await db.query(
			`UPDATE processed_events SET lease_until = now() - interval '1 second' WHERE key = $1`,
			['evt:evt_retry_plan'],
		);

		const shown = await explain(await rowOf('evt:evt_retry_plan'));
		expect(shown.verdict).toBe(
			'resumes: the retry takes the event over, skips 1 recorded step and runs the rest',
		);
		expect(shown.plan).toEqual([
			expect.stringMatching(/^create customer: skipped \(recorded .*its output is reused/),
			expect.stringMatching(
				/^send receipt: runs \(not recorded: runs; if the execution before died/,
			),
		]);
		expect(shown.warnings).toBe('');

		// The retry, through the nodes: taken over, the first step done, the second to run.
		const retry = await reserve('evt_retry_plan');
		expect(retry.json.idempotency.attempt).toBe(2);
		const first = await stepNode(retry, 'skipIfDone', 'create customer');
		expect(first.output('Step', 1).map((item) => item.json.customerId)).toEqual(['cus_1']);
		const second = await stepNode(retry, 'skipIfDone', 'send receipt');
		expect(second.output('Step', 0)).toHaveLength(1);
	});

	test('in flight, completed, no row: the page and the nodes agree', async () => {
		const running = await reserve('evt_retry_running');
		await stepNode(
			{ ...running, json: { customerId: 'cus_2', idempotency: running.json.idempotency } },
			'record',
			'create customer',
		);
		const inFlight = await explain(await rowOf('evt:evt_retry_running'));
		expect(inFlight.verdict).toMatch(
			/^in flight: an execution holds the event until .* is answered 409/,
		);
		expect(
			(
				await runWorkflow(reserveWorkflow, [webhookItem({ body: { id: 'evt_retry_running' } })], {
					credentials: db.credential(),
					nodeOverrides: { 'Idempotency Reserve': { parameters: { mode: 'lease' } } },
				})
			).output('Idempotency Reserve', 1)[0].json.idempotency.status,
		).toBe('in_progress');

		await db.query(
			`UPDATE processed_events SET status = 'completed', completed_at = now(), lease_until = NULL WHERE key = $1`,
			['evt:evt_retry_running'],
		);
		const completed = await explain(await rowOf('evt:evt_retry_running'));
		expect(completed.verdict).toMatch(/^duplicate: the event is completed/);

		const missing = await explain(await rowOf('evt:evt_retry_never'));
		expect(missing.verdict).toMatch(/^runs every step/);
		expect(missing.plan).toEqual([
			'create customer: runs (nothing recorded)',
			'send receipt: runs (nothing recorded)',
		]);
	});

	test('a recorded step missing from the list is pointed out (a renamed step runs again)', async () => {
		const reserved = await reserve('evt_retry_renamed');
		await stepNode(
			{ ...reserved, json: { id: 1, idempotency: reserved.json.idempotency } },
			'record',
			'create CRM customer',
		);
		const shown = await explain(await rowOf('evt:evt_retry_renamed'));
		expect(shown.warnings).toContain('"create CRM customer" that is not in the list');
	});
});
