// Any JSON is recorded losslessly, and one size cap holds for every record (through n8n's engine on a
// real PostgreSQL). jsonb refuses the text JSON.stringify gives for a NUL or a lone surrogate: before
// the fix such a step output made Record Step's write fail after its side effect, the key stayed in
// flight, and every retry ran the side effect again. Now a step whose output holds them is recorded,
// a retry carries that output on exactly, and its side effect runs once across every delivery.
const { describe, test, expect, beforeEach } = require('@jest/globals');
const { useTestDatabase } = require('../support/database');
const { PACKAGE, registerTestNode, runWorkflow } = require('../support/engine');
const { webhookItem } = require('../support/webhookItems');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');
const completeWorkflow = require('../fixtures/complete.workflow.json');

const db = useTestDatabase(async (database) => {
	await database.query(`CREATE TABLE api_calls (id bigserial PRIMARY KEY, event text NOT NULL)`);
	await database.query(`CREATE TABLE business_log (
		id bigserial PRIMARY KEY, event_key text NOT NULL, created_at timestamptz NOT NULL DEFAULT now()
	)`);
});
const credentials = () => db.credential({ maxConnections: 4 });

/** What a hostile API echoes: NUL and lone surrogates in values and in keys, beside ordinary text. */
const hostile = (event) => ({
	event,
	name: 'a\u0000b',
	lone: '\ud800',
	low: 'x\udc00y',
	'key\u0000with nul': 1,
	'\udbff': ['\u0000', { nested: 'z\ud800z', pair: '🚀' }],
	$idempotencyJson: 'a user field named like the wrapper',
});
const honest = (event) => ({ event, name: 'plain', amount: 12.5 });

/** Events whose API answers with hostile text; the others answer plainly. */
const hostileEvents = new Set();
/** Events whose later step fails (once per entry). */
const failLater = [];
/** Events whose API answers with a `padding` field of this many bytes beside the honest answer. */
const paddedEvents = new Map();

beforeEach(() => {
	hostileEvents.clear();
	failLater.length = 0;
	paddedEvents.clear();
});

// The side effect: each call is a business row (the counter), its output the API's answer.
registerTestNode(
	'hostileApi',
	async function () {
		const items = this.getInputData();
		const out = [];
		for (let item = 0; item < items.length; item++) {
			const event = String(this.getNodeParameter('event', item));
			await db.query('INSERT INTO api_calls (event) VALUES ($1)', [event]);
			const padding = paddedEvents.get(event);
			out.push({
				json: hostileEvents.has(event)
					? hostile(event)
					: padding === undefined
						? honest(event)
						: { ...honest(event), padding: 'x'.repeat(padding) },
				pairedItem: { item },
			});
		}
		return [out];
	},
	[{ displayName: 'Event', name: 'event', type: 'string', default: '' }],
);

// A later step that fails when told to, as an HTTP call that timed out (error output → Release Key).
registerTestNode(
	'laterStep',
	async function () {
		const items = this.getInputData();
		return [
			items.map((input, item) => {
				const event = String(this.getNodeParameter('event', item));
				const failing = failLater.indexOf(event);
				if (failing < 0) return { json: { ...input.json, later: 'done' }, pairedItem: { item } };
				failLater.splice(failing, 1);
				return { json: { error: `timeout for ${event}` }, pairedItem: { item } };
			}),
		];
	},
	[{ displayName: 'Event', name: 'event', type: 'string', default: '' }],
);

const credential = { idempotencyPostgresApi: { id: '1', name: 'Idempotency Postgres' } };
const table = { schema: 'public', table: 'processed_events' };
const KEY = "={{ $('Idempotency Reserve').item.json.idempotency.key }}";
const EVENT = "={{ $('Idempotency Reserve').item.json.body.id }}";
const reserveNode = {
	...reserveWorkflow.nodes[0],
	parameters: { ...reserveWorkflow.nodes[0].parameters, mode: 'lease', leaseSeconds: 60 },
};
const node = (name, type, parameters, extra = {}) => ({
	name,
	type,
	typeVersion: 1,
	position: [0, 0],
	parameters,
	...extra,
});
const keyNode = (name, type, parameters = {}, extra = {}) =>
	node(
		name,
		`${PACKAGE}.${type}`,
		{ key: KEY, ...table, ...parameters },
		{
			credentials: credential,
			...extra,
		},
	);
