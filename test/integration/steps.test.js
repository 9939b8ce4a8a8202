// Step records (resume, don't redo), through n8n's engine on a real PostgreSQL: a workflow of two
// side effects, each between Idempotency Step's Skip If Done and Record Step. A retry of an event
// runs only the steps it has not done; a recorded step carries what it produced the first time; a
// record is fenced by the reservation's token; records survive Release Key and go with a purge.
const { describe, test, expect, beforeEach } = require('@jest/globals');
const { useTestDatabase } = require('../support/database');
const { PACKAGE, registerTestNode, runWorkflow } = require('../support/engine');
const { registerStepSideEffects } = require('../support/stepSideEffects');
const { webhookItem } = require('../support/webhookItems');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');

const db = useTestDatabase();
const credentials = () => db.credential();

const effects = registerStepSideEffects();
const { calls, failReceiptOnce } = effects;

beforeEach(() => effects.reset());

const credential = { idempotencyPostgresApi: { id: '1', name: 'Idempotency Postgres' } };
const table = { schema: 'public', table: 'processed_events' };
const reserveNode = {
	...reserveWorkflow.nodes[0],
	parameters: { ...reserveWorkflow.nodes[0].parameters, mode: 'lease', leaseSeconds: 60 },
};
/** Key mapped per item (a batch); the template leaves it empty for its one event per execution. */
const KEY = "={{ $('Idempotency Reserve').item.json.idempotency.key }}";
const EVENT = "={{ $('Idempotency Reserve').item.json.body.id }}";

