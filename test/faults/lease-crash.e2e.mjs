// n8n killed (kill -9) while a slow business step runs, then started again: the sender's retries get
// 409 with Retry-After while the dead execution's lease runs, and once it has ended the next retry
// takes the key over and processes the event, once. Nobody deletes a key by hand. The published
// template is the file's, with a shorter lease so the test does not wait five minutes.
//
// The business step is made slow by a trigger on business_log that sleeps for one marked event, and
// the keys database has client_connection_check_interval set, so PostgreSQL cancels the statement
// of a client that died (as a server should be set up where a dead client's half-done work must not
// commit; without it the insert would finish and the takeover would run the step a second time:
// see the README on making the business step idempotent).
//
// The same stack proves the operator's alert templates (alertTemplates.mjs publishes them beside
// the template): the stuck-keys alert, run by the server's schedule, hands its Alert step the key
// of an execution killed with kill -9 and no completed one; the Error Workflow gets Complete Key's
// lost lease (a takeover during a slow step) and a failed Release Key (the key row held by an open
// transaction), each with the key, the workflow and the execution id. What the Alert steps got is
// read from n8n's own execution records.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { BUSINESS_STEP, sendEvent, startStack, waitFor } from '../../scripts/harness/index.mjs';
import {
	ALERT,
	ALERT_LEASE_SECONDS,
	ALERTING_ID,
	alertWorkflows,
	GRACE_SECONDS,
	prepareAlerts,
	STUCK_EVERY_SECONDS,
} from './alertTemplates.mjs';
import { report, withLogs } from './support.mjs';

const LEASE_SECONDS = 75;
const SLOW_EVENT = { id: 'evt_crash', type: 'slow.business.step' };
const KEY = 'evt:evt_crash';

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;
/** @type {Awaited<ReturnType<typeof prepareAlerts>>} */
let alerts;
/** The key of the execution killed for the stuck-keys alert, and when its lease ended (epoch ms). */
let killed;

before(
	async () => {
		stack = await startStack({
			label: 'lease-crash',
			templateParameters: { 'Idempotency Reserve': { leaseSeconds: LEASE_SECONDS } },
			extraWorkflows: alertWorkflows(),
		});
		const db = stack.keysDb;
		await db.query(
			`ALTER DATABASE "${stack.keysDatabase}" SET client_connection_check_interval = '200ms'`,
		);
		await db.query(`CREATE TABLE slow_business_step (event_type text PRIMARY KEY)`);
		await db.query(`INSERT INTO slow_business_step VALUES ('${SLOW_EVENT.type}')`);
		await db.query(`CREATE FUNCTION sleep_when_slow() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF EXISTS (SELECT 1 FROM slow_business_step s WHERE s.event_type = NEW.event_type) THEN
					PERFORM pg_sleep(60);
				END IF;
				RETURN NEW;
			END $$`);
		await db.query(
			`CREATE TRIGGER sleep_when_slow BEFORE INSERT ON business_log FOR EACH ROW EXECUTE FUNCTION sleep_when_slow()`,
		);
		alerts = await prepareAlerts(stack);
	},
	{ timeout: 60 * 60_000 },
);

after(async () => await stack?.stop(), { timeout: 120_000 });

/** Is an INSERT into business_log running (the slow business step)? */
const businessInsertRunning = async () => (await stack.businessInsertsRunning()) > 0;

async function keyRow() {
	const { rows } = await stack.keysDb.query(
		`SELECT status, attempts, extract(epoch FROM lease_until - now())::float8 AS lease_left FROM processed_events WHERE key = $1`,
		[KEY],
	);
	return rows[0];
}

