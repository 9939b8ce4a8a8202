// Answer first, end to end (docs/answer-first.md, issue 53): the template workflows/answer-first.json
// in a real n8n 2.41.1 with the packed package. Reserve stores the verified delivery with its key,
// the workflow answers 200 accepted at once, the business step (insert business_log, then Complete
// Key) runs after the answer, and the Idempotency Redrive Trigger in the same workflow runs again
// what a crash or a failure left unfinished (its Complete Key adopts the trigger's claim). The
// scenarios, one stack:
//   1. a business step slower (6 s) than the sender's timeout (3 s, Slack's), with a sender that
//      retries as Slack does (schedule shortened): every delivery answered 2xx inside 3 s, no retry
//      needed, one business row per event;
//   2. kill -9 of n8n after the answer, while the business step runs: once the lease ends the
//      Redrive Trigger runs the stored delivery, one business row, nothing resent by the sender;
//   3. a business step that always fails: after Max Attempts the key is a dead letter, the trigger's
//      dead-letter output ran, nothing left in flight;
//   4. a delivery over the record cap (256 KiB): not stored, so answered last (200 processed after its
//      business step), as docs/answer-first.md says;
//   5. the dead letter of 3 retried from the Idempotency Keys node (Retry Dead Letters, in a workflow
//      of its own behind a webhook): the Redrive Trigger runs it again, one business row.
// The published copy (test/support/answerFirstStack.mjs) differs from the file only where the test
// needs seconds, not minutes: leases 10 s, Check Every 5 s, Backoff 0, Max Attempts 3. The business
// step's speed and failures come from a trigger on business_log, as in builtin.e2e.mjs.
// Run with node --test test/e2e/answer-first.e2e.mjs after npm run build.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';

import {
	BUSINESS_STEP,
	REQUEST_ID_HEADER,
	sendEvent,
	sleep,
	startStack,
	waitFor,
	withStackLogs,
} from '../../scripts/harness/index.mjs';
import {
	answerFirstCopy,
	behave as behaveIn,
	cancelDeadClientsStatements,
	COMPLETE,
	completedByOneRedrive,
	DEAD_LETTER_ALERT,
	installBusinessBehaviour,
	keyRow as keyRowIn,
	REDRIVE_TRIGGER as TRIGGER,
	redrivesOf as redrivesIn,
	RESPOND_ACCEPTED,
} from '../support/answerFirstStack.mjs';
import keysSupport from '../support/keysWorkflow.js';

const WORKFLOW_ID = 'IdemAnswerFirst01';
const LEASE_SECONDS = 10;
const CHECK_EVERY_SECONDS = 5;
const MAX_ATTEMPTS = 3;
/** Slack's timeout; its retry schedule (at once, 1 min, 5 min) shortened to seconds. */
const SENDER_TIMEOUT_MS = 3000;
const SENDER_RETRY_DELAYS_MS = [0, 2000, 4000];
const SLOW_STEP_SECONDS = 6;
const OVER_CAP_STEP_SECONDS = 2;
const ANSWERED_LAST_STEP = 'Business Step, Answered Last (insert business_log)';
const KEYS_WORKFLOW_ID = 'IdemAfKeysNode001';

/**
 * The operator's Idempotency Keys node retrying dead letters, run by the server: a workflow of its
 * own whose Webhook hands it `{ keys }` and answers with the node's items (one per key).
 */
function keysNodeOverWebhook() {
	const { KEYS_NODE, keysWorkflow } = keysSupport;
	const workflow = keysWorkflow(
		'processed_events',
		{ operation: 'retryDeadLetters', keys: '={{ $json.body.keys }}' },
		{
			position: [220, 0],
			credentials: {
				idempotencyPostgresApi: { id: 'IdemPgCredE2E0001', name: 'Idempotency Postgres' },
			},
		},
	);
	const webhook = {
		parameters: {
			httpMethod: 'POST',
			path: 'answer-first-keys',
			responseMode: 'lastNode',
			responseData: 'allEntries',
			options: {},
		},
		id: 'a1a0c7d2-0000-4000-8000-000000000023',
		name: 'Webhook',
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2,
		position: [0, 0],
		webhookId: randomUUID(),
	};
	return {
		...workflow,
		id: KEYS_WORKFLOW_ID,
		name: 'Idempotency Keys: Retry Dead Letters (e2e)',
		nodes: [webhook, ...workflow.nodes],
		connections: { Webhook: { main: [[{ node: KEYS_NODE, type: 'main', index: 0 }]] } },
	};
}

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;
const suiteStartedAt = Date.now();

