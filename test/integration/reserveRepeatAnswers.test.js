// Reserve 2.3's Answer Repeats (and the invalid signature under Answer Problems), through n8n's
// engine and real PostgreSQL: behind a Webhook, Reserve answers a duplicate, a delivery in flight and
// an invalid signature itself with the very answer the webhook templates' Respond nodes on those
// outputs gave up to 2.2 (test/fixtures/repeatRespondNodes.json; test/support/respondProbe.js runs
// their expressions). Each case runs both ways side by side and compares status, headers and body;
// the item still reaches its output. A stored answer is replayed; the setting off, version 2.2 and a
// run without a Webhook answer nothing.
const { describe, test, expect } = require('@jest/globals');
const { randomUUID } = require('node:crypto');
const { reserveOutputNames } = require('../../dist/nodes/shared/reserveRules/reserveOutputs');
const { useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { PROVIDERS } = require('../support/providerVectors');
const { takeAnswers } = require('../support/respondProbe');
const { webhookItem } = require('../support/webhookItems');
require('../support/webhookStandIn');
const RESPOND_NODES = require('../fixtures/repeatRespondNodes.json');

const db = useTestDatabase();
/** This run's event ids: the tables outlive a run. */
const runId = randomUUID();
const stripe = PROVIDERS.stripe;
const RESERVE = 'Idempotency Reserve';
const WEBHOOK = 'Webhook';
const COMPLETE = 'Complete Key';
const PACKAGE = 'n8n-nodes-idempotency';

const signedLease = {
	mode: 'lease',
	leaseSeconds: 300,
	signature: 'stripe',
	toleranceSeconds: 300,
	keySource: 'eventIdOrBodyHash',
	eventId: '={{ $json.body.id }}',
};
/** One key table per version, so both ways can send the same event id and answer the same bytes. */
const tableOf = (version) => ({
	schema: 'public',
	table: `processed_events_r${String(version).replace('.', '')}`,
	createTable: true,
});
const credentials = {
	idempotencyPostgresApi: { id: '1', name: 'Idempotency Postgres' },
	webhookSigningSecretApi: { id: '2', name: 'Signing secret' },
};

const webhookNode = (responseMode = 'responseNode') => ({
	id: 'webhook',
	name: WEBHOOK,
	type: 'n8n-nodes-base.webhook',
	typeVersion: 2.1,
	position: [0, 0],
	parameters: { responseMode },
});

/** Complete Key after `new` (optionally storing its answer), so a repeat finds the key done. */
const completeNode = (version, extra = {}) => ({
	id: 'complete',
	name: COMPLETE,
	type: `${PACKAGE}.idempotencyComplete`,
	typeVersion: 1,
	position: [400, 0],
	parameters: { key: '', reservation: '', ...tableOf(version), ...extra },
	credentials: { idempotencyPostgresApi: credentials.idempotencyPostgresApi },
});

/**
 * Webhook → Reserve (version, parameters) → `new` to Complete Key when `complete`; with `respond`,
 * the templates' Respond nodes up to 2.2 on duplicate, in flight and invalid signature.
 * @param {{ version: number, parameters: Record<string, unknown>, complete?: Record<string, unknown>,
 *   respond: boolean, responseMode?: string }} shape
 */
function workflowOf({ version, parameters, complete, respond, responseMode }) {
	const names = reserveOutputNames(parameters, version);
	/** @type {Array<Record<string, any>>} */
	const nodes = [
		webhookNode(responseMode),
		{
			id: 'reserve',
			name: RESERVE,
			type: `${PACKAGE}.idempotencyReserve`,
			typeVersion: version,
			position: [200, 0],
			parameters: { ...parameters, ...tableOf(version) },
			credentials,
		},
	];
	const main = names.map(() => []);
	if (complete !== undefined) {
		nodes.push(completeNode(version, complete));
		main[0] = [{ node: COMPLETE, type: 'main', index: 0 }];
	}
	if (respond) {
		/** @type {Array<[string, typeof RESPOND_NODES.duplicate]>} */
		const respondNodes = [
			['duplicate', RESPOND_NODES.duplicate],
			['in flight', RESPOND_NODES.inFlight],
			['invalid signature', RESPOND_NODES.invalidSignature],
		];
		for (const [output, fixture] of respondNodes) {
			const at = names.indexOf(output);
			if (at === -1) continue;
			nodes.push({ ...fixture, id: `respond-${at}`, position: [400, 200 * at] });
			main[at] = [{ node: fixture.name, type: 'main', index: 0 }];
		}
	}
	return {
		name: `reserve ${version}`,
		nodes,
		connections: {
			[WEBHOOK]: { main: [[{ node: RESERVE, type: 'main', index: 0 }]] },
			[RESERVE]: { main },
		},
		settings: { executionOrder: 'v1' },
	};
}

const run = async (workflow, item) =>
	await runWorkflow(workflow, [item], {
		credentials: db.credential(),
		credentialsByType: { webhookSigningSecretApi: { secret: stripe.secret } },
	});

/** A Stripe-signed delivery of event `id` (signed now, as each retry is). */
async function delivery(id, secret = stripe.secret) {
	const raw = JSON.stringify({ id, type: 'invoice.paid' });
	const headers = await stripe.sign(raw, { secret });
	return webhookItem({ body: JSON.parse(raw), rawBody: raw, headers });
}

/** Each way for the same situation: 2.2 with the Respond nodes, then 2.3 answering itself. */
async function bothWays(parameters, situation) {
	takeAnswers();
	const before = await situation('v22', { version: 2.2, respond: true });
	const [old, ...moreOld] = takeAnswers();
	expect(moreOld).toEqual([]);
	expect(before.webhookResponses).toEqual([]);
	const after = await situation('v23', { version: 2.3, respond: false });
	expect(takeAnswers()).toEqual([]);
	expect(after.webhookResponses).toHaveLength(1);
	const [answer] = after.webhookResponses;
	// The Respond node's answer and Reserve's, field for field and byte for byte.
	expect(answer).toEqual({ statusCode: old.statusCode, headers: old.headers, body: old.body });
	expect(after.status).toBe('success');
	return { answer, old, after };
}

const outputItems = (result, name, parameters = signedLease) =>
	result.output(RESERVE, reserveOutputNames(parameters, 2.3).indexOf(name));

describe('Reserve 2.3 answers repeats itself behind a Webhook, as the Respond nodes did', () => {
	test('a duplicate of a completed event: 200 {"status":"duplicate","key"}, the item still on duplicate', async () => {
		const { answer, after } = await bothWays(signedLease, async (_way, shape) => {
			const id = `evt_dup_${runId}`;
			const first = await run(
				workflowOf({ ...shape, parameters: signedLease, complete: {} }),
				await delivery(id),
			);
			expect(first.output(RESERVE, 0)).toHaveLength(1);
			expect(first.webhookResponses).toEqual([]);
			return await run(
				workflowOf({ ...shape, parameters: signedLease, complete: {} }),
				await delivery(id),
			);
		});
		expect(answer.statusCode).toBe(200);
		expect(answer.headers).toEqual({ 'content-type': 'application/json; charset=utf-8' });
		expect(JSON.parse(answer.body)).toEqual({
			status: 'duplicate',
			key: `evt:evt_dup_${runId}`,
		});
		expect(outputItems(after, 'duplicate')).toHaveLength(1);
		expect(after.ran(COMPLETE)).toBe(false);
	});

	test('a retry while the first attempt still runs: 409 with Retry-After, the item on in flight', async () => {
		const { answer, after } = await bothWays(signedLease, async (_way, shape) => {
			const id = `evt_busy_${runId}`;
			// No Complete Key: the first execution keeps the key for its 300 s lease.
			await run(workflowOf({ ...shape, parameters: signedLease }), await delivery(id));
			return await run(workflowOf({ ...shape, parameters: signedLease }), await delivery(id));
		});
		expect(answer.statusCode).toBe(409);
		expect(answer.headers['retry-after']).toBe('300');
		expect(JSON.parse(answer.body)).toEqual({
			status: 'in_progress',
			key: `evt:evt_busy_${runId}`,
			retryAfterSeconds: 300,
		});
		expect(outputItems(after, 'in flight')).toHaveLength(1);
	});

	test('an invalid signature: 401 problem+json, nothing reserved, the item (with its reason) on invalid signature', async () => {
		const { answer, after } = await bothWays(signedLease, async (_way, shape) =>
			run(
				workflowOf({ ...shape, parameters: signedLease, complete: {} }),
				await delivery(`evt_forged_${runId}`, 'whsec_not_the_one'),
			),
		);
		expect(answer.statusCode).toBe(401);
		expect(answer.headers).toEqual({ 'content-type': 'application/problem+json' });
		expect(JSON.parse(answer.body).status).toBe(401);
		const [refused] = outputItems(after, 'invalid signature');
		expect(refused.json.signature).toMatchObject({ valid: false, reason: 'mismatch' });
		const { rows } = await db.query(
			`SELECT key FROM processed_events_r23 WHERE key LIKE '%evt_forged%'`,
		);
		expect(rows).toEqual([]);
	});

	test('simple mode: a duplicate answered 200 {"status":"duplicate","key"}', async () => {
		const simple = { ...signedLease, mode: 'simple' };
		delete simple.leaseSeconds;
		const { answer } = await bothWays(simple, async (_way, shape) => {
			const id = `evt_simple_${runId}`;
			await run(workflowOf({ ...shape, parameters: simple }), await delivery(id));
			return await run(workflowOf({ ...shape, parameters: simple }), await delivery(id));
		});
		expect([answer.statusCode, JSON.parse(answer.body).status]).toEqual([200, 'duplicate']);
	});
});

describe('what else Reserve 2.3 answers, and where it answers nothing', () => {
	test('a duplicate of an event whose answer Complete Key stored: that answer replayed, Idempotent-Replayed: true', async () => {
		const id = `evt_stored_${randomUUID()}`;
		const shape = { version: 2.3, respond: false, parameters: signedLease };
		const stored = {
			respondToWebhook: true,
			storeResponse: true,
			responseStatusCode: 201,
			responseBody: '{"order":"A-1"}',
		};
		const first = await run(workflowOf({ ...shape, complete: stored }), await delivery(id));
		expect(first.webhookResponses.map((r) => [r.statusCode, r.body])).toEqual([
			[201, '{"order":"A-1"}'],
		]);
		const again = await run(workflowOf({ ...shape, complete: stored }), await delivery(id));
		expect(again.webhookResponses).toEqual([
			{
				statusCode: 201,
				headers: { ...first.webhookResponses[0].headers, 'idempotent-replayed': 'true' },
				body: '{"order":"A-1"}',
			},
		]);
	});

	test('Answer Repeats off: the Respond nodes answer, as in 2.2', async () => {
		const parameters = { ...signedLease, answerRepeats: false };
		const id = `evt_off_${randomUUID()}`;
		const shape = { version: 2.3, respond: true, parameters, complete: {} };
		await run(workflowOf(shape), await delivery(id));
		takeAnswers();
		const again = await run(workflowOf(shape), await delivery(id));
		expect(again.webhookResponses).toEqual([]);
		expect(takeAnswers().map((a) => [a.node, a.statusCode])).toEqual([
			['Respond 200 duplicate', 200],
		]);
	});

	test('behind a Webhook that answers by itself (not through a node): nothing answered, the item on its output', async () => {
		for (const responseMode of ['onReceived', 'lastNode']) {
			const id = `evt_mode_${responseMode}_${randomUUID()}`;
			const shape = { version: 2.3, respond: false, parameters: signedLease, responseMode };
			await run(workflowOf(shape), await delivery(id));
			const again = await run(workflowOf(shape), await delivery(id));
			expect([responseMode, again.webhookResponses]).toEqual([responseMode, []]);
			expect(outputItems(again, 'in flight')).toHaveLength(1);
		}
	});
});
