// Complete Key and Release Key with Key and Reservation left empty, as in the template: they act on
// what this execution reserved, even after a business step whose output no longer carries
// `idempotency`, and refuse to guess when the execution reserved several keys or none.
const { test, expect } = require('@jest/globals');
const { useTestDatabase } = require('../support/database');
const { PACKAGE, registerTestNode, runWorkflow } = require('../support/engine');
const { webhookItem } = require('../support/webhookItems');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');

const db = useTestDatabase();

/**
 * A one-input, one-output node type of this test; its output items are its own ({ stored: true }).
 * @param {string} name
 * @param {(items: object[]) => Promise<void>} [beforeOutput]
 */
function registerStep(name, beforeOutput = async () => undefined) {
	registerTestNode(name, async function () {
		const items = this.getInputData();
		await beforeOutput(items);
		return [items.map((_item, item) => ({ json: { stored: true }, pairedItem: { item } }))];
	});
}

/** A business step whose output is its own: nothing of the Reserve output is left in the item. */
registerStep('businessStep');

/** While the business step runs, its lease ends and a retry in another execution takes the key over. */
registerStep('leaseLostDuringStep', async (items) => {
	for (const { json } of items) {
		await db.query(
			`UPDATE processed_events SET lease_until = now() - interval '1 second' WHERE key = $1`,
			[json.idempotency.key],
		);
		const retry = await reserveOnly(json.idempotency.key.slice('evt:'.length));
		if (retry.isNew !== true)
			throw new Error(`the retry should have taken the key over: ${JSON.stringify(retry)}`);
	}
});

const node = (name, type, parameters = {}, extra = {}) => ({
	name,
	type,
	typeVersion: 1,
	position: [0, 0],
	parameters,
	credentials: { idempotencyPostgresApi: { id: '1', name: 'Idempotency Postgres' } },
	...extra,
});
const reserveNode = reserveWorkflow.nodes[0];
const withLease = {
	...reserveNode,
	parameters: { ...reserveNode.parameters, mode: 'lease', leaseSeconds: 60 },
};
const table = { schema: 'public', table: 'processed_events' };