before(
	async () => {
		stack = await startStack({
			label: 'answer-first',
			extraWorkflows: [
				{
					workflow: answerFirstCopy({
						id: WORKFLOW_ID,
						leaseSeconds: LEASE_SECONDS,
						checkEverySeconds: CHECK_EVERY_SECONDS,
						maxAttempts: MAX_ATTEMPTS,
					}),
				},
				{ workflow: keysNodeOverWebhook() },
			],
		});
		await cancelDeadClientsStatements(stack.keysDb, stack.keysDatabase);
		await installBusinessBehaviour(stack.keysDb);
	},
	{ timeout: 60 * 60_000 },
);

after(
	async () => {
		await stack?.stop();
		process.stderr.write(
			`[answer-first] suite wall time ${((Date.now() - suiteStartedAt) / 1000).toFixed(1)} s\n`,
		);
	},
	{ timeout: 120_000 },
);

const withLogs = (/** @type {() => Promise<void>} */ fn) => withStackLogs(stack, fn);

function published() {
	const found = stack.extraWorkflows.find(({ id }) => id === WORKFLOW_ID);
	if (!found?.webhookUrl) throw new Error('the answer-first workflow has no webhook URL');
	return found;
}

function keysWebhook() {
	const found = stack.extraWorkflows.find(({ id }) => id === KEYS_WORKFLOW_ID);
	if (!found?.webhookUrl) throw new Error('the Keys node workflow has no webhook URL');
	return found;
}

const behave = (
	/** @type {string} */ type,
	/** @type {{ sleep?: number, fail?: boolean }} */ how,
) => behaveIn(stack.keysDb, type, how);
const keyRow = (/** @type {string} */ key) => keyRowIn(stack.keysDb, key);

/**
 * A sender as Slack is: waits SENDER_TIMEOUT_MS for an answer, counts anything else than 2xx in
 * that time as a failure and tries again after the next delay of its schedule. Returns every
 * attempt: { status (0 when it timed out), ms, json, requestId }.
 */
async function sendAsSlack(/** @type {{ id: string, type: string }} */ event) {
	const attempts = [];
	for (const delay of SENDER_RETRY_DELAYS_MS) {
		await sleep(delay);
		const requestId = randomUUID();
		const started = Date.now();
		const answer = await sendEvent(published().webhookUrl, event, {
			timeoutMs: SENDER_TIMEOUT_MS,
			requestId,
		}).catch(() => ({ status: 0, json: undefined }));
		attempts.push({
			status: answer.status,
			ms: Date.now() - started,
			json: answer.json,
			requestId,
		});
		if (answer.status >= 200 && answer.status < 300) break;
	}
	return attempts;
}

/** The workflow's recorded executions (finished ones unless told otherwise). */
async function executions(finishedOnly = true) {
	return await stack.executions.list({ workflowId: WORKFLOW_ID, finishedOnly });
}

/** Executions the Redrive Trigger started for this key on its redrive output. */
const redrivesOf = async (/** @type {string} */ key) => redrivesIn(await executions(), key);

/** The dead letter the always-failing test left, which the Keys node's retry then runs again. */
/** @type {{ key: string, type: string } | undefined} */
let deadLetter;

/** Is an INSERT into business_log running (the slow business step)? */
const businessInsertRunning = async () => (await stack.businessInsertsRunning()) > 0;

test(
	'a business step slower than the sender waits (6 s against 3 s): every delivery answered 2xx inside 3 s at the first try, one business row each',
	{ timeout: 120_000 },
	() =>
		withLogs(async () => {
			const type = 'af.slow';
			await behave(type, { sleep: SLOW_STEP_SECONDS });
			const events = [1, 2].map((n) => ({
				id: `evt_af_slow_${n}_${randomUUID().slice(0, 8)}`,
				type,
			}));
			const sent = await Promise.all(events.map(sendAsSlack));
			for (const [index, attempts] of sent.entries()) {
				assert.equal(attempts.length, 1, `${events[index].id}: ${JSON.stringify(attempts)}`);
				const [{ status, ms, json }] = attempts;
				assert.deepEqual([status, json], [200, { status: 'accepted' }]);
				assert.ok(ms < SENDER_TIMEOUT_MS, `answered in ${ms} ms`);
			}
			for (const [index, event] of events.entries()) {
				const key = `evt:${event.id}`;
				const execution = await stack.executions.waitForRequest(
					WORKFLOW_ID,
					sent[index][0].requestId,
					{
						timeoutMs: 60_000,
					},
				);
				assert.equal(execution.status, 'success', execution.error);
				assert.ok(execution.nodesRun.includes(COMPLETE), execution.nodesRun.join(' → '));
				const stepMs = execution.endTime(BUSINESS_STEP) - execution.startTime(BUSINESS_STEP);
				assert.ok(stepMs >= SLOW_STEP_SECONDS * 1000 - 100, `the business step took ${stepMs} ms`);
				const row = await keyRow(key);
				assert.deepEqual([row.status, row.attempts, row.stored], ['completed', 1, true]);
				assert.equal((await stack.businessRows(key)).length, 1);
				process.stderr.write(
					`[answer-first] slow step: answered in ${sent[index][0].ms} ms, business step ${(stepMs / 1000).toFixed(1)} s, attempts by the sender 1\n`,
				);
			}
		}),
);

