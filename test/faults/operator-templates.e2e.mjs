// The operator's two alert templates in a real n8n 2.41.1, one stack for all their tests:
//   - workflows/stuck-keys-alert.json, published with its Schedule Trigger firing every few seconds
//     (the only change; Grace stays 60 s), finds the key of an execution killed with kill -9 during
//     a slow business step, and hands its Alert step that key and no completed one;
//   - workflows/idempotency-errors.json, published and named as the Error Workflow of a copy of the
//     webhook template (settings.errorWorkflow = its id, what Workflow settings → Error Workflow
//     saves), gets Complete Key's lost-lease error (the lease ended during a slow business step, a
//     resend took the key over and completed it) and a failed Release Key (the key row held by an
//     open transaction, so Release gives up at its lock timeout), each with the key, the workflow
//     and the execution id at its Alert step.
// What the Alert steps got is read from n8n's own execution records. The business step is held by a
// trigger on business_log that waits for an advisory lock the test holds, for the events it names,
// and then fails if told to; so each step is as slow as the test needs, and no longer.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';

import { sleep, startStack, waitFor } from '../../scripts/harness/index.mjs';
import {
	importableCopy,
	scheduledCopyEvery,
	WEBHOOK_TEMPLATE,
	withParameters,
} from '../../scripts/harness/templates.mjs';
import { report, withLogs } from './support.mjs';

// Short, so a lease ends while the test holds a business step; the stuck key shows after lease + 60 s.
const LEASE_SECONDS = 5;
// The stuck-keys template's own grace (Find Stuck Keys → Grace), unchanged in the published copy.
const GRACE_SECONDS = 60;
const STUCK_EVERY_SECONDS = 5;
const ALERT = 'Alert (replace me)';
const STUCK_ALERT_ID = 'IdemStuckAlert001';
const ERRORS_ID = 'IdemErrorsTmpl001';
const ALERTING_ID = 'IdemAlertingHook1';
const GATE_LOCK = 4242;

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;
/** The webhook template's copy that names the Error Workflow. */
let alerting;
/** The killed execution's key, and when its lease ended (database clock, epoch ms). */
let killed;

/** The webhook template as a user sets it up: Workflow settings → Error Workflow = the errors template. */
function webhookWithErrorWorkflow() {
	const workflow = withParameters(importableCopy(WEBHOOK_TEMPLATE, ALERTING_ID), {
		'Idempotency Reserve': { leaseSeconds: LEASE_SECONDS },
	});
	workflow.name = `${workflow.name} (Error Workflow set)`;
	workflow.settings = { ...workflow.settings, errorWorkflow: ERRORS_ID };
	const webhook = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.webhook');
	webhook.parameters = { ...webhook.parameters, path: 'idempotent-webhook-alerting' };
	webhook.webhookId = randomUUID();
	return { workflow };
}

before(
	async () => {
		stack = await startStack({
			label: 'faults_operator_templates',
			templateParameters: { 'Idempotency Reserve': { leaseSeconds: LEASE_SECONDS } },
			extraWorkflows: [
				{
					workflow: scheduledCopyEvery(
						'workflows/stuck-keys-alert.json',
						STUCK_EVERY_SECONDS,
						STUCK_ALERT_ID,
					),
				},
				// Published like any workflow: n8n 2.x runs only an Error Workflow's published version.
				{ workflow: importableCopy('workflows/idempotency-errors.json', ERRORS_ID) },
				webhookWithErrorWorkflow(),
			],
		});
		alerting = stack.extraWorkflows.find((workflow) => workflow.id === ALERTING_ID);
		const db = stack.keysDb;
		await db.query(
			`CREATE TABLE held_business_step (event_key text PRIMARY KEY, then_fail boolean NOT NULL)`,
		);
		await db.query(`CREATE FUNCTION hold_business_step() RETURNS trigger LANGUAGE plpgsql AS $$
			DECLARE fail boolean;
			BEGIN
				SELECT h.then_fail INTO fail FROM held_business_step h WHERE h.event_key = NEW.event_key;
				IF fail IS NOT NULL THEN
					PERFORM pg_advisory_xact_lock_shared(${GATE_LOCK});
					IF fail THEN RAISE EXCEPTION 'business step failed (held_business_step)'; END IF;
				END IF;
				RETURN NEW;
			END $$`);
		await db.query(
			`CREATE TRIGGER hold_business_step BEFORE INSERT ON business_log FOR EACH ROW EXECUTE FUNCTION hold_business_step()`,
		);
		// The key table, made by the nodes, and a completed key in it.
		const warm = await stack.deliver({ id: 'evt_tpl_warm', type: 'order.created' });
		assert.equal(warm.response.status, 200, warm.response.text);
		// The first look-up after that builds the stuck-keys index; wait for it before holding anything.
		await waitFor(
			'a stuck-keys run that succeeded',
			async () =>
				(await stack.executions.list({ workflowId: STUCK_ALERT_ID })).find(
					(e) => e.status === 'success',
				),
			{ timeoutMs: 60_000, intervalMs: 500 },
		);
	},
	{ timeout: 30 * 60_000 },
);