const to = (...names) => [names.map((name) => ({ node: name, type: 'main', index: 0 }))];
const branches = (...outputs) =>
	outputs.map((name) => (name ? [{ node: name, type: 'main', index: 0 }] : []));

/**
 * Reserve → Skip If Done "call api" → (run) Hostile API → Record Step → Later Step → Complete Key,
 * `done` into Record Step; Later Step's error output (and Record Step's, when it continues) → Release Key.
 */
/** @param {{ maxOutputBytes?: number }} [options] */
function apiWorkflow({ maxOutputBytes } = {}) {
	return {
		name: 'storable records',
		nodes: [
			reserveNode,
			keyNode('Skip If Done', 'idempotencyStep', { operation: 'skipIfDone', step: 'call api' }),
			node('Hostile API', 'test.hostileApi', { event: EVENT }),
			keyNode(
				'Record Step',
				'idempotencyStep',
				{ operation: 'record', step: 'call api', ...(maxOutputBytes ? { maxOutputBytes } : {}) },
				maxOutputBytes ? { onError: 'continueErrorOutput' } : {},
			),
			node('Later Step', 'test.laterStep', { event: EVENT }, { onError: 'continueErrorOutput' }),
			keyNode('Complete Key', 'idempotencyComplete'),
			keyNode('Release Key', 'idempotencyRelease'),
		],
		connections: {
			'Idempotency Reserve': { main: to('Skip If Done') },
			'Skip If Done': { main: branches('Hostile API', 'Record Step') },
			'Hostile API': { main: to('Record Step') },
			'Record Step': { main: branches('Later Step', 'Release Key') },
			'Later Step': { main: branches('Complete Key', 'Release Key') },
		},
		settings: { executionOrder: 'v1' },
	};
}

const deliver = async (ids, workflow = apiWorkflow()) =>
	await runWorkflow(
		workflow,
		ids.map((id) => webhookItem({ body: { id } })),
		{ credentials: credentials() },
	);

const apiCalls = async (event) =>
	(await db.query('SELECT count(*)::int AS n FROM api_calls WHERE event = $1', [event])).rows[0].n;
const keyRow = async (key) =>
	(
		await db.query(
			'SELECT status, attempts, steps, response FROM processed_events WHERE key = $1',
			[key],
		)
	).rows[0];
const withoutBookkeeping = ({ idempotency, later, ...json }) => json;

