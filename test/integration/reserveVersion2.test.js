// Idempotency Reserve version 2 through n8n-core's WorkflowExecute: outputs named for what happened
// (new, duplicate, in flight, invalid signature), the signature checked before anything is
// reserved, and the outputs n8n draws (its `outputs` expression) equal to the ones the node routes to.
const { describe, test, expect } = require('@jest/globals');
const { NodeHelpers, Workflow } = require('n8n-workflow');
const { useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { PROVIDERS } = require('../support/providerVectors');
const { webhookItem } = require('../support/webhookItems');
const completeWorkflow = require('../fixtures/complete.workflow.json');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');
const {
	IdempotencyReserve,
} = require('../../dist/nodes/IdempotencyReserve/IdempotencyReserve.node.js');

const db = useTestDatabase();

const NODE = 'Idempotency Reserve';
const SECRET = PROVIDERS.stripe.secret;
const LEASE = { new: 0, duplicate: 1, inFlight: 2, invalidSignature: 3 };
const SIMPLE = { new: 0, duplicate: 1, invalidSignature: 2 };

/** The node at version 2 with these parameters, and the signing credential when it verifies. */
function version2(parameters = {}, extra = {}) {
	return {
		[NODE]: {
			typeVersion: 2,
			parameters: { mode: 'lease', leaseSeconds: 60, ...parameters },
			credentials: {
				idempotencyPostgresApi: { id: '1', name: 'Idempotency Postgres' },
				...(parameters.signature && parameters.signature !== 'none'
					? { webhookSigningSecretApi: { id: '2', name: 'Webhook Signing Secret' } }
					: {}),
			},
			...extra,
		},
	};
}

/**
 * @param {object[]} items
 * @param {Record<string, unknown>} parameters Reserve's, over lease mode with 60 s
 * @param {{ credentials?: object, onError?: string }} [options]
 */
async function reserve(items, parameters, { credentials = db.credential(), onError } = {}) {
	return await runWorkflow(reserveWorkflow, items, {
		credentials,
		credentialsByType: { webhookSigningSecretApi: { secret: SECRET } },
		nodeOverrides: version2(parameters, onError ? { onError } : {}),
	});
}

async function signed(body, { secret = SECRET } = {}) {
	const raw = JSON.stringify(body);
	return webhookItem({ body, rawBody: raw, headers: await PROVIDERS.stripe.sign(raw, { secret }) });
}

const keysOf = (run, output) =>
	run.output(NODE, output).map((item) => [item.pairedItem.item, item.json.idempotency?.key]);

async function rowCount(key) {
	const { rows } = await db.query(
		'SELECT count(*)::int AS n FROM processed_events WHERE key = $1',
		[key],
	);
	return rows[0].n;
}

describe('the outputs n8n draws are the ones the node routes to', () => {
	const { description } = new IdempotencyReserve();
	const drawn = (typeVersion, parameters) => {
		/** @type {import('n8n-workflow').INode} */
		const node = {
			id: 'n1',
			name: NODE,
			type: 'n8n-nodes-idempotency.idempotencyReserve',
			typeVersion,
			position: [0, 0],
			parameters,
		};
		// Only what Workflow asks of its node types for one node: this node's description.
		const nodeTypes = /** @type {import('n8n-workflow').INodeTypes} */ (
			/** @type {unknown} */ ({
				getByName: () => ({ description }),
				getByNameAndVersion: () => ({ description }),
				getKnownTypes: () => ({}),
			})
		);
		const workflow = new Workflow({
			nodes: [node],
			connections: {},
			active: false,
			nodeTypes,
		});
		return NodeHelpers.getNodeOutputs(workflow, workflow.getNode(NODE), description).map(
			(output) => (typeof output === 'string' ? output : output.displayName),
		);
	};

	test.each([
		[1, {}, ['true', 'false']],
		[1, { mode: 'simple' }, ['true', 'false']],
		[2, {}, ['new', 'duplicate', 'in flight']],
		[2, { mode: 'simple' }, ['new', 'duplicate']],
		[2, { signature: 'stripe' }, ['new', 'duplicate', 'in flight', 'invalid signature']],
		[2, { mode: 'simple', signature: 'github' }, ['new', 'duplicate', 'invalid signature']],
		[2, { onMismatch: 'output' }, ['new', 'duplicate', 'in flight', 'reused key']],
		[2, { onMismatch: 'output', fingerprint: 'none' }, ['new', 'duplicate', 'in flight']],
		// Simple mode records no fingerprint unless asked: nothing can mismatch.
		[2, { mode: 'simple', onMismatch: 'output' }, ['new', 'duplicate']],
		[
			2,
			{ mode: 'simple', fingerprint: 'rawBody', onMismatch: 'output', signature: 'stripe' },
			['new', 'duplicate', 'reused key', 'invalid signature'],
		],
		[1, { onMismatch: 'output' }, ['true', 'false']],
	])('version %s with %j: %j', (typeVersion, parameters, names) => {
		expect(drawn(typeVersion, parameters)).toEqual(names);
	});
});

describe('lease mode', () => {
	test('new, then in flight while the first execution runs, then duplicate once it completed', async () => {
		const item = webhookItem({ body: { id: 'v2_lease' } });
		const first = await reserve([item], {});
		expect(first.outputCount(NODE)).toBe(3);
		expect(keysOf(first, LEASE.new)).toEqual([[0, 'evt:v2_lease']]);

		const meanwhile = await reserve([item], {});
		expect(keysOf(meanwhile, LEASE.inFlight)).toEqual([[0, 'evt:v2_lease']]);
		expect(meanwhile.output(NODE, LEASE.duplicate)).toEqual([]);
		const inFlight = meanwhile.output(NODE, LEASE.inFlight)[0].json.idempotency;
		expect(inFlight).toMatchObject({ isNew: false, status: 'in_progress' });
		expect(inFlight.retryAfterSeconds).toBeGreaterThan(0);

		const completed = await runWorkflow(completeWorkflow, first.output(NODE, LEASE.new), {
			credentials: db.credential(),
		});
		expect(completed.error).toBeUndefined();
		const after = await reserve([item], {});
		expect(keysOf(after, LEASE.duplicate)).toEqual([[0, 'evt:v2_lease']]);
		expect(after.output(NODE, LEASE.inFlight)).toEqual([]);
		expect(after.output(NODE, LEASE.duplicate)[0].json.idempotency.status).toBe('completed');
	});

	test('a second item of the same key in one execution is in flight (its first item holds it)', async () => {
		const item = webhookItem({ body: { id: 'v2_same_batch' } });
		const run = await reserve([item, item], {});
		expect(keysOf(run, LEASE.new)).toEqual([[0, 'evt:v2_same_batch']]);
		expect(keysOf(run, LEASE.inFlight)).toEqual([[1, 'evt:v2_same_batch']]);
	});

	test('another payload under a key still in progress is a duplicate flagged as a mismatch, not in flight', async () => {
		await reserve([webhookItem({ body: { id: 'v2_mismatch', amount: 1 } })], {});
		const other = await reserve([webhookItem({ body: { id: 'v2_mismatch', amount: 2 } })], {});
		expect(other.output(NODE, LEASE.inFlight)).toEqual([]);
		const [duplicate] = other.output(NODE, LEASE.duplicate);
		expect(duplicate.json.idempotency).toMatchObject({ status: 'in_progress', mismatch: true });
	});
});

describe('On Mismatch → Send to Reused Key Output', () => {
	const REUSED = { new: 0, duplicate: 1, inFlight: 2, reusedKey: 3 };

	test('another payload under a key goes to reused key, in flight or completed; the same payload does not', async () => {
		const parameters = { onMismatch: 'output' };
		const first = webhookItem({ body: { id: 'v2_reused', amount: 1 } });
		const other = webhookItem({ body: { id: 'v2_reused', amount: 2 } });
		const reserved = await reserve([first], parameters);
		expect(reserved.outputCount(NODE)).toBe(4);

		const meanwhile = await reserve([first, other], parameters);
		expect(keysOf(meanwhile, REUSED.inFlight)).toEqual([[0, 'evt:v2_reused']]);
		expect(keysOf(meanwhile, REUSED.reusedKey)).toEqual([[1, 'evt:v2_reused']]);
		expect(meanwhile.output(NODE, REUSED.reusedKey)[0].json.idempotency).toMatchObject({
			isNew: false,
			status: 'in_progress',
			mismatch: true,
		});

		const completed = await runWorkflow(completeWorkflow, reserved.output(NODE, REUSED.new), {
			credentials: db.credential(),
		});
		expect(completed.error).toBeUndefined();
		const after = await reserve([other, first], parameters);
		expect(keysOf(after, REUSED.reusedKey)).toEqual([[0, 'evt:v2_reused']]);
		expect(keysOf(after, REUSED.duplicate)).toEqual([[1, 'evt:v2_reused']]);
		expect(after.output(NODE, REUSED.reusedKey)[0].json.idempotency).toMatchObject({
			status: 'completed',
			mismatch: true,
		});
		expect(await rowCount('evt:v2_reused')).toBe(1);
	});

	test('simple mode with a fingerprint: the second payload of a key in one batch is a reused key', async () => {
		const parameters = { mode: 'simple', fingerprint: 'rawBody', onMismatch: 'output' };
		const run = await reserve(
			[
				webhookItem({ body: { id: 'v2_reused_simple', amount: 1 } }),
				webhookItem({ body: { id: 'v2_reused_simple', amount: 2 } }),
				webhookItem({ body: { id: 'v2_reused_simple', amount: 1 } }),
			],
			parameters,
		);
		expect(run.outputCount(NODE)).toBe(3);
		expect(keysOf(run, 0)).toEqual([[0, 'evt:v2_reused_simple']]);
		expect(keysOf(run, 1)).toEqual([[2, 'evt:v2_reused_simple']]);
		expect(keysOf(run, 2)).toEqual([[1, 'evt:v2_reused_simple']]);
	});
});

test('simple mode has no in-flight output: a repeat is a duplicate', async () => {
	const item = webhookItem({ body: { id: 'v2_simple' } });
	expect(keysOf(await reserve([item], { mode: 'simple' }), SIMPLE.new)).toEqual([
		[0, 'evt:v2_simple'],
	]);
	const repeat = await reserve([item], { mode: 'simple' });
	expect(repeat.outputCount(NODE)).toBe(2);
	expect(keysOf(repeat, SIMPLE.duplicate)).toEqual([[0, 'evt:v2_simple']]);
});

describe('the signature is checked before anything is reserved', () => {
	test('forged, unsigned and stale deliveries go to invalid signature and reserve nothing; the genuine one is new', async () => {
		const genuine = await signed({ id: 'v2_sig' });
		const forged = await signed({ id: 'v2_sig' }, { secret: PROVIDERS.stripe.otherSecret });
		const unsigned = webhookItem({ body: { id: 'v2_sig_unsigned' } });
		const run = await reserve([forged, unsigned], { signature: 'stripe' });
		expect(run.outputCount(NODE)).toBe(4);
		expect(
			run
				.output(NODE, LEASE.invalidSignature)
				.map((item) => [item.pairedItem.item, item.json.signature, item.json.idempotency]),
		).toEqual([
			[0, { valid: false, provider: 'stripe', reason: 'mismatch' }, undefined],
			[1, { valid: false, provider: 'stripe', reason: 'missing_header' }, undefined],
		]);
		expect(await rowCount('evt:v2_sig')).toBe(0);
		expect(await rowCount('evt:v2_sig_unsigned')).toBe(0);

		const real = await reserve([genuine], { signature: 'stripe' });
		expect(keysOf(real, LEASE.new)).toEqual([[0, 'evt:v2_sig']]);
		expect(real.output(NODE, LEASE.invalidSignature)).toEqual([]);
		// The exact bytes go on for the business step.
		expect(real.output(NODE, LEASE.new)[0].binary.data.data).toBe(genuine.binary.data.data);
	});

	test('a batch: valid items are reserved and routed with their own pairedItem, invalid ones kept apart', async () => {
		const items = [
			await signed({ id: 'v2_batch_1' }),
			await signed({ id: 'v2_batch_2' }, { secret: PROVIDERS.stripe.otherSecret }),
			await signed({ id: 'v2_batch_3' }),
		];
		const run = await reserve(items, { signature: 'stripe' });
		expect(keysOf(run, LEASE.new)).toEqual([
			[0, 'evt:v2_batch_1'],
			[2, 'evt:v2_batch_3'],
		]);
		expect(run.output(NODE, LEASE.invalidSignature).map((item) => item.pairedItem.item)).toEqual([
			1,
		]);
		expect(await rowCount('evt:v2_batch_2')).toBe(0);
	});

	test('with every signature invalid the key store is not asked: a dead database still answers invalid', async () => {
		const dead = { ...db.credential(), host: '127.0.0.1', port: 1 };
		const run = await reserve(
			[webhookItem({ body: { id: 'v2_dead' } })],
			{ signature: 'stripe' },
			{
				credentials: dead,
			},
		);
		expect(run.error).toBeUndefined();
		expect(run.output(NODE, LEASE.invalidSignature)).toHaveLength(1);
	});

	test('a valid delivery while the database is down fails the node; nothing goes to new', async () => {
		const dead = { ...db.credential(), host: '127.0.0.1', port: 1 };
		const run = await reserve(
			[await signed({ id: 'v2_dead_valid' })],
			{ signature: 'stripe' },
			{
				credentials: dead,
			},
		);
		expect(run.status).toBe('error');
		expect(run.nodeError(NODE).message).toMatch(/127\.0\.0\.1:1/);
	});

	test('continue using error output: an item without raw body is an error, a database failure fails only the valid items', async () => {
		const noRawBody = webhookItem({ body: { id: 'v2_noraw' }, withRawBody: false });
		const forged = await signed({ id: 'v2_eo_forged' }, { secret: PROVIDERS.stripe.otherSecret });
		const valid = await signed({ id: 'v2_eo_valid' });
		const run = await reserve(
			[noRawBody, forged, valid],
			{ signature: 'stripe' },
			{
				onError: 'continueErrorOutput',
				credentials: { ...db.credential(), host: '127.0.0.1', port: 1 },
			},
		);
		expect(run.outputCount(NODE)).toBe(5);
		expect(run.output(NODE, LEASE.new)).toEqual([]);
		expect(run.output(NODE, LEASE.invalidSignature).map((item) => item.pairedItem.item)).toEqual([
			1,
		]);
		const errors = run.output(NODE, 4);
		expect(errors.map((item) => item.pairedItem.item).sort()).toEqual([0, 2]);
		expect(errors.find((item) => item.pairedItem.item === 0).json.error).toMatch(/no raw body/);
	});
});