test(
	'a business step three times longer than the lease (32 s against 10 s): Reserve keeps the lease while its execution runs, so neither the Redrive Trigger nor the sender retry in the middle (409) runs it again; one business row, then duplicate',
	{ timeout: 180_000 },
	() =>
		withLogs(async () => {
			const type = 'af.longer';
			const stepSeconds = 32;
			await behave(type, { sleep: stepSeconds });
			const event = { id: `evt_af_longer_${randomUUID().slice(0, 8)}`, type };
			const key = `evt:${event.id}`;
			const sent = await sendAsSlack(event);
			assert.deepEqual(
				sent.map(({ status, json }) => [status, json]),
				[[200, { status: 'accepted' }]],
			);
			// Twice the lease and several of the trigger's checks later, the sender tries again.
			await sleep(2 * LEASE_SECONDS * 1000);
			const retried = await sendEvent(published().webhookUrl, event, { timeoutMs: 10_000 });
			assert.equal(retried.status, 409, JSON.stringify(retried.json));
			const first = await stack.executions.waitForRequest(WORKFLOW_ID, sent[0].requestId, {
				timeoutMs: 90_000,
			});
			assert.equal(first.status, 'success', first.error);
			assert.ok(first.nodesRun.includes(COMPLETE), first.nodesRun.join(' → '));
			const row = await keyRow(key);
			assert.deepEqual([row.status, row.attempts], ['completed', 1]);
			assert.equal((await stack.businessRows(key)).length, 1);
			// One more check of the trigger after the completion: nothing left for it to run.
			await sleep(CHECK_EVERY_SECONDS * 1000 + 1000);
			assert.deepEqual(await redrivesOf(key), []);
			const repeat = await sendEvent(published().webhookUrl, event, { timeoutMs: 10_000 });
			assert.equal(repeat.status, 200, JSON.stringify(repeat.json));
			assert.equal((await stack.businessRows(key)).length, 1);
		}),
);

test(
	'kill -9 of n8n after the answer, during the business step: the Redrive Trigger runs the stored delivery once the lease ends; one business row, nothing resent',
	{ timeout: 240_000 },
	() =>
		withLogs(async () => {
			const type = 'af.kill';
			await behave(type, { sleep: 60 });
			const event = { id: `evt_af_kill_${randomUUID().slice(0, 8)}`, type };
			const key = `evt:${event.id}`;
			const sent = await sendAsSlack(event);
			assert.deepEqual(
				sent.map(({ status, json }) => [status, json]),
				[[200, { status: 'accepted' }]],
			);
			await waitFor('the business step to be running', businessInsertRunning, {
				timeoutMs: 60_000,
				intervalMs: 100,
			});
			assert.equal((await keyRow(key)).status, 'in_progress');
			// The redriven run's insert is quick: only the killed one sleeps.
			await behave(type, {});

			const crashedAt = Date.now();
			await stack.crashAndRestartN8n();
			const restartSeconds = (Date.now() - crashedAt) / 1000;
			await waitFor(
				"PostgreSQL to cancel the dead execution's insert",
				async () => !(await businessInsertRunning()),
				{ timeoutMs: 30_000, intervalMs: 200 },
			);
			// The restart may outlast the lease, so the redrive can have inserted its row by now: the
			// killed insert's would carry its transaction's start, before the kill.
			const committed = await stack.businessRows(key);
			assert.ok(
				committed.every((row) => new Date(row.created_at).getTime() >= crashedAt),
				`the killed insert committed: ${JSON.stringify(committed)}`,
			);

			const {
				row: completed,
				completedAt,
				redrive,
			} = await completedByOneRedrive({
				db: stack.keysDb,
				listExecutions: () => executions(),
				key,
				timeoutMs: (LEASE_SECONDS + CHECK_EVERY_SECONDS + 60) * 1000,
			});
			const completedSeconds = (completedAt - crashedAt) / 1000;
			assert.equal(completed.attempts, 2);
			const [item] = redrive.items(TRIGGER, 0);
			assert.deepEqual(item.body, event);
			assert.equal(item.headers[REQUEST_ID_HEADER], sent[0].requestId, 'the delivery it stored');
			assert.deepEqual(
				[item.idempotency.redrive, item.idempotency.answerFirst, item.idempotency.attempt],
				[true, true, 2],
			);
			const rows = await stack.businessRows(key);
			assert.equal(rows.length, 1);
			assert.ok(new Date(rows[0].created_at).getTime() >= crashedAt, 'inserted by the redrive');
			assert.equal(sent.length, 1, 'the sender sent the event once');
			process.stderr.write(
				`[answer-first] kill -9: n8n back after ${restartSeconds.toFixed(1)} s, event completed by the redrive ${completedSeconds.toFixed(1)} s after the kill (lease ${LEASE_SECONDS} s, check every ${CHECK_EVERY_SECONDS} s, backoff 0)\n`,
			);
		}),
);

