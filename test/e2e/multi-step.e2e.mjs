// "Resume, don't redo", end to end: the multi-step template (workflows/multi-step.json, two HTTP
// side effects with one Idempotency Step node at each boundary: Skip If Done, Record Step and Skip
// Next If Done, Record Step) in a real n8n 2.41.1 with the packed
// package, next to the same two HTTP steps in the webhook template's shape without step records
// (Reserve → Create customer → Send receipt → Complete Key). A local HTTP server stands in for the
// CRM and the mail API: it counts the calls per event and per endpoint, and can fail the next call
// of an event with 500 or hold it open. Two faults, each sent to both workflows:
//   1. Send receipt fails once (500): the provider resends, re-signed;
//   2. n8n is killed with kill -9 while Send receipt's call is held open, restarted, and the
//      provider resends once the lease has ended.
// With step records Create customer is called once in both; without them, twice. A third scenario
// (with step records only): Create customer answers with "\u0000" and a lone surrogate, which jsonb
// refuses as they are; the answer is recorded losslessly and the resend does not call it again. The published
// copies differ from the file only in the two URLs (pointed at the local server) and a short lease,
// so the kill scenario waits seconds, not five minutes. One stack for the whole file.
// Run with `npm run test:e2e` (or node --test test/e2e/multi-step.e2e.mjs after npm run build).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { after, before, test } from 'node:test';

import { sendEvent, startStack, waitFor, withStackLogs } from '../../scripts/harness/index.mjs';
import { importableCopy } from '../../scripts/harness/templates.mjs';

const TEMPLATE = 'workflows/multi-step.json';
const LEASE_SECONDS = 12;
const CRM_URL = 'https://crm.example.com/api/customers';
const MAIL_URL = 'https://mail.example.com/api/receipts';
const CREATE = 'Create customer';
/** The node between the two steps: records Create customer, routes Send receipt. */
const BOUNDARY = 'Record create customer, then send receipt';
const SEND = 'Send receipt';
/** The local server's paths for the two APIs, and the counts' names for them. */
const ENDPOINTS = { '/crm/api/customers': CREATE, '/mail/api/receipts': SEND };

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;
/** @type {ReturnType<typeof startFakeApis>} */
let apis;
/** The two published workflows: { id, name, file, webhookUrl }. */
let withSteps;
let withoutSteps;
const suiteStartedAt = Date.now();
/** Call counts per scenario and workflow, for the side-by-side table. */
const counts = {};

/**
 * The stand-in for both APIs. Each call is recorded ({ endpoint, event, body, answer }) where
 * `event` is the body's `event`, which both HTTP nodes send. `failNext` makes the next call of an
 * endpoint for an event answer 500; `holdNext` keeps it open until `release()`.
 */
function startFakeApis() {
	/** @type {{ endpoint: string, event: string, body: any, status?: number, answer?: any }[]} */
	const calls = [];
	const failing = new Set();
	/** Endpoint and event pairs answered with text PostgreSQL's jsonb refuses (NUL, a lone surrogate). */
	const hostile = new Set();
	/** @type {Map<string, { arrived: () => void, released: Promise<unknown> }>} */
	const holding = new Map();
	/** @type {Array<() => void>} */
	const releases = [];
	let next = 0;
	const server = http.createServer((request, response) => {
		let text = '';
		request.on('data', (chunk) => (text += chunk));
		request.on('end', async () => {
			const endpoint = ENDPOINTS[request.url ?? ''];
			let body;
			try {
				body = JSON.parse(text);
			} catch {
				body = { unparsed: text };
			}
			const call = { endpoint: endpoint ?? request.url, event: body?.event, body };
			calls.push(call);
			const id = `${endpoint} ${call.event}`;
			const answer = (status, json) => {
				call.status = status;
				call.answer = json;
				if (response.destroyed || request.socket.destroyed) return;
				response.writeHead(status, { 'content-type': 'application/json' });
				response.end(JSON.stringify(json));
			};
			if (!endpoint) return answer(404, { error: `no such endpoint ${request.url}` });
			if (failing.delete(id)) return answer(500, { error: `${endpoint} is down (test)` });
			const hold = holding.get(id);
			if (hold) {
				holding.delete(id);
				hold.arrived();
				await hold.released;
			}
			next += 1;
			if (endpoint === CREATE)
				return answer(200, {
					id: `cus_${next}`,
					email: body.email ?? null,
					event: call.event,
					// JSON.stringify sends them as the escapes "\u0000" and "\ud800", as such an API would.
					...(hostile.has(id) ? { name: 'a\u0000b', note: 'lone \ud800 surrogate' } : {}),
				});
			return answer(200, { id: `rcpt_${next}`, customer: body.customer, event: call.event });
		});
	});
	return {
		server,
		calls,
		async listen() {
			await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
			return /** @type {import('node:net').AddressInfo} */ (server.address()).port;
		},
		/** The calls one endpoint got for one event, in order. */
		callsOf(endpoint, event) {
			return calls.filter((call) => call.endpoint === endpoint && call.event === event);
		},
		count(endpoint, event) {
			return this.callsOf(endpoint, event).length;
		},
		failNext(endpoint, event) {
			failing.add(`${endpoint} ${event}`);
		},
		/** Every answer of the endpoint for the event carries a NUL and a lone surrogate. */
		answerHostile(endpoint, event) {
			hostile.add(`${endpoint} ${event}`);
		},
		/**
		 * Holds the next call open: `arrived` turns true when it came in, `release()` answers it (if its
		 * caller is still there to read the answer).
		 */
		holdNext(endpoint, event) {
			/** @type {(value?: unknown) => void} */
			let release = () => {};
			const released = new Promise((resolve) => (release = resolve));
			const hold = { arrived: false, release };
			holding.set(`${endpoint} ${event}`, {
				arrived: () => (hold.arrived = true),
				released,
			});
			releases.push(release);
			return hold;
		},
		async close() {
			for (const release of releases) release();
			server.closeAllConnections();
			await new Promise((resolve) => server.close(() => resolve(undefined)));
		},
	};
}

