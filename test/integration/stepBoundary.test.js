// Idempotency Step version 2 (the shape of workflows/multi-step.json), through n8n's engine on a
// real PostgreSQL: Skip If Done before the first side effect, answered from what Reserve's statement
// found; Record Step and Skip Next If Done between two side effects, one statement; Record Step
// after the last. N steps, N + 1 nodes. A retry (after a failure, or a crash and a takeover) runs
// only what is not recorded; a lost lease runs nothing more; version 1 still reads before each step.
const { describe, test, expect, beforeEach } = require('@jest/globals');
const { useTestDatabase } = require('../support/database');
const { PACKAGE, registerTestNode, runWorkflow } = require('../support/engine');
const { registerStepSideEffects } = require('../support/stepSideEffects');
const { webhookItem } = require('../support/webhookItems');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');

const db = useTestDatabase();
const credentials = () => db.credential();

const effects = registerStepSideEffects({
	createCustomer: 'bCreateCustomer',
	sendReceipt: 'bSendReceipt',
});
const { calls, failReceiptOnce } = effects;

beforeEach(() => effects.reset());

/** A node between Reserve and the first step that does what `between` says (a delete, a wait). */
/** @type {() => Promise<void>} */
let between = async () => undefined;
registerTestNode('between', async function () {
	await between();
	return [this.getInputData()];
});

const credential = { idempotencyPostgresApi: { id: '1', name: 'Idempotency Postgres' } };
const table = { schema: 'public', table: 'processed_events' };
// A short lease here stands for one that ended while the execution lived: not kept, as it was
// before Keep the Lease While Running (test/integration/leaseKeeper.test.js covers the kept one).
const reserveNode = (leaseSeconds = 60) => ({
	...reserveWorkflow.nodes[0],
	parameters: {
		...reserveWorkflow.nodes[0].parameters,
		mode: 'lease',
		leaseSeconds,
		keepLease: leaseSeconds >= 60,
	},
});
const EVENT = "={{ $('Idempotency Reserve').item.json.body.id }}";
const to = (...nodes) => ({ main: [nodes.map((node) => ({ node, type: 'main', index: 0 }))] });
const outputs = (...targets) => ({
	main: targets.map((node) => (node ? [{ node, type: 'main', index: 0 }] : [])),
});

/** An Idempotency Step node; Key and Reservation empty: this execution's reservation, as the template. */
const stepNode = (name, parameters, typeVersion = 2) => ({
	name,
	type: `${PACKAGE}.idempotencyStep`,
	typeVersion,
	position: [0, 0],
	parameters: { ...parameters, ...table },
	credentials: credential,
});
const keyNode = (name, type) => ({
	name,
	type: `${PACKAGE}.${type}`,
	typeVersion: 1,
	position: [0, 0],
	parameters: { ...table },
	credentials: credential,
});
const effect = (name, type, parameters, extra = {}) => ({
	name,
	type,
	typeVersion: 1,
	position: [0, 0],
	parameters,
	...extra,
});

const SKIP = 'Skip if done: create customer';
const BOUNDARY = 'Record create customer, then send receipt';
const RECORD = 'Record: send receipt';

/**
 * Reserve → Skip if done "create customer" ─run→ Create Customer → Record "create customer", then
 * "send receipt" ─run→ Send Receipt → Record "send receipt" → Complete Key; each `done` to the node
 * after the step, Send Receipt's error output to Release Key.
 */
/**
 * @param {{ leaseSeconds?: number, withBetween?: boolean, createOnError?: string }} [options]
 * @returns {{ name: string, nodes: Array<Record<string, any>>, connections: Record<string, any>, settings?: object }}
 */
function boundaryWorkflow({ leaseSeconds = 60, withBetween = false, createOnError } = {}) {
	const nodes = [
		reserveNode(leaseSeconds),
		...(withBetween ? [effect('Between', 'test.between', {})] : []),
		stepNode(SKIP, { operation: 'skipIfDone', step: 'create customer' }),
		effect(
			'Create Customer',
			'test.bCreateCustomer',
			{ event: EVENT },
			createOnError ? { onError: createOnError } : {},
		),
		stepNode(BOUNDARY, {
			operation: 'recordAndSkipNext',
			step: 'create customer',
			nextStep: 'send receipt',
		}),
		effect(
			'Send Receipt',
			'test.bSendReceipt',
			{ event: EVENT, customer: '={{ $json.customerId }}' },
			{ onError: 'continueErrorOutput' },
		),
		stepNode(RECORD, { operation: 'record', step: 'send receipt' }),
		keyNode('Complete Key', 'idempotencyComplete'),
		keyNode('Release Key', 'idempotencyRelease'),
	];
	return {
		name: 'step boundaries',
		nodes,
		connections: {
			'Idempotency Reserve': to(withBetween ? 'Between' : SKIP),
			...(withBetween ? { Between: to(SKIP) } : {}),
			[SKIP]: outputs('Create Customer', BOUNDARY),
			'Create Customer': to(BOUNDARY),
			[BOUNDARY]: outputs('Send Receipt', RECORD),
			'Send Receipt': outputs(RECORD, 'Release Key'),
			[RECORD]: to('Complete Key'),
		},
		settings: { executionOrder: 'v1' },
	};
}