const step = (name, operation, stepName) => ({
	name,
	type: `${PACKAGE}.idempotencyStep`,
	typeVersion: 1,
	position: [0, 0],
	parameters: { operation, step: stepName, key: KEY, ...table },
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
const keyNode = (name, type, parameters = {}) => ({
	name,
	type: `${PACKAGE}.${type}`,
	typeVersion: 1,
	position: [0, 0],
	parameters: { key: KEY, ...table, ...parameters },
	credentials: credential,
});
const to = (...nodes) => [nodes.map((node) => ({ node, type: 'main', index: 0 }))];

/**
 * Webhook → Reserve → Skip If Done "create customer" → (run) Create Customer → Record → Skip If
 * Done "send receipt" → (run) Send Receipt → Record → Complete Key; each `done` goes to its Record,
 * Send Receipt's error output to Release Key. The receipt names the customer through the Record
 * node, which runs whichever way the step went (`customerFrom` changes that for the pitfall test).
 */
/** @typedef {{ name: string, nodes: Array<Record<string, any>>, connections: Record<string, any>, settings?: object }} WorkflowJson */

/** @returns {WorkflowJson} */
function multiStep({ customerFrom = 'Record: create customer' } = {}) {
	return {
		name: 'multi-step',
		nodes: [
			reserveNode,
			step('Skip If Done: create customer', 'skipIfDone', 'create customer'),
			effect('Create Customer', 'test.createCustomer', { event: EVENT }),
			step('Record: create customer', 'record', 'create customer'),
			step('Skip If Done: send receipt', 'skipIfDone', 'send receipt'),
			effect(
				'Send Receipt',
				'test.sendReceipt',
				{ event: EVENT, customer: `={{ $('${customerFrom}').item.json.customerId }}` },
				{ onError: 'continueErrorOutput' },
			),
			step('Record: send receipt', 'record', 'send receipt'),
			keyNode('Complete Key', 'idempotencyComplete'),
			keyNode('Release Key', 'idempotencyRelease'),
		],
		connections: {
			'Idempotency Reserve': { main: to('Skip If Done: create customer') },
			'Skip If Done: create customer': {
				main: [
					[{ node: 'Create Customer', type: 'main', index: 0 }],
					[{ node: 'Record: create customer', type: 'main', index: 0 }],
				],
			},
			'Create Customer': { main: to('Record: create customer') },
			'Record: create customer': { main: to('Skip If Done: send receipt') },
			'Skip If Done: send receipt': {
				main: [
					[{ node: 'Send Receipt', type: 'main', index: 0 }],
					[{ node: 'Record: send receipt', type: 'main', index: 0 }],
				],
			},
			'Send Receipt': {
				main: [
					[{ node: 'Record: send receipt', type: 'main', index: 0 }],
					[{ node: 'Release Key', type: 'main', index: 0 }],
				],
			},
			'Record: send receipt': { main: to('Complete Key') },
		},
		settings: { executionOrder: 'v1' },
	};
}

/**
 * @param {string[]} ids
 * @param {WorkflowJson} [workflow]
 */
const deliver = async (ids, workflow = multiStep()) =>
	await runWorkflow(
		workflow,
		ids.map((id) => webhookItem({ body: { id, type: 'checkout.session.completed' } })),
		{ credentials: credentials() },
	);

const row = async (key) =>
	(await db.query(`SELECT status, attempts, steps FROM processed_events WHERE key = $1`, [key]))
		.rows[0];

describe('a retry resumes instead of redoing', () => {
	test('the second step fails: the retry skips the first, carrying its output, and runs the second', async () => {
		failReceiptOnce.add('evt_a');
		const first = await deliver(['evt_a']);
		expect(first.allOutputs('Release Key')[0].json.idempotency).toMatchObject({
			key: 'evt:evt_a',
			released: true,
			stepsKept: true,
		});
		expect(first.ran('Complete Key')).toBe(false);
		// Released with a step recorded: the row stays, in progress, its lease ended now.
		const released = await row('evt:evt_a');
		expect(released.status).toBe('in_progress');
		expect(Object.keys(released.steps)).toEqual(['create customer']);
		expect(released.steps['create customer'].items).toEqual([{ customerId: 'cus_evt_a_1' }]);

		const retry = await deliver(['evt_a']);
		expect(retry.output('Idempotency Reserve', 0)[0].json.idempotency).toMatchObject({
			isNew: true,
			attempt: 2,
		});
		expect(retry.output('Skip If Done: create customer', 0)).toHaveLength(0);
		const done = retry.output('Skip If Done: create customer', 1);
		expect(done).toHaveLength(1);
		expect(done[0].json).toMatchObject({
			customerId: 'cus_evt_a_1',
			idempotency: { key: 'evt:evt_a', step: { name: 'create customer', status: 'done' } },
		});
		expect(retry.ran('Create Customer')).toBe(false);
		expect(retry.output('Complete Key')[0].json.idempotency).toMatchObject({ completed: true });

		// Create Customer ran once in all; Send Receipt twice (one failure, one success), for the
		// customer the first execution created.
		expect(calls.customer).toEqual([{ event: 'evt_a', customer: '' }]);
		expect(calls.receipt).toEqual([
			{ event: 'evt_a', customer: 'cus_evt_a_1' },
			{ event: 'evt_a', customer: 'cus_evt_a_1' },
		]);
		const completed = await row('evt:evt_a');
		expect(completed.status).toBe('completed');
		expect(Object.keys(completed.steps).sort()).toEqual(['create customer', 'send receipt']);

		// A duplicate after completion runs nothing.
		const duplicate = await deliver(['evt_a']);
		expect(duplicate.output('Idempotency Reserve', 1)).toHaveLength(1);
		expect(calls.customer).toHaveLength(1);
		expect(calls.receipt).toHaveLength(2);
	});

	test('without step records (a release deletes the key), the retry runs the first step again', async () => {
		// The same workflow with both Idempotency Step pairs taken out: today's template with two steps.
		const plain = multiStep();
		const withoutSteps = {
			...plain,
			nodes: plain.nodes.filter((node) => !node.type.endsWith('idempotencyStep')),
			connections: {
				'Idempotency Reserve': { main: to('Create Customer') },
				'Create Customer': { main: to('Send Receipt') },
				'Send Receipt': {
					main: [
						[{ node: 'Complete Key', type: 'main', index: 0 }],
						[{ node: 'Release Key', type: 'main', index: 0 }],
					],
				},
			},
		};
		withoutSteps.nodes = withoutSteps.nodes.map((node) =>
			node.name === 'Send Receipt'
				? { ...node, parameters: { event: EVENT, customer: '={{ $json.customerId }}' } }
				: node,
		);
		failReceiptOnce.add('evt_plain');
		await deliver(['evt_plain'], withoutSteps);
		expect(await row('evt:evt_plain')).toBeUndefined();
		await deliver(['evt_plain'], withoutSteps);
		expect(calls.customer.map((call) => call.event)).toEqual(['evt_plain', 'evt_plain']);
	});

	test('a batch whose events are at different steps: each runs only what it has not done', async () => {
		failReceiptOnce.add('evt_b1');
		await deliver(['evt_b1']);
		calls.customer.length = 0;
		calls.receipt.length = 0;

		const batch = await deliver(['evt_b1', 'evt_b2', 'evt_b3']);
		expect(
			batch.output('Skip If Done: create customer', 1).map((item) => item.json.customerId),
		).toEqual(['cus_evt_b1_1']);
		expect(calls.customer.map((call) => call.event).sort()).toEqual(['evt_b2', 'evt_b3']);
		expect(calls.receipt.map((call) => call.event).sort()).toEqual(['evt_b1', 'evt_b2', 'evt_b3']);
		// evt_b1's receipt names the customer its first execution created.
		expect(calls.receipt.find((call) => call.event === 'evt_b1').customer).toBe('cus_evt_b1_1');
		for (const id of ['evt_b1', 'evt_b2', 'evt_b3']) {
			const state = await row(`evt:${id}`);
			expect(state.status).toBe('completed');
			expect(Object.keys(state.steps).sort()).toEqual(['create customer', 'send receipt']);
		}
	});
});

describe('a record is fenced by the reservation', () => {
	test('an execution whose lease was taken over mid-step cannot record, and runs nothing more', async () => {
		effects.duringCustomer = async (event) => {
			// The lease ends while the step runs, and the sender's retry (another execution) takes it over.
			await db.query(
				`UPDATE processed_events SET lease_until = now() - interval '1 second' WHERE key = $1`,
				[`evt:${event}`],
			);
			effects.duringCustomer = async () => undefined;
			const body = { id: event, type: 'checkout.session.completed' };
			const retry = await runWorkflow(reserveWorkflow, [webhookItem({ body })], {
				credentials: credentials(),
				nodeOverrides: {
					'Idempotency Reserve': { parameters: { mode: 'lease', leaseSeconds: 60 } },
				},
			});
			expect(retry.output('Idempotency Reserve', 0)[0].json.idempotency.attempt).toBe(2);
		};
		const late = await deliver(['evt_fenced']);
		expect(late.error?.message).toMatch(
			/evt:evt_fenced" was taken over by another execution \(attempt 2\)/,
		);
		expect(late.error?.description).toMatch(/Step "create customer" ran here but is not recorded/);
		expect(late.ran('Send Receipt')).toBe(false);
		const state = await row('evt:evt_fenced');
		expect(state.attempts).toBe(2);
		expect(state.steps).toBeNull();
	});

	test('Skip If Done refuses an item whose execution no longer holds its key', async () => {
		const first = await runWorkflow(reserveWorkflow, [webhookItem({ body: { id: 'evt_gone' } })], {
			credentials: credentials(),
			nodeOverrides: { 'Idempotency Reserve': { parameters: { mode: 'lease', leaseSeconds: 60 } } },
		});
		const reserved = first.output('Idempotency Reserve', 0);
		await db.query(`DELETE FROM processed_events WHERE key = 'evt:evt_gone'`);
		const check = {
			name: 'check',
			nodes: [
				{
					...step('Skip If Done: create customer', 'skipIfDone', 'create customer'),
					parameters: {
						operation: 'skipIfDone',
						step: 'create customer',
						key: '={{ $json.idempotency.key }}',
						reservation: '={{ $json.idempotency.token }}',
						...table,
					},
				},
			],
			connections: {},
		};
		const result = await runWorkflow(check, reserved, { credentials: credentials() });
		expect(result.error?.message).toMatch(/"evt:evt_gone" is no longer reserved/);
		expect(result.error?.description).toMatch(/did not run here/);
	});
});

describe('records go where the event goes', () => {
	test('a purge deletes them with the key, and the next delivery runs every step', async () => {
		failReceiptOnce.add('evt_purged');
		await deliver(['evt_purged']);
		expect((await row('evt:evt_purged')).steps).not.toBeNull();
		const purge = {
			name: 'purge',
			nodes: [
				{
					...keyNode('Idempotency Keys', 'idempotencyKeys'),
					parameters: {
						operation: 'purge',
						purgeBy: 'keys',
						keys: 'evt:evt_purged',
						dryRun: false,
						includeRunningLeases: true,
						...table,
					},
				},
			],
			connections: {},
		};
		const purged = await runWorkflow(purge, [{ json: {} }], { credentials: credentials() });
		expect(purged.output('Idempotency Keys')[0].json).toMatchObject({ deleted: 1 });
		await deliver(['evt_purged']);
		expect(calls.customer.map((call) => call.event)).toEqual(['evt_purged', 'evt_purged']);
	});

	test("the operators' look-up lists an event's recorded steps", async () => {
		failReceiptOnce.add('evt_look');
		await deliver(['evt_look']);
		const lookUp = {
			name: 'look up',
			nodes: [
				{
					...keyNode('Idempotency Keys', 'idempotencyKeys'),
					parameters: { operation: 'lookUp', lookUpBy: 'keys', keys: 'evt:evt_look', ...table },
				},
			],
			connections: {},
		};
		const found = await runWorkflow(lookUp, [{ json: {} }], { credentials: credentials() });
		const [item] = found.output('Idempotency Keys');
		expect(item.json.steps).toEqual([{ step: 'create customer', recordedAt: expect.any(String) }]);
	});
});

test("n8n's pitfall: in the retry, an expression naming the skipped node fails, and Record Step records nothing of it", async () => {
	failReceiptOnce.add('evt_pitfall');
	const pitfall = multiStep({ customerFrom: 'Create Customer' });
	await deliver(['evt_pitfall'], pitfall);
	const retry = await deliver(['evt_pitfall'], pitfall);
	// Create Customer did not run in the retry, so n8n cannot resolve $('Create Customer').item there.
	expect(retry.ran('Create Customer')).toBe(false);
	expect(retry.nodeError('Send Receipt')?.message).toBe(
		"Node 'Create Customer' hasn't been executed",
	);
	// n8n passes a failed node's input on as its output when On Error continues: Record Step refuses it.
	expect(retry.error?.message).toMatch(
		/Record Step got the item Skip If Done sent to step "send receipt", unchanged/,
	);
	expect(retry.ran('Complete Key')).toBe(false);
	expect(calls.receipt).toHaveLength(1);
	const state = await row('evt:evt_pitfall');
	expect(state.status).toBe('in_progress');
	expect(Object.keys(state.steps)).toEqual(['create customer']);
});

test('Record Step refuses a record larger than Max Output Size, and records none of it', async () => {
	const small = multiStep();
	small.nodes = small.nodes.map((node) =>
		node.name === 'Record: create customer'
			? { ...node, parameters: { ...node.parameters, maxOutputBytes: 10 } }
			: node,
	);
	const result = await deliver(['evt_large'], small);
	expect(result.error?.message).toMatch(
		/Step "create customer" produced \d+ bytes of output, over the limit of 10 bytes/,
	);
	expect((await row('evt:evt_large')).steps).toBeNull();
});

test('Exactly-Once SQL records its step in its own transaction: the retry skips it with the rows it returned', async () => {
	await db.query(
		`CREATE TABLE IF NOT EXISTS orders (id serial PRIMARY KEY, event_key text NOT NULL)`,
	);
	const workflow = multiStep({ customerFrom: 'Insert order' });
	workflow.nodes = [
		...workflow.nodes.filter((node) => !/create customer/i.test(node.name)),
		{
			name: 'Insert order',
			type: `${PACKAGE}.idempotencyExactlyOnce`,
			typeVersion: 1,
			position: [0, 0],
			parameters: {
				query: 'INSERT INTO orders (event_key) VALUES ($1) RETURNING id AS "customerId"',
				queryParameters: KEY,
				finish: 'recordStep',
				step: 'insert order',
				key: KEY,
				...table,
			},
			credentials: credential,
		},
	];
	workflow.connections = {
		...workflow.connections,
		'Idempotency Reserve': { main: to('Insert order') },
		'Insert order': { main: to('Skip If Done: send receipt') },
	};
	delete workflow.connections['Skip If Done: create customer'];
	delete workflow.connections['Create Customer'];
	delete workflow.connections['Record: create customer'];

	failReceiptOnce.add('evt_sql');
	const first = await deliver(['evt_sql'], workflow);
	const [inserted] = first.output('Insert order');
	expect(inserted.json).toMatchObject({
		customerId: expect.any(Number),
		idempotency: { key: 'evt:evt_sql', step: { name: 'insert order', status: 'recorded' } },
	});
	expect((await row('evt:evt_sql')).status).toBe('in_progress');

	const retry = await deliver(['evt_sql'], workflow);
	expect(retry.output('Insert order')[0].json).toMatchObject({
		customerId: inserted.json.customerId,
		idempotency: { step: { name: 'insert order', status: 'done' } },
	});
	expect(retry.output('Complete Key')[0].json.idempotency).toMatchObject({ completed: true });
	const orders = await db.query(`SELECT id FROM orders WHERE event_key = 'evt:evt_sql'`);
	expect(orders.rows).toEqual([{ id: inserted.json.customerId }]);
	expect(calls.receipt.map((call) => call.customer)).toEqual([
		String(inserted.json.customerId),
		String(inserted.json.customerId),
	]);
});

test('an event whose step output holds an error item records none of it, even when Record Step continues on error', async () => {
	registerTestNode('halfFailed', async function () {
		// Two output items for one event: an answer, and n8n's error item for a second call.
		return [
			this.getInputData().flatMap((_item, item) => [
				{ json: { invoiceId: 'inv_1' }, pairedItem: { item } },
				{ json: { error: 'the second call failed' }, pairedItem: { item } },
			]),
		];
	});
	const workflow = {
		name: 'half failed',
		nodes: [
			reserveNode,
			step('Skip If Done: invoice', 'skipIfDone', 'invoice'),
			effect('Create invoices', 'test.halfFailed', {}),
			{ ...step('Record: invoice', 'record', 'invoice'), onError: 'continueRegularOutput' },
		],
		connections: {
			'Idempotency Reserve': { main: to('Skip If Done: invoice') },
			'Skip If Done: invoice': { main: to('Create invoices') },
			'Create invoices': { main: to('Record: invoice') },
		},
	};
	const result = await deliver(['evt_half'], workflow);
	const recorded = result.output('Record: invoice');
	expect(recorded).toHaveLength(2);
	expect(recorded.map((item) => item.json.error)).toEqual([
		'Record Step got an error item for step "invoice": the second call failed',
		'Record Step got an error item for step "invoice": the second call failed',
	]);
	expect((await row('evt:evt_half')).steps).toBeNull();
});