/** The two URLs of a workflow's HTTP nodes pointed at the local server, and the lease shortened. */
function pointAtLocalApis(workflow, port) {
	const byName = (name) => {
		const node = workflow.nodes.find((candidate) => candidate.name === name);
		if (!node) throw new Error(`${workflow.name} has no node "${name}"`);
		return node;
	};
	const create = byName(CREATE);
	const send = byName(SEND);
	assert.equal(create.parameters.url, CRM_URL, `${TEMPLATE}: ${CREATE} calls another URL now`);
	assert.equal(send.parameters.url, MAIL_URL, `${TEMPLATE}: ${SEND} calls another URL now`);
	create.parameters = { ...create.parameters, url: `http://127.0.0.1:${port}/crm/api/customers` };
	send.parameters = { ...send.parameters, url: `http://127.0.0.1:${port}/mail/api/receipts` };
	const reserve = byName('Idempotency Reserve');
	reserve.parameters = { ...reserve.parameters, leaseSeconds: LEASE_SECONDS };
	return workflow;
}

/** The template as published here: the file, its URLs on the local server, a short lease. */
function templateCopy(port) {
	return pointAtLocalApis(importableCopy(TEMPLATE, 'IdemMultiStepTpl1'), port);
}

/**
 * The same two HTTP steps in the webhook template's shape, without step records: Reserve → Create
 * customer → Send receipt → Complete Key, each error output → Release Key → Respond 500, the other
 * Reserve outputs as in idempotent-webhook.json. Made from the template's own nodes, so the HTTP
 * calls, the Reserve settings and the answers are the same; only the Idempotency Step nodes are left
 * out, and the Webhook listens on another path.
 */
function withoutStepsCopy(port) {
	const template = importableCopy(TEMPLATE, 'IdemTwoStepsBare1');
	const kept = template.nodes
		.filter((node) => node.type !== 'n8n-nodes-idempotency.idempotencyStep')
		.filter((node) => node.type !== 'n8n-nodes-base.stickyNote')
		.map((node) => ({ ...node, id: randomUUID() }));
	const webhook = kept.find((node) => node.type === 'n8n-nodes-base.webhook');
	webhook.parameters = { ...webhook.parameters, path: 'plain-multi-step' };
	webhook.webhookId = randomUUID();
	const to = (node) => [{ node, type: 'main', index: 0 }];
	const workflow = {
		...template,
		name: 'Two HTTP steps without step records (e2e comparison)',
		nodes: kept,
		connections: {
			Webhook: { main: [to('Idempotency Reserve')] },
			'Idempotency Reserve': {
				main: [
					to(CREATE),
					// Reserve 2.3 answers duplicates, in flight and invalid signatures itself.
					[],
					[],
					[],
				],
			},
			[CREATE]: { main: [to(SEND), to('Release Key')] },
			[SEND]: { main: [to('Complete Key'), to('Release Key')] },
			'Release Key': { main: [to('Respond 500')] },
			// Reserve 2.2 answers its item errors itself, as in the template (docs/errors.md).
		},
	};
	return pointAtLocalApis(workflow, port);
}