after(async () => await stack?.stop(), { timeout: 180_000 });

/** A session of the keys database of its own (an operator's psql, the test's gate). */
async function session() {
	const client = await stack.keysDb.connect();
	return {
		query: async (sql, values) => await client.query(sql, values),
		end: async () => {
			await client.query('ROLLBACK').catch(() => undefined);
			await client.query(`SELECT pg_advisory_unlock_all()`).catch(() => undefined);
			client.release();
		},
	};
}

/** Holds the business step of `key` (and fails it afterwards with thenFail) until the gate opens. */
async function holdBusinessStep(key, { thenFail = false } = {}) {
	await stack.keysDb.query(`INSERT INTO held_business_step VALUES ($1, $2)`, [key, thenFail]);
	const gate = await session();
	await gate.query(`SELECT pg_advisory_lock(${GATE_LOCK})`);
	let opened = false;
	return {
		/** Once a held step waits at the gate, later inserts of the key go through unheld. */
		stopHoldingNewSteps: async () =>
			await stack.keysDb.query(`DELETE FROM held_business_step WHERE event_key = $1`, [key]),
		/** Lets the held step go on (idempotent). */
		open: async () => {
			if (opened) return;
			opened = true;
			await stack.keysDb.query(`DELETE FROM held_business_step WHERE event_key = $1`, [key]);
			await gate.end();
		},
	};
}

/** Is a business step waiting at the gate? */
async function businessStepHeld() {
	const { rows } = await stack.keysDb.query(
		`SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND query ILIKE 'INSERT INTO business_log%' AND wait_event_type = 'Lock' AND wait_event = 'advisory'`,
		[stack.keysDatabase],
	);
	return rows.length > 0;
}

async function keyRow(key) {
	const { rows } = await stack.keysDb.query(
		`SELECT status, attempts, (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
		        extract(epoch FROM lease_until - now())::float8 AS lease_left
		 FROM processed_events WHERE key = $1`,
		[key],
	);
	return rows[0];
}

/** Waits until the key's lease has ended by the database's clock. */
async function leaseEnded(key) {
	await sleep(Math.max(0, (await keyRow(key)).lease_left * 1000 + 200));
	await waitFor(`the lease of ${key} to end`, async () => (await keyRow(key)).lease_left < 0, {
		timeoutMs: 10_000,
		intervalMs: 100,
	});
}

/** The Error Workflow's run for the failed execution, and the items its Alert step got. */
async function errorWorkflowRunFor(failedExecutionId) {
	const run = await waitFor(
		`the Error Workflow's run for execution ${failedExecutionId}`,
		async () =>
			(await stack.executions.list({ workflowId: ERRORS_ID })).find(
				(e) => String(e.trigger?.execution?.id) === failedExecutionId,
			),
		{ timeoutMs: 60_000, intervalMs: 250 },
	);
	assert.equal(run.status, 'success', run.error);
	assert.equal(run.mode, 'error');
	return { run, alerted: run.items(ALERT) };
}

