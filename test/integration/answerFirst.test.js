// Answer first (issue 53), against a real PostgreSQL and through n8n-core's engine where a node runs:
// Reserve with Answer First stores each new key's delivery (Content-Type, the preset's id headers,
// the named ones; never a credential) within the record cap; the Redrive Trigger's claim
// (KeyStore.claimRedrives, sql/redrive.ts) takes only keys in progress with a stored delivery whose
// lease and backoff ended, fenced (a new owner: the dead execution's Complete Key changes nothing,
// the redriven one completes), never twice under concurrent claims; a key out of attempts becomes a
// dead letter, which Reserve answers as a duplicate saying so and the operator's retry makes due.
// Nothing secret is stored: Graph's clientState, Slack's token, a ?token= query, a signature header
// named in Also Store Headers; and a takeover keeps the first stored delivery.
// The answer-first template's redriven run, on n8n 2.x's and 1.x's engines: Complete Key right
// after the business step completes the trigger's claim, read from the trigger's own output.
const { createHmac } = require('node:crypto');
const { test, expect, describe, beforeAll } = require('@jest/globals');
const { useTestDatabase } = require('../support/database');
const { registerTestNode, runWorkflow, PACKAGE } = require('../support/engine');
const { n8n1Runner, N8N1_MODULES, N8N1_VERSION } = require('../support/n8n1Engine');
const { deliveryItem, webhookItem } = require('../support/webhookItems');
const { signDelivery, signerFor } = require('../support/signDelivery');
const { reserveNode } = require('../support/signatureNodes');
const { useBusinessDatabase } = require('../support/baseNodeStandIns');
require('../support/respondProbe');
require('../support/webhookStandIn');
const answerFirstTemplate = require('../../workflows/answer-first.json');
const {
	redriveItem,
} = require('../../dist/nodes/IdempotencyRedriveTrigger/actions/redrive.trigger');
const { PROVIDERS } = require('../../dist/nodes/shared/webhook/providers');
const { VECTORS } = require('../vectors');
const completeWorkflow = require('../fixtures/complete.workflow.json');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');
const { KeyStore } = require('../../dist/nodes/shared/store/KeyStore');
const { tableRef } = require('../../dist/nodes/shared/store/identifiers');
const { poolFor } = require('../../dist/nodes/shared/transport/poolCache');
const { MAX_RECORD_BYTES } = require('../../dist/nodes/shared/store/recordSize');

const db = useTestDatabase();

const store = () => new KeyStore(poolFor(db.credential()), tableRef('public', 'processed_events'));

async function reserve(items, parameters = {}) {
	return await runWorkflow(reserveWorkflow, items, {
		credentials: db.credential(),
		nodeOverrides: {
			'Idempotency Reserve': {
				parameters: { mode: 'lease', leaseSeconds: 60, answerFirst: true, ...parameters },
			},
		},
	});
}

const deliveryOf = async (key) =>
	(await db.query('SELECT delivery FROM processed_events WHERE key = $1', [key])).rows[0]?.delivery;

/** What a dead execution leaves behind once its lease (and `seconds` more) has run out. */
const expire = async (key, seconds = 3600) =>
	await db.query(
		`UPDATE processed_events SET lease_until = now() - make_interval(secs => $2) WHERE key = $1`,
		[key, seconds],
	);

const claim = async (options = {}) =>
	await store().claimRedrives({
		token: `claim-${Math.random().toString(16).slice(2)}`,
		leaseSeconds: 60,
		maxAttempts: 5,
		limit: 100,
		backoffSeconds: 30,
		workflowId: 'test-workflow',
		...options,
	});