before(
	async () => {
		apis = startFakeApis();
		const port = await apis.listen();
		stack = await startStack({
			label: 'multi-step',
			extraWorkflows: [{ workflow: templateCopy(port) }, { workflow: withoutStepsCopy(port) }],
		});
		[withSteps, withoutSteps] = stack.extraWorkflows;
	},
	{ timeout: 60 * 60_000 },
);

after(
	async () => {
		await stack?.stop();
		await apis?.close();
		process.stderr.write(
			`[multi-step] suite wall time ${((Date.now() - suiteStartedAt) / 1000).toFixed(1)} s\n`,
		);
	},
	{ timeout: 120_000 },
);

const withLogs = (fn) => withStackLogs(stack, fn);

/** A checkout event as a Stripe-like provider sends it. */
function checkoutEvent(id) {
	return {
		id,
		type: 'checkout.session.completed',
		data: { object: { customer_details: { email: `${id}@example.com` } } },
	};
}

/** The Stripe timestamp each event was last signed with (seconds). */
const lastSignedAt = new Map();

/**
 * The timestamp of the event's next try: now, and later than its previous try's, as Stripe signs
 * every resend afresh (so every try carries another Stripe-Signature).
 */
function signedAtFor(eventId) {
	const signedAt = Math.max(Math.floor(Date.now() / 1000), (lastSignedAt.get(eventId) ?? 0) + 1);
	lastSignedAt.set(eventId, signedAt);
	return signedAt;
}

/** Delivers the event to a workflow as the provider does: the same bytes, signed afresh. */
async function deliver(workflow, event) {
	return await stack.deliver(event, { to: workflow, signedAt: signedAtFor(event.id) });
}

/** The event's key row: status, attempts, the steps recorded, whether its lease has ended. */
async function keyRow(eventId) {
	const { rows } = await stack.keysDb.query(
		`SELECT status, attempts, to_jsonb(t) -> 'steps' AS steps,
		   coalesce(lease_until <= now(), true) AS lease_ended
		 FROM processed_events t WHERE key = $1`,
		[`evt:${eventId}`],
	);
	return rows[0];
}

/** Create customer and Send receipt calls for an event. */
function callCounts(eventId) {
	return { [CREATE]: apis.count(CREATE, eventId), [SEND]: apis.count(SEND, eventId) };
}

const answerOf = (delivery) => [delivery.response.status, delivery.response.json];

/** A further resend of a completed event: 200 duplicate, no call to either API. */
async function assertDuplicate(workflow, event) {
	const before_ = callCounts(event.id);
	const late = await deliver(workflow, event);
	assert.deepEqual(answerOf(late), [200, { status: 'duplicate', key: `evt:${event.id}` }]);
	assert.deepEqual(callCounts(event.id), before_, 'a duplicate calls neither API');
}

test(
	'Send receipt fails once: with step records the resend skips Create customer (called once) and sends the receipt for the recorded customer',
	{ timeout: 120_000 },
	() =>
		withLogs(async () => {
			const event = checkoutEvent(`evt_steps_fail_${randomUUID().slice(0, 8)}`);
			apis.failNext(SEND, event.id);

			const first = await deliver(withSteps, event);
			assert.deepEqual(answerOf(first), [500, { status: 'failed', released: true }]);
			assert.ok(first.execution.nodesRun.includes(CREATE));
			const released = first.execution.items('Release Key')[0]?.idempotency;
			assert.equal(released?.stepsKept, true, JSON.stringify(released));
			// The row stays with what Create customer did, its lease ended, for the retry to take over.
			const kept = await keyRow(event.id);
			assert.deepEqual(
				[kept.status, kept.lease_ended, Object.keys(kept.steps ?? {})],
				['in_progress', true, ['create customer']],
			);

			const resend = await deliver(withSteps, event);
			assert.notEqual(resend.response.signature, first.response.signature);
			assert.deepEqual(answerOf(resend), [200, { status: 'processed' }], resend.response.text);
			assert.ok(!resend.execution.nodesRun.includes(CREATE), resend.execution.nodesRun.join(' → '));
			assert.ok(resend.execution.nodesRun.includes(SEND));

			// Once, twice: and the receipt of the retry names the customer the first call created.
			const [customer] = apis.callsOf(CREATE, event.id);
			const receipts = apis.callsOf(SEND, event.id);
			assert.deepEqual(callCounts(event.id), { [CREATE]: 1, [SEND]: 2 });
			assert.deepEqual(
				receipts.map((call) => [call.status, call.body.customer]),
				[
					[500, customer.answer.id],
					[200, customer.answer.id],
				],
			);
			const skipped = resend.execution.items('Skip if done: create customer', 1);
			assert.deepEqual(
				skipped.map((item) => item.id),
				[customer.answer.id],
			);
			// The boundary passed the skipped step's output on to Send receipt, unrecorded again.
			assert.deepEqual(
				resend.execution.items(BOUNDARY, 0).map((item) => item.id),
				[customer.answer.id],
			);

			const row = await keyRow(event.id);
			assert.deepEqual(
				[row.status, row.attempts, Object.keys(row.steps ?? {}).sort()],
				['completed', 2, ['create customer', 'send receipt']],
			);
			assert.equal(row.steps['create customer'].items[0].id, customer.answer.id);

			await assertDuplicate(withSteps, event);
			counts['Send receipt fails once'] = { withSteps: callCounts(event.id) };
		}),
);