test(
	'kill -9 during a slow business step leaves an in-progress key that nobody completes',
	{ timeout: 300_000 },
	() =>
		withLogs(stack, async () => {
			const event = { id: 'evt_tpl_killed', type: 'order.created' };
			const key = `evt:${event.id}`;
			const held = await holdBusinessStep(key);
			let restartSeconds;
			try {
				const lost = stack.send(event, { timeoutMs: 300_000 }).catch((error) => ({ error }));
				await waitFor('the business step to be held', businessStepHeld, {
					timeoutMs: 60_000,
					intervalMs: 100,
				});
				assert.equal((await keyRow(key)).status, 'in_progress');
				const crashedAt = Date.now();
				await stack.crashAndRestartN8n();
				restartSeconds = (Date.now() - crashedAt) / 1000;
				/** @type {{ error?: Error, status?: number }} */
				const answer = await lost;
				assert.ok(answer.error || answer.status >= 500, 'the killed execution never answered 2xx');
			} finally {
				await held.open();
			}
			const row = await keyRow(key);
			assert.deepEqual([row.status, row.attempts], ['in_progress', 1]);
			killed = { key, leaseEndMs: row.lease_until_ms, restartSeconds };
		}),
);

test(
	"the Error Workflow gets Complete Key's lost lease: key, workflow and execution id at its Alert step",
	{ timeout: 180_000 },
	() =>
		withLogs(stack, async () => {
			const event = { id: 'evt_tpl_lost_lease', type: 'order.created' };
			const key = `evt:${event.id}`;
			const held = await holdBusinessStep(key);
			let first;
			let resent;
			try {
				first = stack.deliver(event, { to: alerting, timeoutMs: 120_000 });
				first.catch(() => undefined); // awaited below; a failure before that is the test's own
				await waitFor('the business step to be held', businessStepHeld, {
					timeoutMs: 60_000,
					intervalMs: 100,
				});
				// The sender resends once the lease has ended: the key is taken over and completed.
				await held.stopHoldingNewSteps();
				await leaseEnded(key);
				resent = await stack.deliver(event, { to: alerting });
				assert.deepEqual(
					[resent.response.status, resent.response.json?.status],
					[200, 'processed'],
					resent.response.text,
				);
				assert.deepEqual(
					[(await keyRow(key)).status, (await keyRow(key)).attempts],
					['completed', 2],
				);
			} finally {
				await held.open();
			}
			// The first execution's step goes on, and its Complete Key finds the key taken over.
			const late = await first;
			assert.equal(late.response.status, 500, late.response.text);
			assert.equal(late.execution.status, 'error');
			assert.equal(late.execution.lastNodeExecuted, 'Complete Key');
			assert.match(late.execution.error, /^The key "evt:evt_tpl_lost_lease" was taken over/);

			const { alerted } = await errorWorkflowRunFor(late.execution.id);
			assert.equal(alerted.length, 1);
			assert.deepEqual(
				{ ...alerted[0], executionUrl: undefined },
				{
					key,
					workflowId: ALERTING_ID,
					workflowName: alerting.name,
					executionId: late.execution.id,
					executionUrl: undefined,
					failedNode: 'Complete Key',
					message: late.execution.error,
				},
			);
			assert.match(alerted[0].executionUrl, new RegExp(`/${late.execution.id}$`));
			report('operator templates: lost lease → Error Workflow', {
				leaseSeconds: LEASE_SECONDS,
				alerted: { key: alerted[0].key, failedNode: alerted[0].failedNode },
				businessRows: (await stack.businessRows(key)).length,
			});
		}),
);