/** @param {string[]} ids */
const deliver = async (ids, workflow = boundaryWorkflow()) =>
	await runWorkflow(
		workflow,
		ids.map((id) => webhookItem({ body: { id, type: 'checkout.session.completed' } })),
		{ credentials: credentials() },
	);

const row = async (key) =>
	(
		await db.query(
			`SELECT status, attempts, steps, lease_until <= now() AS lease_ended FROM processed_events WHERE key = $1`,
			[key],
		)
	).rows[0];

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the version 2 shape: N steps, N + 1 nodes', () => {
	test('a new event: run, record and run the next, record, complete; every step recorded once', async () => {
		const first = await deliver(['evt_n1']);
		expect(first.error).toBeUndefined();
		expect(first.output(SKIP, 0)[0].json.idempotency.step).toEqual({
			name: 'create customer',
			status: 'run',
		});
		const [boundaryRun] = first.output(BOUNDARY, 0);
		expect(first.output(BOUNDARY, 1)).toHaveLength(0);
		// The step's output goes on, marked as sent to the next step.
		expect(boundaryRun.json).toMatchObject({
			customerId: 'cus_evt_n1_1',
			idempotency: { step: { name: 'send receipt', status: 'run' } },
		});
		expect(first.output(RECORD)[0].json.idempotency.step).toMatchObject({
			name: 'send receipt',
			status: 'recorded',
		});
		expect(first.output('Complete Key')[0].json.idempotency).toMatchObject({ completed: true });
		expect(calls.receipt).toEqual([{ event: 'evt_n1', customer: 'cus_evt_n1_1' }]);
		const state = await row('evt:evt_n1');
		expect(state.status).toBe('completed');
		expect(state.steps['create customer'].items).toEqual([{ customerId: 'cus_evt_n1_1' }]);
		expect(state.steps['send receipt'].items).toEqual([{ receiptSent: 'evt_n1' }]);
	});

	test('the second step fails: the retry skips the first with its recorded output, and runs the second', async () => {
		failReceiptOnce.add('evt_n2');
		const first = await deliver(['evt_n2']);
		expect(first.allOutputs('Release Key')[0].json.idempotency).toMatchObject({
			released: true,
			stepsKept: true,
		});
		const retry = await deliver(['evt_n2']);
		expect(retry.output('Idempotency Reserve', 0)[0].json.idempotency.attempt).toBe(2);
		expect(retry.output(SKIP, 0)).toHaveLength(0);
		expect(retry.output(SKIP, 1)[0].json).toMatchObject({
			customerId: 'cus_evt_n2_1',
			idempotency: { step: { name: 'create customer', status: 'done' } },
		});
		expect(retry.ran('Create Customer')).toBe(false);
		// Passed on unrecorded; the next step is not recorded: run.
		expect(retry.output(BOUNDARY, 0)[0].json.customerId).toBe('cus_evt_n2_1');
		expect(retry.output('Complete Key')[0].json.idempotency).toMatchObject({ completed: true });
		expect(calls.customer).toHaveLength(1);
		expect(calls.receipt.map((call) => call.customer)).toEqual(['cus_evt_n2_1', 'cus_evt_n2_1']);
	});

	test('a takeover after a crash with both steps recorded runs neither: done, then done', async () => {
		// The first execution dies after both steps were recorded, before Complete Key: its lease ends.
		const crashed = boundaryWorkflow();
		crashed.nodes = crashed.nodes.filter((node) => node.name !== 'Complete Key');
		await deliver(['evt_crash'], crashed);
		await db.query(
			`UPDATE processed_events SET lease_until = now() - interval '1 second' WHERE key = 'evt:evt_crash'`,
		);
		expect(Object.keys((await row('evt:evt_crash')).steps).sort()).toEqual([
			'create customer',
			'send receipt',
		]);

		const retry = await deliver(['evt_crash']);
		expect(retry.output('Idempotency Reserve', 0)[0].json.idempotency.attempt).toBe(2);
		expect(retry.output(SKIP, 1)).toHaveLength(1);
		expect(retry.output(BOUNDARY, 0)).toHaveLength(0);
		expect(retry.output(BOUNDARY, 1)[0].json).toMatchObject({
			receiptSent: 'evt_crash',
			idempotency: { step: { name: 'send receipt', status: 'done' } },
		});
		expect(retry.ran('Create Customer')).toBe(false);
		expect(retry.ran('Send Receipt')).toBe(false);
		expect(retry.output(RECORD)[0].json.receiptSent).toBe('evt_crash');
		expect(retry.output('Complete Key')[0].json.idempotency).toMatchObject({ completed: true });
		expect(calls.customer).toHaveLength(1);
		expect(calls.receipt).toHaveLength(1);
		expect((await row('evt:evt_crash')).status).toBe('completed');
	});

	test('a takeover after a crash mid-way: only the step not recorded runs', async () => {
		// Dies in Send Receipt: n8n's process gone, the first step recorded, the lease running out.
		const crashed = boundaryWorkflow();
		crashed.nodes = crashed.nodes.map((node) =>
			node.name === 'Send Receipt' ? { ...node, onError: 'stopWorkflow' } : node,
		);
		failReceiptOnce.add('evt_mid');
		const first = await deliver(['evt_mid'], crashed);
		expect(first.error?.message).toMatch(/SMTP timeout/);
		expect((await row('evt:evt_mid')).status).toBe('in_progress');
		await db.query(
			`UPDATE processed_events SET lease_until = now() - interval '1 second' WHERE key = 'evt:evt_mid'`,
		);
		const retry = await deliver(['evt_mid']);
		expect(retry.ran('Create Customer')).toBe(false);
		expect(retry.output('Complete Key')[0].json.idempotency).toMatchObject({ completed: true });
		expect(calls.customer).toHaveLength(1);
		expect(calls.receipt.map((call) => call.customer)).toEqual(['cus_evt_mid_1', 'cus_evt_mid_1']);
	});

	test('a batch at different steps: each event runs only what it has not done, one statement per node', async () => {
		failReceiptOnce.add('evt_b1');
		await deliver(['evt_b1']);
		calls.customer.length = 0;
		calls.receipt.length = 0;
		const batch = boundaryWorkflow();
		const KEY = "={{ $('Idempotency Reserve').item.json.idempotency.key }}";
		batch.nodes = batch.nodes.map((node) =>
			node.type.startsWith(PACKAGE) && node.name !== 'Idempotency Reserve'
				? { ...node, parameters: { ...node.parameters, key: KEY } }
				: node,
		);
		const result = await deliver(['evt_b1', 'evt_b2'], batch);
		expect(result.output(SKIP, 1).map((item) => item.json.customerId)).toEqual(['cus_evt_b1_1']);
		expect(calls.customer.map((call) => call.event)).toEqual(['evt_b2']);
		expect(calls.receipt.map((call) => call.event).sort()).toEqual(['evt_b1', 'evt_b2']);
		for (const id of ['evt_b1', 'evt_b2'])
			expect((await row(`evt:${id}`)).status).toBe('completed');
	});

	test("a failure is never recorded as done: the step's node passing its input on is refused at the boundary", async () => {
		// Create Customer fails and, with On Error "continue", n8n passes its input on unchanged.
		effects.duringCustomer = async () => {
			throw new Error('CRM down');
		};
		const result = await deliver(
			['evt_cont'],
			boundaryWorkflow({ createOnError: 'continueRegularOutput' }),
		);
		expect(result.error?.message).toMatch(
			/Record Step got the item Skip If Done sent to step "create customer", unchanged/,
		);
		expect(result.ran('Send Receipt')).toBe(false);
		expect((await row('evt:evt_cont')).steps).toBeNull();
	});

	test('Next Step Name equal to Step Name is refused before anything is recorded', async () => {
		const same = boundaryWorkflow();
		same.nodes = same.nodes.map((node) =>
			node.name === BOUNDARY
				? { ...node, parameters: { ...node.parameters, nextStep: 'create customer' } }
				: node,
		);
		const result = await deliver(['evt_same'], same);
		expect(result.error?.message).toMatch(/Next Step Name is "create customer"/);
		expect((await row('evt:evt_same')).steps).toBeNull();
	});
});