test(
	'kill -9 during a slow business step: 409 while the lease runs, then processed once, no manual step',
	{ timeout: 600_000 },
	() =>
		withLogs(stack, async () => {
			// The first delivery: reserved, then stuck in the business step. Its answer never comes.
			const first = stack.send(SLOW_EVENT, { timeoutMs: 300_000 }).catch((error) => ({ error }));
			await waitFor('the slow business step to be running', businessInsertRunning, {
				timeoutMs: 60_000,
				intervalMs: 100,
			});
			assert.equal((await keyRow()).status, 'in_progress');

			const crashedAt = Date.now();
			await stack.crashAndRestartN8n();
			const restartSeconds = (Date.now() - crashedAt) / 1000;
			/** @type {{ error?: Error, status?: number }} */
			const lostAnswer = await first;
			assert.ok(
				lostAnswer.error || lostAnswer.status >= 500,
				'the crashed execution never answered 2xx',
			);
			// The dead client's insert was cancelled: nothing of the business step committed.
			await waitFor(
				"PostgreSQL to cancel the dead execution's insert",
				async () => !(await businessInsertRunning()),
				{
					timeoutMs: 30_000,
					intervalMs: 200,
				},
			);
			assert.equal((await stack.businessRows(KEY)).length, 0);
			await stack.keysDb.query(`DELETE FROM slow_business_step`);

			// The provider retries while the lease still runs: 409, come back later.
			const leaseLeft = (await keyRow()).lease_left;
			assert.ok(
				leaseLeft > 5,
				`n8n took ${restartSeconds.toFixed(0)} s to restart; the lease (${LEASE_SECONDS} s) has ${leaseLeft} s left`,
			);
			const early = await stack.deliver(SLOW_EVENT);
			assert.equal(early.response.status, 409, early.response.text);
			assert.equal(early.response.json.status, 'in_progress');
			const retryAfter = Number(early.response.headers['retry-after']);
			assert.ok(retryAfter >= 1 && retryAfter <= LEASE_SECONDS, `Retry-After ${retryAfter}`);
			assert.equal(early.branch, 'in flight');

			// It comes back when told to: the lease has ended, the key is taken over, the event processed.
			await new Promise((resolve) => setTimeout(resolve, (retryAfter + 1) * 1000));
			const retried = await stack.deliver(SLOW_EVENT);
			assert.deepEqual(
				[retried.response.status, retried.response.json?.status],
				[200, 'processed'],
				retried.response.text,
			);
			assert.ok(retried.execution.nodesRun.includes(BUSINESS_STEP));
			const row = await keyRow();
			assert.deepEqual([row.status, row.attempts], ['completed', 2]);

			// Later retries are plain duplicates; the business step ran once in all.
			const late = await stack.deliver(SLOW_EVENT);
			assert.deepEqual([late.response.status, late.response.json?.status], [200, 'duplicate']);
			assert.equal((await stack.businessRows(KEY)).length, 1);

			report('lease crash', {
				leaseSeconds: LEASE_SECONDS,
				restartSeconds: Math.round(restartSeconds),
				answerWhileLeased: `${early.response.status} Retry-After ${retryAfter}`,
				afterLease: `${retried.response.status} ${retried.response.json?.status} (attempt ${row.attempts})`,
				businessRows: 1,
				manualSteps: 0,
			});
		}),
);

/** The Error Workflow's run for a failed execution: it succeeded, and what its Alert step got. */
async function alertedFor(failedExecutionId) {
	const run = await alerts.errorWorkflowRunFor(failedExecutionId);
	assert.equal(run.status, 'success', run.error);
	assert.equal(run.mode, 'error');
	return { run, alerted: run.items(ALERT) };
}