describe('a step whose output PostgreSQL could not store as it is', () => {
	test('is recorded; every retry carries it on exactly and the API is called once in 3 deliveries', async () => {
		hostileEvents.add('evt_h');
		failLater.push('evt_h', 'evt_h');

		const first = await deliver(['evt_h']);
		expect(first.error).toBeUndefined();
		expect(first.output('Record Step')[0].json.idempotency.step.status).toBe('recorded');
		expect(first.allOutputs('Release Key')[0].json.idempotency).toMatchObject({
			released: true,
			stepsKept: true,
		});
		const recorded = await keyRow('evt:evt_h');
		expect(recorded.status).toBe('in_progress');
		expect(recorded.steps['call api']).toBeDefined();

		for (const [delivery, later] of [
			[2, 'fails'],
			[3, 'succeeds'],
		]) {
			const retry = await deliver(['evt_h']);
			expect(retry.error).toBeUndefined();
			expect(retry.output('Idempotency Reserve', 0)[0].json.idempotency.attempt).toBe(delivery);
			expect(retry.output('Skip If Done', 0)).toHaveLength(0);
			const [done] = retry.output('Skip If Done', 1);
			// Deep-equal, NUL and lone surrogates intact, in values and in keys.
			expect(withoutBookkeeping(done.json)).toStrictEqual(hostile('evt_h'));
			expect(done.json.name).toBe('a\u0000b');
			expect(done.json['\udbff'][1].nested).toBe('z\ud800z');
			expect(retry.ran('Hostile API')).toBe(false);
			if (later === 'succeeds')
				expect(retry.output('Complete Key')[0].json.idempotency.completed).toBe(true);
		}
		expect(await apiCalls('evt_h')).toBe(1);
		expect((await keyRow('evt:evt_h')).status).toBe('completed');
	});

	test('in a batch, the hostile event and its honest neighbours are all recorded and resumed', async () => {
		hostileEvents.add('evt_b2');
		failLater.push('evt_b1', 'evt_b2', 'evt_b3');
		const first = await deliver(['evt_b1', 'evt_b2', 'evt_b3']);
		expect(first.error).toBeUndefined();
		expect(first.output('Record Step').map((item) => item.json.idempotency.step.status)).toEqual([
			'recorded',
			'recorded',
			'recorded',
		]);
		for (const event of ['evt_b1', 'evt_b2', 'evt_b3'])
			expect(Object.keys((await keyRow(`evt:${event}`)).steps)).toEqual(['call api']);

		const retry = await deliver(['evt_b1', 'evt_b2', 'evt_b3']);
		const done = retry.output('Skip If Done', 1).map((item) => withoutBookkeeping(item.json));
		expect(done).toStrictEqual([honest('evt_b1'), hostile('evt_b2'), honest('evt_b3')]);
		expect(retry.output('Complete Key')).toHaveLength(3);
		for (const event of ['evt_b1', 'evt_b2', 'evt_b3']) expect(await apiCalls(event)).toBe(1);
	});

	test('an event over Max Output Size fails alone; the batch around it is recorded', async () => {
		hostileEvents.add('evt_c2');
		// The honest answers are ~60 bytes stored, the hostile one (wrapped) ~250.
		const result = await deliver(
			['evt_c1', 'evt_c2', 'evt_c3'],
			apiWorkflow({ maxOutputBytes: 150 }),
		);
		expect(result.error).toBeUndefined();
		const [failed] = result.output('Record Step', 1);
		expect(failed.json.error).toMatch(
			/Step "call api" produced \d+ bytes of output, over the limit of 150 bytes to record/,
		);
		expect(failed.pairedItem).toEqual({ item: 1 });
		expect((await keyRow('evt:evt_c2'))?.steps ?? null).toBeNull();
		for (const event of ['evt_c1', 'evt_c3'])
			expect(Object.keys((await keyRow(`evt:${event}`)).steps)).toEqual(['call api']);
		expect(result.output('Complete Key')).toHaveLength(2);
	});
});