/** Reserve → step → Complete Key or Release Key, every Key and Reservation left empty. */
function chain({
	step = 'test.businessStep',
	finish = 'idempotencyComplete',
	finishParameters = table,
} = {}) {
	const finishName = finish === 'idempotencyComplete' ? 'Complete Key' : 'Release Key';
	return {
		name: 'execution reservation',
		nodes: [
			withLease,
			node('Business Step', step),
			node(finishName, `${PACKAGE}.${finish}`, finishParameters),
		],
		connections: {
			'Idempotency Reserve': { main: [[{ node: 'Business Step', type: 'main', index: 0 }], []] },
			'Business Step': { main: [[{ node: finishName, type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
	};
}

async function reserveOnly(id) {
	const run = await runWorkflow(
		{ ...reserveWorkflow, nodes: [withLease] },
		[webhookItem({ body: { id } })],
		{
			credentials: db.credential(),
		},
	);
	const [isNew] = run.output('Idempotency Reserve', 0);
	const [duplicate] = run.output('Idempotency Reserve', 1);
	return (isNew ?? duplicate).json.idempotency;
}

const rowOf = async (key) =>
	(
		await db.query(`SELECT status, owner_token, attempts FROM processed_events WHERE key = $1`, [
			key,
		])
	).rows[0];
const events = (...ids) => ids.map((id) => webhookItem({ body: { id } }));

test('Complete Key left empty completes the key this execution reserved, after a step that dropped it', async () => {
	const run = await runWorkflow(chain(), events('exec_complete'), { credentials: db.credential() });
	expect(run.error).toBeUndefined();
	const reserved = run.output('Idempotency Reserve')[0].json.idempotency;
	expect(run.output('Complete Key')).toEqual([
		{
			json: { stored: true, idempotency: { key: 'evt:exec_complete', completed: true } },
			pairedItem: { item: 0 },
		},
	]);
	expect(await rowOf('evt:exec_complete')).toEqual({
		status: 'completed',
		owner_token: reserved.token,
		attempts: 1,
	});
	expect((await reserveOnly('exec_complete')).status).toBe('completed');
});

test('Release Key left empty frees the key this execution reserved, so the retry runs', async () => {
	const run = await runWorkflow(
		chain({ finish: 'idempotencyRelease', finishParameters: { ...table, createTable: true } }),
		events('exec_release'),
		{
			credentials: db.credential(),
		},
	);
	expect(run.output('Release Key')[0].json.idempotency).toEqual({
		key: 'evt:exec_release',
		released: true,
	});
	expect(await rowOf('evt:exec_release')).toBeUndefined();
	expect(await reserveOnly('exec_release')).toMatchObject({ isNew: true, attempt: 1 });
});

test("the execution's lease is what Complete Key checks: a key taken over meanwhile fails, naming it", async () => {
	const run = await runWorkflow(chain({ step: 'test.leaseLostDuringStep' }), events('exec_taken'), {
		credentials: db.credential(),
	});
	expect(run.error.message).toMatch(
		/"evt:exec_taken" was taken over by another execution \(attempt 2\)/,
	);
	expect(await rowOf('evt:exec_taken')).toMatchObject({ status: 'in_progress', attempts: 2 });
});

test("Release Key left empty does not free a key taken over by another execution: it is not this execution's", async () => {
	const run = await runWorkflow(
		chain({
			step: 'test.leaseLostDuringStep',
			finish: 'idempotencyRelease',
			finishParameters: { ...table, createTable: true },
		}),
		events('exec_release_taken'),
		{ credentials: db.credential() },
	);
	expect(run.output('Release Key')[0].json.idempotency).toEqual({
		key: 'evt:exec_release_taken',
		released: false,
		reason: 'not_owner',
	});
	expect(await rowOf('evt:exec_release_taken')).toMatchObject({
		status: 'in_progress',
		attempts: 2,
	});
});

test('an execution that reserved a batch must say which key each item is: nothing is completed', async () => {
	const run = await runWorkflow(chain(), events('exec_batch_a', 'exec_batch_b'), {
		credentials: db.credential(),
	});
	expect(run.error.message).toMatch(
		/Key is empty and this execution reserved 2 keys in public\.processed_events/,
	);
	expect(run.error.description).toMatch(
		/\$\('Idempotency Reserve'\)\.item\.json\.idempotency\.key/,
	);
	expect((await rowOf('evt:exec_batch_a')).status).toBe('in_progress');
	expect((await rowOf('evt:exec_batch_b')).status).toBe('in_progress');
});

test('the reservation belongs to its table: Complete Key on another table finds nothing reserved there', async () => {
	const run = await runWorkflow(
		chain({ finishParameters: { schema: 'public', table: 'other_events' } }),
		events('exec_other_table'),
		{
			credentials: db.credential(),
		},
	);
	expect(run.error.message).toMatch(
		/this execution reserved no key in public\.other_events to complete/,
	);
	expect((await rowOf('evt:exec_other_table')).status).toBe('in_progress');
});

test('a duplicate reserves nothing: Complete Key after it has no key to complete', async () => {
	await reserveOnly('exec_dup');
	const workflow = chain();
	// Wire the duplicate output into the business step, as a wrong wiring would.
	workflow.connections['Idempotency Reserve'] = {
		main: [[], [{ node: 'Business Step', type: 'main', index: 0 }]],
	};
	const run = await runWorkflow(workflow, events('exec_dup'), { credentials: db.credential() });
	expect(run.error.message).toMatch(/reserved no key in public\.processed_events to complete/);
	expect((await rowOf('evt:exec_dup')).status).toBe('in_progress');
});