test(
	'a business step that always fails: a dead letter after Max Attempts, the dead-letter output ran, nothing left in flight',
	{ timeout: 240_000 },
	() =>
		withLogs(async () => {
			const type = 'af.fails';
			await behave(type, { fail: true });
			const event = { id: `evt_af_fails_${randomUUID().slice(0, 8)}`, type };
			const key = `evt:${event.id}`;
			const sentAt = Date.now();
			const sent = await sendAsSlack(event);
			assert.deepEqual(
				sent.map(({ status, json }) => [status, json]),
				[[200, { status: 'accepted' }]],
			);
			const first = await stack.executions.waitForRequest(WORKFLOW_ID, sent[0].requestId);
			assert.equal(first.status, 'error');
			assert.match(first.error ?? '', /refuses/);

			const dead = await waitFor(
				`${key} to become a dead letter`,
				async () => {
					const row = await keyRow(key);
					return row?.status === 'dead_letter' ? row : undefined;
				},
				{
					timeoutMs: MAX_ATTEMPTS * (LEASE_SECONDS + CHECK_EVERY_SECONDS + 10) * 1000,
					intervalMs: 500,
				},
			);
			const deadSeconds = (Date.now() - sentAt) / 1000;
			assert.deepEqual(
				[dead.attempts, dead.owner_token, dead.lease_until, dead.stored],
				[MAX_ATTEMPTS, null, null, true],
			);

			const alerted = await waitFor(
				'the dead-letter output to run',
				async () =>
					(await executions()).find(
						(execution) =>
							execution.nodesRun.includes(DEAD_LETTER_ALERT) &&
							execution.items(DEAD_LETTER_ALERT).some((item) => item.key === key),
					),
				{ timeoutMs: 30_000, intervalMs: 250 },
			);
			assert.equal(alerted.status, 'success');
			assert.deepEqual(alerted.nodesRun, [TRIGGER, DEAD_LETTER_ALERT]);
			assert.deepEqual(
				alerted.items(DEAD_LETTER_ALERT).find((item) => item.key === key),
				{ key, attempts: MAX_ATTEMPTS, status: 'dead_letter', table: 'public.processed_events' },
			);

			// Every attempt ran the step and failed: the first from the webhook, the others redriven.
			const redrives = await redrivesOf(key);
			assert.equal(redrives.length, MAX_ATTEMPTS - 1);
			for (const redrive of redrives) {
				assert.equal(redrive.status, 'error');
				assert.ok(redrive.nodesRun.includes(BUSINESS_STEP));
				assert.ok(!redrive.nodesRun.includes(COMPLETE));
			}
			assert.deepEqual(
				redrives.map((redrive) => redrive.items(TRIGGER, 0)[0].idempotency.attempt),
				Array.from({ length: MAX_ATTEMPTS - 1 }, (_, index) => index + 2),
			);

			// Nothing in flight: no key leased, no execution running, no business row.
			const { rows } = await stack.keysDb.query(
				`SELECT key FROM processed_events WHERE status = 'in_progress'`,
			);
			assert.deepEqual(rows, []);
			const running = (await executions(false)).filter(
				(execution) => !['success', 'error', 'crashed', 'canceled'].includes(execution.status),
			);
			assert.deepEqual(
				running.map((execution) => [execution.id, execution.status]),
				[],
			);
			assert.equal((await stack.businessRows(key)).length, 0);
			assert.equal(sent.length, 1, 'the sender sent the event once');
			deadLetter = { key, type };
			process.stderr.write(
				`[answer-first] always fails: dead letter after ${MAX_ATTEMPTS} attempts, ${deadSeconds.toFixed(1)} s after the delivery\n`,
			);
		}),
);