describe('Reserve with Answer First', () => {
	test('stores the delivery with a new key: body, query, Content-Type and the named headers, never a credential', async () => {
		const item = webhookItem({
			body: { id: 'af_stored', amount: 5 },
			headers: {
				'x-github-event': 'push',
				authorization: 'Bearer secret',
				'x-other': 'not kept',
			},
		});
		item.json.query = { source: 'test' };
		const run = await reserve([item], { storedHeaders: 'X-GitHub-Event' });
		const [reserved] = run.output('Idempotency Reserve', 0);
		expect(reserved.json.idempotency).toMatchObject({
			key: 'evt:af_stored',
			isNew: true,
			answerFirst: true,
		});
		expect(await deliveryOf('evt:af_stored')).toEqual({
			v: 1,
			headers: { 'content-type': 'application/json', 'x-github-event': 'push' },
			body: { id: 'af_stored', amount: 5 },
			query: { source: 'test' },
			// The workflow that stored it: only its own Redrive Trigger runs it.
			workflowId: 'test-workflow',
		});
	});

	test('a delivery over the record cap is not stored: answerFirst false, so the workflow answers it last', async () => {
		const body = { id: 'af_large', pad: 'x'.repeat(MAX_RECORD_BYTES) };
		const run = await reserve([webhookItem({ body })]);
		const [reserved] = run.output('Idempotency Reserve', 0);
		expect(reserved.json.idempotency).toMatchObject({ isNew: true, answerFirst: false });
		expect(await deliveryOf('evt:af_large')).toBeNull();
	});

	test('Also Store Headers naming a credential: a clear node error, nothing reserved', async () => {
		const run = await reserve([webhookItem({ body: { id: 'af_refused' } })], {
			storedHeaders: 'x-github-event, Authorization',
		});
		expect(run.error?.message).toMatch(/Also Store Headers names "Authorization"/);
		expect(await deliveryOf('evt:af_refused')).toBeUndefined();
	});
});

describe('the Redrive Trigger claim', () => {
	test('takes a dead execution key after its lease and backoff, fenced: the old owner completes nothing, the new one completes', async () => {
		const run = await reserve([webhookItem({ body: { id: 'af_redrive' } })]);
		const [{ json: first }] = run.output('Idempotency Reserve', 0);
		// Lease ended 10 s ago: within the 30 s backoff, not yet due.
		await expire('evt:af_redrive', 10);
		expect((await claim()).claimed.map(({ key }) => key)).not.toContain('evt:af_redrive');
		await expire('evt:af_redrive', 31);
		const { claimed } = await claim();
		const mine = claimed.find(({ key }) => key === 'evt:af_redrive');
		expect(mine).toMatchObject({
			attempt: 2,
			delivery: { v: 1, body: { id: 'af_redrive' } },
		});
		expect(mine.token).not.toBe(first.idempotency.token);

		// The dead execution's Complete Key, late: its token no longer owns the key.
		const late = await runWorkflow(
			completeWorkflow,
			[{ json: { idempotency: first.idempotency } }],
			{ credentials: db.credential() },
		);
		expect(late.error?.message).toBe(
			'The key "evt:af_redrive" was taken over by another execution (attempt 2) after this execution\'s lease ended',
		);
		// The redriven execution: Key and Reservation left empty take the claim on its item.
		const redriven = await runWorkflow(
			completeWorkflow,
			[{ json: { idempotency: { key: mine.key, token: mine.token, redrive: true } } }],
			{
				credentials: db.credential(),
				nodeOverrides: { 'Complete Key': { parameters: { key: '', reservation: '' } } },
			},
		);
		expect(redriven.error).toBeUndefined();
		expect(redriven.output('Complete Key', 0)[0].json.idempotency).toEqual({
			key: 'evt:af_redrive',
			completed: true,
		});
		const { rows } = await db.query(
			`SELECT status, attempts FROM processed_events WHERE key = 'evt:af_redrive'`,
		);
		expect(rows[0]).toEqual({ status: 'completed', attempts: 2 });
		// Completed: never claimed again.
		expect((await claim()).claimed.map(({ key }) => key)).not.toContain('evt:af_redrive');
	});

	test('keys without a stored delivery, completed keys and running leases are never claimed', async () => {
		await reserve([webhookItem({ body: { id: 'af_no_delivery' } })], { answerFirst: false });
		await expire('evt:af_no_delivery');
		await reserve([webhookItem({ body: { id: 'af_running' } })]);
		const { claimed } = await claim();
		expect(claimed.map(({ key }) => key)).not.toEqual(
			expect.arrayContaining(['evt:af_no_delivery']),
		);
		expect(claimed.map(({ key }) => key)).not.toContain('evt:af_running');
	});

	test('concurrent claims (two n8n mains) never take one key twice', async () => {
		const ids = Array.from({ length: 40 }, (_, i) => `af_race_${i}`);
		await reserve(ids.map((id) => webhookItem({ body: { id } })));
		await db.query(
			`UPDATE processed_events SET lease_until = now() - interval '1 hour' WHERE key LIKE 'evt:af_race_%'`,
		);
		const claims = await Promise.all(Array.from({ length: 6 }, () => claim({ limit: 15 })));
		const taken = claims.flatMap(({ claimed }) =>
			claimed.map(({ key }) => key).filter((key) => key.startsWith('evt:af_race_')),
		);
		expect(new Set(taken).size).toBe(taken.length);
		expect(taken.length).toBe(40);
	});

	test('out of attempts: a dead letter, answered by Reserve as a duplicate that says so; the operator retry makes it due again', async () => {
		await reserve([webhookItem({ body: { id: 'af_dead' } })]);
		for (let attempt = 2; attempt <= 3; attempt++) {
			await expire('evt:af_dead');
			const { claimed } = await claim({ maxAttempts: 3 });
			expect(claimed.find(({ key }) => key === 'evt:af_dead')?.attempt).toBe(attempt);
		}
		await expire('evt:af_dead');
		const { claimed, deadLetters } = await claim({ maxAttempts: 3 });
		expect(claimed.map(({ key }) => key)).not.toContain('evt:af_dead');
		expect(deadLetters).toContainEqual({ key: 'evt:af_dead', attempts: 3 });
		const { rows } = await db.query(
			`SELECT status, owner_token, lease_until FROM processed_events WHERE key = 'evt:af_dead'`,
		);
		expect(rows[0]).toEqual({ status: 'dead_letter', owner_token: null, lease_until: null });

		// The sender's late retry: not new, not in flight; the item says dead_letter.
		const retry = await reserve([webhookItem({ body: { id: 'af_dead' } })]);
		expect(retry.output('Idempotency Reserve', 0)).toEqual([]);
		expect(retry.output('Idempotency Reserve', 1)[0].json.idempotency).toMatchObject({
			key: 'evt:af_dead',
			isNew: false,
			status: 'dead_letter',
		});

		expect(await store().retryDeadLetters(['evt:af_dead', 'evt:af_not_dead'])).toEqual([
			'evt:af_dead',
		]);
		const again = await claim({ maxAttempts: 3 });
		expect(again.claimed.find(({ key }) => key === 'evt:af_dead')).toMatchObject({ attempt: 1 });
	});
});