test(
	'the Error Workflow gets a failed Release Key (key row held by an open transaction): key, workflow and execution id at its Alert step',
	{ timeout: 180_000 },
	() =>
		withLogs(stack, async () => {
			const event = { id: 'evt_tpl_release_failed', type: 'order.created' };
			const key = `evt:${event.id}`;
			const held = await holdBusinessStep(key, { thenFail: true });
			const psql = await session();
			let failed;
			try {
				const delivery = stack.deliver(event, { to: alerting, timeoutMs: 120_000 });
				delivery.catch(() => undefined); // awaited below
				await waitFor('the business step to be held', businessStepHeld, {
					timeoutMs: 60_000,
					intervalMs: 100,
				});
				// An operator's open transaction on the key row, then the business step fails.
				await psql.query('BEGIN');
				await psql.query('SELECT * FROM processed_events WHERE key = $1 FOR UPDATE', [key]);
				await held.open();
				failed = await delivery;
			} finally {
				await held.open();
				await psql.end();
			}
			assert.equal(failed.response.status, 500, failed.response.text);
			assert.equal(failed.execution.status, 'error');
			assert.equal(failed.execution.lastNodeExecuted, 'Release Key');
			// Release's lock timeout, naming the key (where the Error Workflow reads it from).
			assert.match(failed.execution.error, /held by another transaction/);
			assert.ok(failed.execution.error.includes(`"${key}"`), failed.execution.error);

			const { alerted } = await errorWorkflowRunFor(failed.execution.id);
			assert.equal(alerted.length, 1);
			assert.deepEqual(
				[
					alerted[0].key,
					alerted[0].workflowId,
					alerted[0].executionId,
					alerted[0].failedNode,
					alerted[0].message,
				],
				[key, ALERTING_ID, failed.execution.id, 'Release Key', failed.execution.error],
			);

			// The key stayed reserved; once its lease ends the provider's retry processes the event.
			assert.equal((await keyRow(key)).status, 'in_progress');
			await leaseEnded(key);
			const retried = await stack.deliver(event, { to: alerting });
			assert.deepEqual(
				[retried.response.status, retried.response.json?.status],
				[200, 'processed'],
				retried.response.text,
			);
			report('operator templates: failed Release → Error Workflow', {
				alerted: { key: alerted[0].key, failedNode: alerted[0].failedNode },
				message: failed.execution.error,
			});
		}),
);

test(
	"the stuck-keys template, run by the server's schedule, hands the killed execution's key (and no completed one) to its Alert step",
	{ timeout: 300_000 },
	() =>
		withLogs(stack, async () => {
			assert.ok(killed, 'the kill -9 test ran first');
			const stuckAfterMs = killed.leaseEndMs + GRACE_SECONDS * 1000;
			const run = await waitFor(
				`a stuck-keys run after ${new Date(stuckAfterMs).toISOString()} whose Alert step ran`,
				async () =>
					(await stack.executions.list({ workflowId: STUCK_ALERT_ID })).find(
						(e) => new Date(e.startedAt).getTime() > stuckAfterMs && e.nodesRun.includes(ALERT),
					),
				{
					timeoutMs: Math.max(0, stuckAfterMs - Date.now()) + 60_000,
					intervalMs: 1_000,
				},
			);
			const alerted = run.items(ALERT);
			assert.deepEqual(
				alerted.map((item) => item.key),
				[killed.key],
			);
			assert.equal(alerted[0].status, 'in_progress');
			assert.equal(alerted[0].attempt, 1);
			assert.ok(alerted[0].leaseEndedSecondsAgo >= GRACE_SECONDS, JSON.stringify(alerted[0]));

			// Completed keys were in the table all along (the warm-up, the lost lease's, the release's).
			const { rows: completed } = await stack.keysDb.query(
				`SELECT key FROM processed_events WHERE status = 'completed' ORDER BY key`,
			);
			assert.ok(completed.length >= 3, JSON.stringify(completed));
			// No run, before or after, handed the Alert step any other key, nor this one before its
			// lease had ended 60 s earlier (by the database's clock, which the look-up reads).
			const runs = await stack.executions.list({ workflowId: STUCK_ALERT_ID });
			const handed = runs.flatMap((e) => e.items(ALERT));
			assert.deepEqual(
				handed.filter((item) => item.key !== killed.key),
				[],
			);
			assert.deepEqual(
				handed.filter((item) => !(item.leaseEndedSecondsAgo >= GRACE_SECONDS)),
				[],
			);
			report('operator templates: stuck keys', {
				leaseSeconds: LEASE_SECONDS,
				graceSeconds: GRACE_SECONDS,
				scheduleEverySeconds: STUCK_EVERY_SECONDS,
				restartSeconds: Math.round(killed.restartSeconds),
				stuckRuns: runs.length,
				alertedAfterLeaseEndSeconds: Math.round(
					(new Date(run.startedAt).getTime() - killed.leaseEndMs) / 1000,
				),
				completedKeysInTable: completed.length,
			});
		}),
);