test(
	'Send receipt fails once, without step records: the resend runs both steps again (Create customer called twice)',
	{ timeout: 120_000 },
	() =>
		withLogs(async () => {
			const event = checkoutEvent(`evt_bare_fail_${randomUUID().slice(0, 8)}`);
			apis.failNext(SEND, event.id);

			const first = await deliver(withoutSteps, event);
			assert.deepEqual(answerOf(first), [500, { status: 'failed', released: true }]);
			assert.equal(first.execution.items('Release Key')[0]?.idempotency?.stepsKept, undefined);
			assert.equal(await keyRow(event.id), undefined, 'Release Key deleted the key');

			const resend = await deliver(withoutSteps, event);
			assert.deepEqual(answerOf(resend), [200, { status: 'processed' }], resend.response.text);
			assert.ok(resend.execution.nodesRun.includes(CREATE));

			assert.deepEqual(callCounts(event.id), { [CREATE]: 2, [SEND]: 2 });
			const customers = apis.callsOf(CREATE, event.id).map((call) => call.answer.id);
			assert.notEqual(customers[0], customers[1], 'two customers for one event');
			const row = await keyRow(event.id);
			assert.deepEqual([row.status, row.attempts, row.steps], ['completed', 1, null]);

			await assertDuplicate(withoutSteps, event);
			counts['Send receipt fails once'].withoutSteps = callCounts(event.id);
		}),
);

test(
	'Create customer answers with "\\u0000" and a lone surrogate, Send receipt fails once: the answer is recorded as it is and the resend does not call Create customer again',
	{ timeout: 120_000 },
	() =>
		withLogs(async () => {
			const event = checkoutEvent(`evt_steps_nul_${randomUUID().slice(0, 8)}`);
			apis.answerHostile(CREATE, event.id);
			apis.failNext(SEND, event.id);

			const first = await deliver(withSteps, event);
			assert.deepEqual(answerOf(first), [500, { status: 'failed', released: true }]);
			const [customer] = apis.callsOf(CREATE, event.id);
			assert.equal(customer.answer.name, 'a\u0000b');
			// Before records stored any JSON, this write failed and the key stayed in flight.
			const kept = await keyRow(event.id);
			assert.deepEqual(
				[kept.status, kept.lease_ended, Object.keys(kept.steps ?? {})],
				['in_progress', true, ['create customer']],
			);

			const resend = await deliver(withSteps, event);
			assert.deepEqual(answerOf(resend), [200, { status: 'processed' }], resend.response.text);
			assert.ok(!resend.execution.nodesRun.includes(CREATE), resend.execution.nodesRun.join(' → '));
			const [skipped] = resend.execution.items('Skip if done: create customer', 1);
			assert.deepEqual(
				[skipped.id, skipped.name, skipped.note],
				[customer.answer.id, 'a\u0000b', 'lone \ud800 surrogate'],
			);
			assert.deepEqual(callCounts(event.id), { [CREATE]: 1, [SEND]: 2 });
			assert.deepEqual(
				apis.callsOf(SEND, event.id).map((call) => call.body.customer),
				[customer.answer.id, customer.answer.id],
			);
			assert.equal((await keyRow(event.id)).status, 'completed');
			await assertDuplicate(withSteps, event);
		}),
);