// A business step whose output is its own result: the redriven item's claim is gone after it.
registerTestNode('businessResult', async function () {
	return [
		this.getInputData().map((_item, index) => ({
			json: { inserted: 1 },
			pairedItem: { item: index },
		})),
	];
});

test("a redriven run: Skip if done adopts the trigger's claim, so Record and Complete Key left empty find it after a step that drops it", async () => {
	await reserve([webhookItem({ body: { id: 'af_adopt' } })]);
	await expire('evt:af_adopt');
	const mine = (await claim()).claimed.find(({ key }) => key === 'evt:af_adopt');
	const owned = (name, parameters) => ({
		id: name,
		name,
		type: name === 'Complete Key' ? `${PACKAGE}.idempotencyComplete` : `${PACKAGE}.idempotencyStep`,
		typeVersion: 1,
		position: [0, 0],
		parameters: { schema: 'public', table: 'processed_events', ...parameters },
		credentials: { idempotencyPostgresApi: { id: '1', name: 'Idempotency Postgres' } },
	});
	const workflow = {
		name: 'redriven run',
		nodes: [
			owned('Skip if done', { operation: 'skipIfDone', step: 'insert' }),
			{
				id: 'b',
				name: 'Business',
				type: 'test.businessResult',
				typeVersion: 1,
				position: [0, 0],
				parameters: {},
			},
			owned('Record', { operation: 'record', step: 'insert' }),
			owned('Complete Key', {}),
		],
		connections: {
			'Skip if done': { main: [[{ node: 'Business', type: 'main', index: 0 }], []] },
			Business: { main: [[{ node: 'Record', type: 'main', index: 0 }]] },
			Record: { main: [[{ node: 'Complete Key', type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
	};
	const item = { json: { body: { id: 'af_adopt' }, idempotency: { ...mine, redrive: true } } };
	const run = await runWorkflow(workflow, [item], { credentials: db.credential() });
	expect(run.error).toBeUndefined();
	expect(run.output('Complete Key', 0)[0].json.idempotency).toEqual({
		key: 'evt:af_adopt',
		completed: true,
	});
	const { rows } = await db.query(
		`SELECT status, steps ? 'insert' AS recorded FROM processed_events WHERE key = 'evt:af_adopt'`,
	);
	expect(rows[0]).toEqual({ status: 'completed', recorded: true });
});

const n8n1 = n8n1Runner();
/** Each n8n line's engine, and the line's number for the test's event ids. @type {Array<[string, typeof runWorkflow | undefined, number]>} */
const LINES = [
	['n8n 2.x', runWorkflow, 2],
	[`n8n ${N8N1_VERSION} (skipped unless installed in ${N8N1_MODULES})`, n8n1, 1],
];

describe.each(LINES)('workflows/answer-first.json, a redriven run, on %s', (_label, run, line) => {
	const maybe = run === undefined ? test.skip : test;
	const runnable = {
		...answerFirstTemplate,
		nodes: answerFirstTemplate.nodes.filter((node) => node.type !== 'n8n-nodes-base.stickyNote'),
	};
	beforeAll(async () => {
		await db.query(
			'CREATE TABLE IF NOT EXISTS business_log (id bigserial PRIMARY KEY, event_key text NOT NULL, event_type text)',
		);
		useBusinessDatabase((text, values) => db.query(text, values));
	});

	maybe(
		"Complete Key completes the trigger's claim after the business step, with no step node between them",
		async () => {
			const id = `af_template_n8n${line}`;
			await reserve([webhookItem({ body: { id, type: 'charge.succeeded' } })]);
			await expire(`evt:${id}`);
			const mine = (await claim()).claimed.find(({ key }) => key === `evt:${id}`);
			const result = await run(runnable, [redriveItem(mine)], {
				credentials: db.credential(),
				credentialsByType: { postgres: {} },
				startNode: 'Redrive Unfinished Keys',
			});
			expect(result.error).toBeUndefined();
			expect(result.output('Complete Key')[0].json.idempotency).toEqual({
				key: `evt:${id}`,
				completed: true,
			});
			const business = await db.query(`SELECT event_type FROM business_log WHERE event_key = $1`, [
				`evt:${id}`,
			]);
			expect(business.rows).toEqual([{ event_type: 'charge.succeeded' }]);
			const { rows } = await db.query(`SELECT status FROM processed_events WHERE key = $1`, [
				`evt:${id}`,
			]);
			expect(rows[0]).toEqual({ status: 'completed' });
		},
	);

	maybe(
		'a run the Redrive Trigger did not start adopts no claim: Complete Key with nothing reserved is an error',
		async () => {
			// A key but no claim, in a run the trigger did not start (its node is upstream, unexecuted).
			const item = {
				json: { body: { type: 'charge.succeeded' }, idempotency: { key: 'evt:af_not' } },
			};
			const result = await run(runnable, [item], {
				credentials: db.credential(),
				credentialsByType: { postgres: {} },
				startNode: 'Business Step (insert business_log)',
			});
			expect(result.ran('Business Step (insert business_log)')).toBe(true);
			expect(result.error?.message).toMatch(/reserved no key/);
			expect(result.nodeError('Complete Key')?.message).toMatch(/reserved no key/);
		},
	);
});

describe('nothing secret stored', () => {
	/** @type {readonly any[]} */
	const TABLE = PROVIDERS;
	const provider = (value) => TABLE.find((entry) => entry.value === value);

	/** Reserve verifying `value` with Answer First, its key from the provider's preset. */
	async function reserveSigned(value, items, secret, parameters = {}) {
		const { node } = reserveNode(value, {
			keySource: value,
			answerFirst: true,
			...parameters,
		});
		const run = await runWorkflow(
			{ name: 'answer first (signed)', nodes: [node], connections: {}, settings: {} },
			items,
			{ credentials: db.credential(), credentialsByType: { webhookSigningSecretApi: { secret } } },
		);
		expect(run.error).toBeUndefined();
		return run.output('Idempotency Reserve', 0).map((item) => item.json.idempotency);
	}

	test('a Microsoft Graph notification is stored without its clientState, the rest as sent', async () => {
		const vector = VECTORS.microsoftGraph;
		const { body, headers } = await vector.genuine();
		const item = deliveryItem(provider('microsoftGraph'), { rawBody: Buffer.from(body), headers });
		const [reserved] = await reserveSigned('microsoftGraph', [item], vector.secret);
		expect(reserved).toMatchObject({ isNew: true, answerFirst: true });
		const stored = await deliveryOf(reserved.key);
		expect(JSON.stringify(stored)).not.toContain(vector.secret);
		const { clientState, ...rest } = JSON.parse(String(body)).value[0];
		expect(clientState).toBe(vector.secret);
		expect(stored.body).toEqual({ value: [rest] });
	});

	/** A Slack event carrying its legacy verification token, signed now, sent with `query`. */
	function slackEvent(signer, eventId, query = {}) {
		const slack = provider('slack');
		const bytes = Buffer.from(
			JSON.stringify({
				token: 'legacyVerificationTok3n',
				team_id: 'T1',
				type: 'event_callback',
				event_id: eventId,
				event: { type: 'message', text: 'hello' },
			}),
		);
		const headers = signDelivery(slack, signer, {
			bytes,
			headers: { 'content-type': 'application/json' },
			nowSeconds: Math.floor(Date.now() / 1000),
		});
		const item = deliveryItem(slack, { rawBody: bytes, headers });
		item.json.query = query;
		return item;
	}

	test('a Slack event is stored without its token, nor a ?token= query', async () => {
		const signer = signerFor(provider('slack').signing);
		const item = slackEvent(signer, 'Ev_af_token', { token: 'querySecret', team: 'T1' });
		const [reserved] = await reserveSigned('slack', [item], signer.secret);
		const stored = await deliveryOf(reserved.key);
		expect(stored.body).toEqual({
			team_id: 'T1',
			type: 'event_callback',
			event_id: 'Ev_af_token',
			event: { type: 'message', text: 'hello' },
		});
		expect(stored.query).toEqual({ team: 'T1' });
		expect(JSON.stringify(stored)).not.toMatch(/legacyVerificationTok3n|querySecret/);
	});

	test('a signed replay that takes the key over keeps the first stored delivery', async () => {
		const signer = signerFor(provider('slack').signing);
		const [first] = await reserveSigned(
			'slack',
			[slackEvent(signer, 'Ev_af_takeover')],
			signer.secret,
		);
		const before = await deliveryOf(first.key);
		await expire(first.key);
		// The same signed event, its unsigned query and a header changed on the way.
		const replay = slackEvent(signer, 'Ev_af_takeover', { injected: 'yes' });
		replay.json.headers['x-slack-retry-num'] = '1';
		const [taken] = await reserveSigned('slack', [replay], signer.secret, {
			storedHeaders: 'X-Slack-Retry-Num',
		});
		expect(taken).toMatchObject({ key: first.key, isNew: true, attempt: 2 });
		expect(await deliveryOf(first.key)).toEqual(before);
	});

	test("Also Store Headers naming any scheme's signature header is refused, whoever verified it", async () => {
		// Verify Webhook Signature before Reserve: Reserve checks nothing itself.
		const unsigned = await reserve([webhookItem({ body: { id: 'af_sig_named' } })], {
			storedHeaders: 'x-github-event, X-Hub-Signature-256',
		});
		expect(unsigned.error?.message).toMatch(/Also Store Headers names "X-Hub-Signature-256"/);
		expect(await deliveryOf('evt:af_sig_named')).toBeUndefined();
	});

	test("Also Store Headers naming Generic HMAC's signature header is refused, in any case", async () => {
		const secret = 'generic-hmac-secret';
		const bytes = Buffer.from(JSON.stringify({ id: 'af_hmac_named' }));
		const check = createHmac('sha256', secret).update(bytes).digest('hex');
		const item = webhookItem({
			body: { id: 'af_hmac_named' },
			rawBody: bytes,
			headers: { 'x-my-check': check },
		});
		const { node } = reserveNode('hmac', {
			signatureHeader: 'X-My-Check',
			answerFirst: true,
			storedHeaders: 'X-MY-CHECK',
		});
		const run = await runWorkflow(
			{ name: 'answer first (hmac)', nodes: [node], connections: {}, settings: {} },
			[item],
			{ credentials: db.credential(), credentialsByType: { webhookSigningSecretApi: { secret } } },
		);
		expect(run.error?.message).toMatch(/Also Store Headers names "X-MY-CHECK"/);
		expect(await deliveryOf('evt:af_hmac_named')).toBeUndefined();
	});
});