describe('a lost lease runs nothing more', () => {
	test('taken over while the first step ran: the boundary cannot record, and the next step does not run', async () => {
		effects.duringCustomer = async (event) => {
			await db.query(
				`UPDATE processed_events SET lease_until = now() - interval '1 second' WHERE key = $1`,
				[`evt:${event}`],
			);
			effects.duringCustomer = async () => undefined;
			const retry = await runWorkflow(
				reserveWorkflow,
				[webhookItem({ body: { id: event, type: 'checkout.session.completed' } })],
				{
					credentials: credentials(),
					nodeOverrides: {
						'Idempotency Reserve': { parameters: { mode: 'lease', leaseSeconds: 60 } },
					},
				},
			);
			expect(retry.output('Idempotency Reserve', 0)[0].json.idempotency.attempt).toBe(2);
		};
		const late = await deliver(['evt_taken']);
		expect(late.error?.message).toMatch(/"evt:evt_taken" was taken over by another execution/);
		expect(late.error?.description).toMatch(/Step "create customer" ran here but is not recorded/);
		expect(late.ran('Send Receipt')).toBe(false);
		expect((await row('evt:evt_taken')).steps).toBeNull();
	});

	test('the lease ended and another execution took the key before the first step: Skip If Done reads and refuses', async () => {
		// A 2 s lease: what Reserve found is used at most until 1 s before its end, so here it reads.
		between = async () => {
			await sleep(2_100);
			const retry = await runWorkflow(
				reserveWorkflow,
				[webhookItem({ body: { id: 'evt_short', type: 'checkout.session.completed' } })],
				{
					credentials: credentials(),
					nodeOverrides: {
						'Idempotency Reserve': { parameters: { mode: 'lease', leaseSeconds: 60 } },
					},
				},
			);
			expect(retry.output('Idempotency Reserve', 0)[0].json.idempotency.attempt).toBe(2);
		};
		try {
			const late = await deliver(
				['evt_short'],
				boundaryWorkflow({ leaseSeconds: 2, withBetween: true }),
			);
			expect(late.error?.message).toMatch(/"evt:evt_short" was taken over by another execution/);
			expect(late.error?.description).toMatch(/Step "create customer" did not run here/);
			expect(late.ran('Create Customer')).toBe(false);
		} finally {
			between = async () => undefined;
		}
	});
});