test(
	'a delivery over the record cap (256 KiB) is not stored: answered last, 200 processed once its business step ended, as without answer first; one business row',
	{ timeout: 120_000 },
	() =>
		withLogs(async () => {
			const type = 'af.big';
			// Long enough to tell an answer sent after the step from one sent before it.
			await behave(type, { sleep: OVER_CAP_STEP_SECONDS });
			const event = {
				id: `evt_af_big_${randomUUID().slice(0, 8)}`,
				type,
				padding: 'x'.repeat(300 * 1024),
			};
			const key = `evt:${event.id}`;
			const requestId = randomUUID();
			const started = Date.now();
			const answer = await sendEvent(published().webhookUrl, event, { requestId });
			const ms = Date.now() - started;
			assert.deepEqual([answer.status, answer.json], [200, { status: 'processed' }], answer.text);
			assert.ok(ms >= OVER_CAP_STEP_SECONDS * 1000, `answered after ${ms} ms`);

			const execution = await stack.executions.waitForRequest(WORKFLOW_ID, requestId);
			assert.equal(execution.status, 'success', execution.error);
			const [reserved] = execution.items('Idempotency Reserve', 0);
			assert.deepEqual(
				[reserved.idempotency.key, reserved.idempotency.answerFirst],
				[key, false],
				'Reserve says the delivery is not stored',
			);
			assert.ok(
				[ANSWERED_LAST_STEP, 'Complete Key and Answer'].every((name) =>
					execution.nodesRun.includes(name),
				),
				execution.nodesRun.join(' → '),
			);
			for (const name of [RESPOND_ACCEPTED, BUSINESS_STEP, COMPLETE])
				assert.ok(!execution.nodesRun.includes(name), `${name} ran`);
			const row = await keyRow(key);
			assert.deepEqual([row.status, row.attempts, row.stored], ['completed', 1, false]);
			assert.equal((await stack.businessRows(key)).length, 1);
			process.stderr.write(
				`[answer-first] over the cap (${JSON.stringify(event).length} bytes): answered last after ${ms} ms, 200 processed\n`,
			);
		}),
);

test(
	'the dead letter retried from the Idempotency Keys node (Retry Dead Letters): the Redrive Trigger runs its stored delivery again as attempt 1; one business row',
	{ timeout: 120_000 },
	() =>
		withLogs(async () => {
			assert.ok(deadLetter, 'the always-failing test left no dead letter to retry');
			const { key, type } = deadLetter;
			assert.equal((await keyRow(key)).status, 'dead_letter');
			// The cause is fixed: the step succeeds from now on.
			await behave(type, {});
			const retriedAt = Date.now();
			const answer = await sendEvent(keysWebhook().webhookUrl, { keys: [key, 'evt:nope'] });
			assert.equal(answer.status, 200, answer.text);
			assert.deepEqual(answer.json, [
				{ key, retried: true },
				{ key: 'evt:nope', retried: false, reason: 'not_found' },
			]);

			const {
				row: completed,
				completedAt,
				redrive,
			} = await completedByOneRedrive({
				db: stack.keysDb,
				listExecutions: () => executions(),
				key,
				since: retriedAt,
				timeoutMs: (CHECK_EVERY_SECONDS + 30) * 1000,
			});
			const completedSeconds = (completedAt - retriedAt) / 1000;
			assert.deepEqual([completed.attempts, completed.stored], [1, true]);
			assert.equal(redrive.items(TRIGGER, 0)[0].idempotency.attempt, 1);
			const rows = await stack.businessRows(key);
			assert.equal(rows.length, 1);
			assert.ok(new Date(rows[0].created_at).getTime() >= retriedAt, 'inserted after the retry');
			process.stderr.write(
				`[answer-first] Retry Dead Letters: completed by the redrive ${completedSeconds.toFixed(1)} s after the retry\n`,
			);
		}),
);
