// Answer first, end to end (docs/answer-first.md, issue 53): the template workflows/answer-first.json
// in a real n8n 2.41.1 with the packed package. Reserve stores the verified delivery with its key,
// the workflow answers 200 accepted at once, the business step (insert business_log, between Skip if
// done and Record) runs after the answer, and the Idempotency Redrive Trigger in the same workflow
// runs again what a crash or a failure left unfinished. Three scenarios, one stack:
//   1. a business step slower (6 s) than the sender's timeout (3 s, Slack's), with a sender that
//      retries as Slack does (schedule shortened): every delivery answered 2xx inside 3 s, no retry
//      needed, one business row per event;
//   2. kill -9 of n8n after the answer, while the business step runs: once the lease ends the
//      Redrive Trigger runs the stored delivery, one business row, nothing resent by the sender;
//   3. a business step that always fails: after Max Attempts the key is a dead letter, the trigger's
//      dead-letter output ran, nothing left in flight.
// The published copy differs from the file only where the test needs seconds, not minutes: Reserve's
// and the trigger's lease (10 s), the trigger's Check Every (5 s), Backoff (0) and Max Attempts (3),
// and Also Store Headers (the harness's request id, so a redriven execution names the request it
// replays). The business step's speed and failures come from a trigger on business_log, as in
// builtin.e2e.mjs. Run with node --test test/e2e/answer-first.e2e.mjs after npm run build.
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
import { importableCopy } from '../../scripts/harness/templates.mjs';

const TEMPLATE = 'workflows/answer-first.json';
const WORKFLOW_ID = 'IdemAnswerFirst01';
const LEASE_SECONDS = 10;
const CHECK_EVERY_SECONDS = 5;
const MAX_ATTEMPTS = 3;
/** Slack's timeout; its retry schedule (at once, 1 min, 5 min) shortened to seconds. */
const SENDER_TIMEOUT_MS = 3000;
const SENDER_RETRY_DELAYS_MS = [0, 2000, 4000];
const SLOW_STEP_SECONDS = 6;
const TRIGGER = 'Redrive Unfinished Keys';
const DEAD_LETTER_ALERT = 'Dead Letter Alert (replace me)';
const COMPLETE = 'Complete Key';

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;
const suiteStartedAt = Date.now();

/** The template as published here: its leases, checks and attempts short enough for a test. */
function templateCopy() {
	const workflow = importableCopy(TEMPLATE, WORKFLOW_ID);
	const node = (/** @type {string} */ name) => {
		const found = workflow.nodes.find((/** @type {any} */ candidate) => candidate.name === name);
		if (!found) throw new Error(`${TEMPLATE} has no node "${name}"`);
		return found;
	};
	const reserve = node('Idempotency Reserve');
	assert.equal(
		reserve.parameters.answerFirst,
		true,
		`${TEMPLATE}: Reserve no longer answers first`,
	);
	reserve.parameters = {
		...reserve.parameters,
		leaseSeconds: LEASE_SECONDS,
		storedHeaders: REQUEST_ID_HEADER,
	};
	const trigger = node(TRIGGER);
	trigger.parameters = {
		...trigger.parameters,
		checkEverySeconds: CHECK_EVERY_SECONDS,
		leaseSeconds: LEASE_SECONDS,
		backoffSeconds: 0,
		maxAttempts: MAX_ATTEMPTS,
	};
	return workflow;
}

before(
	async () => {
		stack = await startStack({
			label: 'answer-first',
			extraWorkflows: [{ workflow: templateCopy() }],
		});
		const db = stack.keysDb;
		// A killed n8n's sleeping insert must be cancelled, not committed after it (builtin.e2e.mjs).
		await db.query(
			`ALTER DATABASE "${stack.keysDatabase}" SET client_connection_check_interval = '200ms'`,
		);
		// How the business step behaves per event type: sleeps this long, or fails.
		await db.query(
			`CREATE TABLE business_behaviour (event_type text PRIMARY KEY, sleep_seconds float8, fail boolean NOT NULL DEFAULT false)`,
		);
		await db.query(`CREATE FUNCTION business_behaviour() RETURNS trigger LANGUAGE plpgsql AS $$
			DECLARE b business_behaviour;
			BEGIN
				SELECT * INTO b FROM business_behaviour WHERE event_type = NEW.event_type;
				IF b.fail THEN RAISE EXCEPTION 'the business step refuses % (test)', NEW.event_type; END IF;
				IF b.sleep_seconds IS NOT NULL THEN PERFORM pg_sleep(b.sleep_seconds); END IF;
				RETURN NEW;
			END $$`);
		await db.query(
			`CREATE TRIGGER business_behaviour BEFORE INSERT ON business_log FOR EACH ROW EXECUTE FUNCTION business_behaviour()`,
		);
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

async function behave(
	/** @type {string} */ type,
	/** @type {{ sleep?: number, fail?: boolean }} */ how,
) {
	await stack.keysDb.query(
		`INSERT INTO business_behaviour VALUES ($1, $2, $3)
		 ON CONFLICT (event_type) DO UPDATE SET sleep_seconds = $2, fail = $3`,
		[type, how.sleep ?? null, how.fail ?? false],
	);
}

/** The event's key row. */
async function keyRow(/** @type {string} */ key) {
	const { rows } = await stack.keysDb.query(
		`SELECT status, attempts, owner_token, lease_until, delivery IS NOT NULL AS stored
		 FROM processed_events WHERE key = $1`,
		[key],
	);
	return rows[0];
}

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
async function redrivesOf(/** @type {string} */ key) {
	return (await executions()).filter(
		(execution) =>
			execution.nodesRun[0] === TRIGGER &&
			execution.items(TRIGGER, 0).some((item) => item.idempotency?.key === key),
	);
}

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

			const completed = await waitFor(
				`the Redrive Trigger to complete ${key}`,
				async () => {
					const row = await keyRow(key);
					return row?.status === 'completed' ? row : undefined;
				},
				{ timeoutMs: (LEASE_SECONDS + CHECK_EVERY_SECONDS + 60) * 1000, intervalMs: 250 },
			);
			const completedSeconds = (Date.now() - crashedAt) / 1000;
			assert.equal(completed.attempts, 2);
			const [redrive, ...more] = await waitFor(
				'the redriven execution to be recorded',
				async () => {
					const found = await redrivesOf(key);
					return found.length > 0 ? found : undefined;
				},
				{ timeoutMs: 30_000, intervalMs: 250 },
			);
			assert.deepEqual(more, []);
			assert.equal(redrive.status, 'success', redrive.error);
			assert.ok(
				[BUSINESS_STEP, COMPLETE].every((name) => redrive.nodesRun.includes(name)),
				redrive.nodesRun.join(' → '),
			);
			const [item] = redrive.items(TRIGGER, 0);
			assert.deepEqual(item.body, event);
			assert.equal(item.headers[REQUEST_ID_HEADER], sent[0].requestId, 'the delivery it stored');
			assert.deepEqual(
				[item.idempotency.redrive, item.idempotency.answerFirst, item.idempotency.attempt],
				[true, true, 2],
			);
			assert.ok(!redrive.nodesRun.includes('Respond 200 accepted'));
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
			process.stderr.write(
				`[answer-first] always fails: dead letter after ${MAX_ATTEMPTS} attempts, ${deadSeconds.toFixed(1)} s after the delivery\n`,
			);
		}),
);