describe('Max Output Size cannot raise the 256 KiB cap on every record (docs/steps.md)', () => {
	const CAP = 256 * 1024;
	const KiB = 1024;

	test('the parameter says so: at most the cap, which is also its default', () => {
		const { description } = require('../../dist/nodes/IdempotencyStep/actions/record.operation');
		const { MAX_RECORD_BYTES } = require('../../dist/nodes/shared/store/recordSize');
		expect(MAX_RECORD_BYTES).toBe(CAP);
		const maxOutput = description.find((property) => property.name === 'maxOutputBytes');
		expect([maxOutput.default, maxOutput.typeOptions]).toEqual([
			CAP,
			{ minValue: 0, maxValue: CAP },
		]);
	});

	test('a saved 10 MB counts as 256 KiB: a 1 MiB output fails alone, naming the cap, without offering to raise the setting; 200 KiB beside it is recorded', async () => {
		paddedEvents.set('evt_cap_big', 1024 * KiB);
		paddedEvents.set('evt_cap_fits', 200 * KiB);
		const result = await deliver(
			['evt_cap_small', 'evt_cap_big', 'evt_cap_fits'],
			apiWorkflow({ maxOutputBytes: 10_000_000 }),
		);
		expect(result.error).toBeUndefined();
		const [failed, ...others] = result.output('Record Step', 1);
		expect(others).toEqual([]);
		expect(failed.pairedItem).toEqual({ item: 1 });
		expect(failed.json.error).toMatch(
			new RegExp(
				`^Step "call api" produced \\d+ bytes of output, over the cap of ${CAP} bytes on what a key keeps per record$`,
			),
		);
		expect(failed.json.message).toMatch(
			/cannot raise the cap \(a Max Output Size of 10000000 counts as 262144\)/,
		);
		expect(failed.json.message).not.toMatch(/Raise Max Output Size/i);
		// Nothing of it was recorded, and Record Step's error output released the key: a retry runs again.
		expect(await keyRow('evt:evt_cap_big')).toBeUndefined();
		for (const event of ['evt_cap_small', 'evt_cap_fits'])
			expect(Object.keys((await keyRow(`evt:${event}`)).steps)).toEqual(['call api']);
		const { rows } = await db.query(
			`SELECT octet_length(steps::text) AS bytes FROM processed_events WHERE key = 'evt:evt_cap_fits'`,
		);
		expect(rows[0].bytes).toBeGreaterThan(200 * KiB);
		expect(result.output('Complete Key')).toHaveLength(2);
	});

	test('with Stop Workflow (the default On Error), the same output stops the execution with a NodeOperationError naming the item and the cap', async () => {
		paddedEvents.set('evt_cap_stop', 1024 * KiB);
		const workflow = apiWorkflow({ maxOutputBytes: 10_000_000 });
		workflow.nodes = workflow.nodes.map((candidate) =>
			candidate.name === 'Record Step' ? { ...candidate, onError: undefined } : candidate,
		);
		const result = await deliver(['evt_cap_ok', 'evt_cap_stop'], workflow);
		const error = result.nodeError('Record Step');
		expect(error.name).toBe('NodeOperationError');
		expect(error.message).toMatch(/over the cap of 262144 bytes on what a key keeps per record/);
		expect(error.description).toMatch(/Max Output Size cannot raise the cap/);
		expect(error.description).not.toMatch(/Raise Max Output Size/i);
		expect(error.context.itemIndex).toBe(1);
		expect((await keyRow('evt:evt_cap_stop'))?.steps ?? null).toBeNull();
	});

	test('exactly at the cap the hint no longer offers to raise the setting; below it, it does, up to the cap', async () => {
		paddedEvents.set('evt_at_cap', 300 * KiB);
		paddedEvents.set('evt_below_cap', 2 * KiB);
		const atCap = await deliver(['evt_at_cap'], apiWorkflow({ maxOutputBytes: CAP }));
		const [capped] = atCap.output('Record Step', 1);
		expect(capped.json.error).toMatch(/over the cap of 262144 bytes/);
		expect(capped.json.message).toMatch(/^Record less: .*Max Output Size cannot raise the cap\.$/);
		const below = await deliver(['evt_below_cap'], apiWorkflow({ maxOutputBytes: KiB }));
		const [limited] = below.output('Record Step', 1);
		expect(limited.json.error).toMatch(/over the limit of 1024 bytes to record/);
		expect(limited.json.message).toMatch(/^Raise Max Output Size \(at most 262144 bytes/);
	});
});

describe('a stored answer with NUL and lone surrogates', () => {
	test('in its headers and body is stored and replayed exactly to a duplicate', async () => {
		const reserve = async () =>
			await runWorkflow(reserveWorkflow, [webhookItem({ body: { id: 'evt_answer' } })], {
				credentials: credentials(),
				nodeOverrides: {
					'Idempotency Reserve': { parameters: { mode: 'lease', leaseSeconds: 60 } },
				},
			});
		const reserved = (await reserve()).output('Idempotency Reserve', 0)[0].json.idempotency;
		const body = '{"note":"a\u0000b"}\ud800 tail \udc00';
		const done = await runWorkflow(completeWorkflow, [{ json: { idempotency: reserved } }], {
			credentials: credentials(),
			nodeOverrides: {
				'Complete Key': {
					parameters: {
						storeResponse: true,
						responseStatusCode: 201,
						responseHeaders: {
							entries: [
								{ name: 'X-Trace', value: 'id\u0000\ud800' },
								{ name: 'X-Odd\udc00', value: 'v' },
							],
						},
						responseBody: body,
					},
				},
			},
		});
		expect(done.error).toBeUndefined();
		const expected = {
			statusCode: 201,
			headers: { 'x-trace': 'id\u0000\ud800', 'x-odd\udc00': 'v' },
			body,
		};
		expect(done.output('Complete Key')[0].json.idempotency.response).toStrictEqual(expected);

		const duplicate = await reserve();
		const [replayed] = duplicate.output('Idempotency Reserve', 1);
		expect(replayed.json.idempotency.response).toStrictEqual(expected);
		// Byte for byte: the same UTF-16 text, NUL and lone surrogates where they were.
		expect(replayed.json.idempotency.response.body).toBe(body);

		const lookUp = await runWorkflow(
			{
				name: 'look up',
				nodes: [
					node(
						'Keys',
						`${PACKAGE}.idempotencyKeys`,
						{ operation: 'lookUp', keys: 'evt:evt_answer', includeResponse: true, ...table },
						{ credentials: credential },
					),
				],
				connections: {},
			},
			[{ json: {} }],
			{ credentials: credentials() },
		);
		expect(lookUp.output('Keys')[0].json.response).toStrictEqual(expected);
	});
});

/**
 * Reserve → Exactly-Once SQL recording step "insert" (error output → Release Key) → Later Step →
 * Complete Key (its error output → Release Key).
 */
function exactlyOnceWorkflow(query, { onError = 'continueErrorOutput' } = {}) {
	return {
		name: 'exactly once, recorded',
		nodes: [
			reserveNode,
			keyNode(
				'Insert',
				'idempotencyExactlyOnce',
				{ query, queryParameters: `={{ [${KEY.slice(3, -3)}, ${EVENT.slice(3, -3)}] }}` },
				onError ? { onError } : {},
			),
			node('Later Step', 'test.laterStep', { event: EVENT }, { onError: 'continueErrorOutput' }),
			keyNode('Complete Key', 'idempotencyComplete'),
			keyNode('Release Key', 'idempotencyRelease'),
		],
		connections: {
			'Idempotency Reserve': { main: to('Insert') },
			Insert: { main: branches('Later Step', 'Release Key') },
			'Later Step': { main: branches('Complete Key', 'Release Key') },
		},
		settings: { executionOrder: 'v1' },
	};
}
const recordInsert = (workflow) => {
	const insert = workflow.nodes.find((candidate) => candidate.name === 'Insert');
	insert.parameters = { ...insert.parameters, finish: 'recordStep', step: 'insert' };
	return workflow;
};
const businessRows = async (key) =>
	(await db.query('SELECT count(*)::int AS n FROM business_log WHERE event_key = $1', [key]))
		.rows[0].n;

describe('Exactly-Once SQL recording its rows as a step', () => {
	test('a returned row with NUL and a lone surrogate is recorded and carried on exactly', async () => {
		// The json type (not jsonb) keeps \u0000 and lone surrogates, and the driver parses them.
		const workflow = recordInsert(
			exactlyOnceWorkflow(`WITH ins AS (INSERT INTO business_log (event_key) VALUES ($1) RETURNING event_key)
SELECT event_key, '{"name":"a\\u0000b","lone":"\\ud800","k\\u0000":1}'::json AS payload FROM ins WHERE $2::text IS NOT NULL`),
		);
		failLater.push('evt_eo');
		const first = await deliver(['evt_eo', 'evt_eo_honest'], workflow);
		expect(first.error).toBeUndefined();
		expect(first.output('Insert', 1).map((item) => item.json.error)).toEqual([]);
		const rows = first.output('Insert').map((item) => withoutBookkeeping(item.json));
		const payload = { name: 'a\u0000b', lone: '\ud800', 'k\u0000': 1 };
		expect(rows).toStrictEqual([
			{ event_key: 'evt:evt_eo', payload },
			{ event_key: 'evt:evt_eo_honest', payload },
		]);
		expect(first.output('Complete Key')).toHaveLength(1);

		const retry = await deliver(['evt_eo'], workflow);
		const [done] = retry.output('Insert');
		expect(done.json.idempotency.step.status).toBe('done');
		expect(withoutBookkeeping(done.json)).toStrictEqual({ event_key: 'evt:evt_eo', payload });
		expect(retry.output('Complete Key')[0].json.idempotency.completed).toBe(true);
		expect(await businessRows('evt:evt_eo')).toBe(1);
		expect(await businessRows('evt:evt_eo_honest')).toBe(1);
	});

	const OVERSIZED = `INSERT INTO business_log (event_key) VALUES ($1)
RETURNING event_key, CASE WHEN $2 = 'evt_big' THEN repeat('x', 300000) ELSE 'small' END AS blob`;

	test('over the record cap: that event is rolled back and fails alone, its neighbours commit', async () => {
		const workflow = recordInsert(exactlyOnceWorkflow(OVERSIZED));
		const result = await deliver(['evt_small1', 'evt_big', 'evt_small2'], workflow);
		expect(result.error).toBeUndefined();
		const [failed] = result.output('Insert', 1);
		expect(failed.pairedItem).toEqual({ item: 1 });
		expect(failed.json.error).toMatch(
			/^Step "insert" returned \d+ bytes of rows to record for key "evt:evt_big", over the cap of 262144 bytes: its statements were rolled back, so nothing of this event was committed and the key is still reserved\. The batch's other events were committed and recorded\./,
		);
		expect(failed.json.error).toBeDefined();
		// Rolled back: no business row; its key was left in progress, then released by the error path.
		expect(await businessRows('evt:evt_big')).toBe(0);
		expect(await keyRow('evt:evt_big')).toBeUndefined();
		expect(result.allOutputs('Release Key')[0].json.idempotency).toMatchObject({
			key: 'evt:evt_big',
			released: true,
		});
		// The honest neighbours ran once, were recorded and completed.
		for (const key of ['evt:evt_small1', 'evt:evt_small2']) {
			expect(await businessRows(key)).toBe(1);
			expect((await keyRow(key)).status).toBe('completed');
		}
		expect(result.output('Complete Key')).toHaveLength(2);

		// A retry runs it again (nothing of it committed) and fails the same way: still no row.
		const retry = await deliver(['evt_big'], workflow);
		expect(retry.output('Insert', 1)).toHaveLength(1);
		expect(await businessRows('evt:evt_big')).toBe(0);
	});

	test('over the cap without continuing on error: nothing of the batch commits, and the error says so', async () => {
		const workflow = recordInsert(exactlyOnceWorkflow(OVERSIZED, { onError: null }));
		const result = await deliver(['evt_small3', 'evt_big'], workflow);
		expect(result.error?.message).toMatch(
			/over the cap of 262144 bytes.*Nothing of this execution was committed: the batch's events share one transaction/,
		);
		expect(await businessRows('evt:evt_small3')).toBe(0);
		expect(await businessRows('evt:evt_big')).toBe(0);
		for (const key of ['evt:evt_small3', 'evt:evt_big']) {
			const row = await keyRow(key);
			expect(row.status).toBe('in_progress');
			expect(row.steps).toBeNull();
		}
	});
});