describe('what Reserve found answers only while it is fresh; version 1 reads every time', () => {
	/** The key deleted by an operator (a purge of running leases) between Reserve and the first step. */
	const deleteKey = (id) => async () => {
		await db.query(`DELETE FROM processed_events WHERE key = $1`, [`evt:${id}`]);
	};
	const withSkipVersion = (workflow, typeVersion) => ({
		...workflow,
		nodes: workflow.nodes.map((node) => (node.name === SKIP ? { ...node, typeVersion } : node)),
	});

	test('version 1 Skip If Done reads the key store: the deleted key is refused at once', async () => {
		between = deleteKey('evt_v1');
		try {
			const result = await deliver(
				['evt_v1'],
				withSkipVersion(boundaryWorkflow({ withBetween: true }), 1),
			);
			expect(result.error?.message).toMatch(/"evt:evt_v1" is no longer reserved/);
			expect(result.ran('Create Customer')).toBe(false);
		} finally {
			between = async () => undefined;
		}
	});

	test('version 2 within 2 s of Reserve runs the step (as a read just before would have), and the boundary refuses to record', async () => {
		between = deleteKey('evt_v2');
		try {
			const result = await deliver(['evt_v2'], boundaryWorkflow({ withBetween: true }));
			expect(calls.customer.map((call) => call.event)).toEqual(['evt_v2']);
			expect(result.error?.message).toMatch(/"evt:evt_v2" is no longer reserved/);
			expect(result.ran('Send Receipt')).toBe(false);
		} finally {
			between = async () => undefined;
		}
	});

	test('version 2 more than 2 s after Reserve reads again, and refuses', async () => {
		between = async () => {
			await sleep(2_100);
			await deleteKey('evt_v2_late')();
		};
		try {
			const result = await deliver(['evt_v2_late'], boundaryWorkflow({ withBetween: true }));
			expect(result.error?.message).toMatch(/"evt:evt_v2_late" is no longer reserved/);
			expect(result.ran('Create Customer')).toBe(false);
		} finally {
			between = async () => undefined;
		}
	});

	test('Complete Key in between forgets what Reserve found: a later Skip If Done reads and refuses', async () => {
		const workflow = boundaryWorkflow();
		workflow.nodes = [...workflow.nodes, { ...keyNode('Complete First', 'idempotencyComplete') }];
		workflow.connections = {
			...workflow.connections,
			'Idempotency Reserve': to('Complete First'),
			'Complete First': to(SKIP),
		};
		const result = await deliver(['evt_completed'], workflow);
		expect(result.output('Complete First')[0].json.idempotency).toMatchObject({ completed: true });
		expect(result.error?.message).toMatch(/evt:evt_completed/);
		expect(result.ran('Create Customer')).toBe(false);
	});
});