test(
	'kill -9 of n8n while Send receipt is held, restart, resend after the lease: Create customer once with step records, twice without',
	{ timeout: 300_000 },
	() =>
		withLogs(async () => {
			const stepsEvent = checkoutEvent(`evt_steps_kill_${randomUUID().slice(0, 8)}`);
			const bareEvent = checkoutEvent(`evt_bare_kill_${randomUUID().slice(0, 8)}`);
			const deliveries = [
				{ workflow: withSteps, event: stepsEvent },
				{ workflow: withoutSteps, event: bareEvent },
			];
			// Both workflows' executions reach Send receipt, and its call stays open there.
			const holds = deliveries.map(({ event }) => apis.holdNext(SEND, event.id));
			const lost = deliveries.map(({ workflow, event }) =>
				sendEvent(workflow.webhookUrl, event, {
					timeoutMs: 120_000,
					signedAt: signedAtFor(event.id),
				}).catch((error) => ({
					error,
				})),
			);
			await waitFor(
				'both Send receipt calls to arrive',
				() => holds.every((hold) => hold.arrived),
				{ timeoutMs: 60_000, intervalMs: 100 },
			);
			for (const { event } of deliveries)
				assert.equal((await keyRow(event.id)).status, 'in_progress');
			assert.deepEqual(
				Object.keys((await keyRow(stepsEvent.id)).steps ?? {}),
				['create customer'],
				'Create customer was recorded before Send receipt was called',
			);

			const crashedAt = Date.now();
			await stack.crashAndRestartN8n();
			const restartSeconds = (Date.now() - crashedAt) / 1000;
			for (const answer of await Promise.all(lost)) {
				const status = 'status' in answer ? answer.status : undefined;
				assert.ok(!(status >= 200 && status < 300), `the killed execution answered ${status}`);
			}
			for (const hold of holds) hold.release();

			// The provider resends once the lease has ended (it would get 409 before that).
			for (const { event } of deliveries)
				await waitFor(
					`the lease of evt:${event.id} to end`,
					async () => (await keyRow(event.id)).lease_ended,
					{ timeoutMs: (LEASE_SECONDS + 30) * 1000, intervalMs: 250 },
				);
			const resent = [];
			for (const { workflow, event } of deliveries) {
				const resend = await deliver(workflow, event);
				assert.deepEqual(answerOf(resend), [200, { status: 'processed' }], resend.response.text);
				const row = await keyRow(event.id);
				assert.deepEqual([row.status, row.attempts], ['completed', 2]);
				resent.push(resend);
			}
			assert.ok(!resent[0].execution.nodesRun.includes(CREATE));
			assert.ok(resent[1].execution.nodesRun.includes(CREATE));

			// With step records: the held call and the retry's, both for the one customer.
			const [customer] = apis.callsOf(CREATE, stepsEvent.id);
			assert.deepEqual(callCounts(stepsEvent.id), { [CREATE]: 1, [SEND]: 2 });
			assert.deepEqual(
				apis.callsOf(SEND, stepsEvent.id).map((call) => call.body.customer),
				[customer.answer.id, customer.answer.id],
			);
			assert.deepEqual(Object.keys((await keyRow(stepsEvent.id)).steps).sort(), [
				'create customer',
				'send receipt',
			]);
			// Without: a second customer.
			assert.deepEqual(callCounts(bareEvent.id), { [CREATE]: 2, [SEND]: 2 });

			await assertDuplicate(withSteps, stepsEvent);
			await assertDuplicate(withoutSteps, bareEvent);
			process.stderr.write(
				`[multi-step] kill -9: n8n answered again after ${restartSeconds.toFixed(1)} s (lease ${LEASE_SECONDS} s)\n`,
			);
			counts['kill -9 during Send receipt'] = {
				withSteps: callCounts(stepsEvent.id),
				withoutSteps: callCounts(bareEvent.id),
				restartSeconds: Math.round(restartSeconds),
			};
		}),
);

test('side by side: calls per event with and without step records', (t) => {
	const rows = [['scenario', 'workflow', CREATE, SEND]];
	for (const [scenario, byWorkflow] of Object.entries(counts))
		for (const [label, workflow] of [
			['with step records (multi-step.json)', 'withSteps'],
			['without step records', 'withoutSteps'],
		])
			if (byWorkflow[workflow])
				rows.push([
					scenario,
					label,
					String(byWorkflow[workflow][CREATE]),
					String(byWorkflow[workflow][SEND]),
				]);
	const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
	const lines = rows.map((row) =>
		row.map((cell, column) => cell.padEnd(widths[column])).join(' | '),
	);
	for (const line of lines) t.diagnostic(line);
	process.stderr.write(`[multi-step] calls per event:\n${lines.join('\n')}\n`);
	assert.equal(rows.length, 5, 'every scenario ran against both workflows');
});