test(
	'stuck-keys alert, 1/2: n8n killed with kill -9 during a held business step leaves an in-progress key that nobody completes',
	{ timeout: 300_000 },
	() =>
		withLogs(stack, async () => {
			const event = { id: 'evt_tpl_killed', type: 'order.created' };
			const key = `evt:${event.id}`;
			const held = await alerts.holdBusinessStep(key);
			let restartSeconds;
			try {
				const lost = sendEvent(alerts.alerting.webhookUrl, event, { timeoutMs: 300_000 }).catch(
					(error) => ({ error }),
				);
				await alerts.businessStepHeld();
				assert.equal((await alerts.keyState(key)).status, 'in_progress');
				const crashedAt = Date.now();
				await stack.crashAndRestartN8n();
				restartSeconds = (Date.now() - crashedAt) / 1000;
				/** @type {{ error?: Error, status?: number }} */
				const answer = await lost;
				assert.ok(answer.error || answer.status >= 500, 'the killed execution never answered 2xx');
			} finally {
				await held.open();
			}
			const row = await alerts.keyState(key);
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
			const held = await alerts.holdBusinessStep(key);
			let first;
			let resent;
			try {
				first = stack.deliver(event, { to: alerts.alerting, timeoutMs: 120_000 });
				first.catch(() => undefined); // awaited below; a failure before that is the test's own
				await alerts.businessStepHeld();
				// The sender resends once the lease has ended: the key is taken over and completed.
				await held.stopHoldingNewSteps();
				await alerts.leaseEnded(key);
				resent = await stack.deliver(event, { to: alerts.alerting });
				assert.deepEqual(
					[resent.response.status, resent.response.json?.status],
					[200, 'processed'],
					resent.response.text,
				);
				assert.deepEqual(
					[(await alerts.keyState(key)).status, (await alerts.keyState(key)).attempts],
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

			const { alerted } = await alertedFor(late.execution.id);
			assert.equal(alerted.length, 1);
			assert.deepEqual(
				{ ...alerted[0], executionUrl: undefined },
				{
					key,
					workflowId: ALERTING_ID,
					workflowName: alerts.alerting.name,
					executionId: late.execution.id,
					executionUrl: undefined,
					failedNode: 'Complete Key',
					message: late.execution.error,
				},
			);
			assert.match(alerted[0].executionUrl, new RegExp(`/${late.execution.id}$`));
			report('operator templates: lost lease → Error Workflow', {
				leaseSeconds: ALERT_LEASE_SECONDS,
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
			const held = await alerts.holdBusinessStep(key, { thenFail: true });
			const psql = await alerts.session();
			let failed;
			try {
				const delivery = stack.deliver(event, { to: alerts.alerting, timeoutMs: 120_000 });
				delivery.catch(() => undefined); // awaited below
				await alerts.businessStepHeld();
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

			const { alerted } = await alertedFor(failed.execution.id);
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
			assert.equal((await alerts.keyState(key)).status, 'in_progress');
			await alerts.leaseEnded(key);
			const retried = await stack.deliver(event, { to: alerts.alerting });
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
	"stuck-keys alert, 2/2: the template, run by the server's schedule, hands the killed execution's key (and no completed one) to its Alert step",
	{ timeout: 300_000 },
	() =>
		withLogs(stack, async () => {
			assert.ok(killed, 'the kill -9 test ran first');
			const stuckAfterMs = killed.leaseEndMs + GRACE_SECONDS * 1000;
			const run = await waitFor(
				`a stuck-keys run after ${new Date(stuckAfterMs).toISOString()} whose Alert step ran`,
				async () =>
					(await alerts.stuckAlertRuns()).find(
						(e) => new Date(e.startedAt).getTime() > stuckAfterMs && e.nodesRun.includes(ALERT),
					),
				{
					timeoutMs: Math.max(0, stuckAfterMs - Date.now()) + 60_000,
					intervalMs: 1_000,
				},
			);
			const alerted = run.items(ALERT).find((item) => item.key === killed.key);
			assert.ok(alerted, JSON.stringify(run.items(ALERT)));
			assert.equal(alerted.status, 'in_progress');
			assert.equal(alerted.attempt, 1);
			assert.ok(alerted.leaseEndedSecondsAgo >= GRACE_SECONDS, JSON.stringify(alerted));

			// Completed keys were in the table all along (the warm-up, the lost lease's, the release's).
			const { rows: completed } = await stack.keysDb.query(
				`SELECT key FROM processed_events WHERE status = 'completed' ORDER BY key`,
			);
			assert.ok(completed.length >= 3, JSON.stringify(completed));
			// No run, before or after, handed the Alert step a completed key, a running one, or one
			// whose lease had ended less than the grace ago: every key handed is in progress in the
			// table, its lease ended more than 60 s ago (the database's clock, which the look-up
			// reads). In a passing run that is this key alone; when the first test fails before its
			// retry, its key (evt:evt_crash) is rightly handed too.
			const runs = await alerts.stuckAlertRuns();
			const handed = runs.flatMap((e) => e.items(ALERT));
			assert.deepEqual(
				handed.filter((item) => !(item.leaseEndedSecondsAgo >= GRACE_SECONDS)),
				[],
			);
			const handedKeys = [...new Set(handed.map((item) => item.key))];
			const { rows: states } = await stack.keysDb.query(
				`SELECT key, status, lease_until < now() - make_interval(secs => $2) AS stuck
				 FROM processed_events WHERE key = ANY($1::text[]) ORDER BY key`,
				[handedKeys, GRACE_SECONDS],
			);
			assert.deepEqual(
				states.filter((row) => !(row.status === 'in_progress' && row.stuck)),
				[],
			);
			assert.equal(states.length, handedKeys.length, JSON.stringify(handedKeys));
			report('operator templates: stuck keys', {
				leaseSeconds: ALERT_LEASE_SECONDS,
				graceSeconds: GRACE_SECONDS,
				scheduleEverySeconds: STUCK_EVERY_SECONDS,
				restartSeconds: Math.round(killed.restartSeconds),
				stuckRuns: runs.length,
				alertedAfterLeaseEndSeconds: Math.round(
					(new Date(run.startedAt).getTime() - killed.leaseEndMs) / 1000,
				),
				completedKeysInTable: completed.length,
				keysHanded: handedKeys,
			});
		}),
);
