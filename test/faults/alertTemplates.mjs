// The operator's two alert templates as the fault suite publishes them beside the webhook template,
// and what their tests do to the stack (this file is not a test; lease-crash.e2e.mjs runs them):
//   - workflows/stuck-keys-alert.json, its Schedule Trigger firing every few seconds (the only
//     change; Grace stays the file's 60 s), so the real server runs it;
//   - workflows/idempotency-errors.json, published (n8n 2.x runs only an Error Workflow's published
//     version) and named as the Error Workflow of a copy of the webhook template with a short lease
//     (settings.errorWorkflow = its id, what Workflow settings → Error Workflow saves).
// A trigger on business_log holds the business step of the keys a test names on an advisory lock the
// test holds, then lets it go on or fail; so a step is as slow as the test needs, and no longer.
import { randomUUID } from 'node:crypto';

import { sleep, waitFor } from '../../scripts/harness/index.mjs';
import {
	importableCopy,
	scheduledCopyEvery,
	WEBHOOK_TEMPLATE,
	withParameters,
} from '../../scripts/harness/templates.mjs';

export const ALERT = 'Alert (replace me)';
// Short, so a lease ends while a test holds a business step, and a stuck key shows 65 s on.
export const ALERT_LEASE_SECONDS = 5;
// The stuck-keys template's own grace (Find Stuck Keys → Grace).
export const GRACE_SECONDS = 60;
export const STUCK_EVERY_SECONDS = 5;
export const STUCK_ALERT_ID = 'IdemStuckAlert001';
export const ERRORS_ID = 'IdemErrorsTmpl001';
export const ALERTING_ID = 'IdemAlertingHook1';
const GATE_LOCK = 4242;

/** The webhook template as a user sets it up: Workflow settings → Error Workflow = the errors template. */
function webhookWithErrorWorkflow() {
	const workflow = withParameters(importableCopy(WEBHOOK_TEMPLATE, ALERTING_ID), {
		// Not kept (Keep the Lease While Running off): the lost-lease alert needs a lease that ends
		// while its execution still runs.
		'Idempotency Reserve': { leaseSeconds: ALERT_LEASE_SECONDS, keepLease: false },
	});
	workflow.name = `${workflow.name} (Error Workflow set)`;
	workflow.settings = { ...workflow.settings, errorWorkflow: ERRORS_ID };
	const webhook = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.webhook');
	webhook.parameters = { ...webhook.parameters, path: 'idempotent-webhook-alerting' };
	webhook.webhookId = randomUUID();
	return { workflow };
}

/** startStack's extraWorkflows for the alert templates. */
export function alertWorkflows() {
	return [
		{
			workflow: scheduledCopyEvery(
				'workflows/stuck-keys-alert.json',
				STUCK_EVERY_SECONDS,
				STUCK_ALERT_ID,
			),
		},
		{ workflow: importableCopy('workflows/idempotency-errors.json', ERRORS_ID) },
		webhookWithErrorWorkflow(),
	];
}

/**
 * Sets up the holding trigger, makes the key table (a first delivery) and waits for a stuck-keys
 * run that succeeded (it builds the stuck-keys index, which waits for open transactions: before
 * anything is held). Returns what the alert tests use.
 * @param {Awaited<ReturnType<typeof import('../../scripts/harness/index.mjs').startStack>>} stack
 */
export async function prepareAlerts(stack) {
	// A pool here: only a replicated key store (the failover test's) gives a follower of the primary.
	const db = /** @type {import('pg').Pool} */ (stack.keysDb);
	const alerting = stack.extraWorkflows.find((workflow) => workflow.id === ALERTING_ID);
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
	const warm = await stack.deliver(
		{ id: 'evt_alert_warm', type: 'order.created' },
		{ to: alerting },
	);
	if (warm.response.status !== 200)
		throw new Error(`the first delivery answered ${warm.response.status}: ${warm.response.text}`);
	await waitFor(
		'a stuck-keys run that succeeded',
		async () =>
			(await stack.executions.list({ workflowId: STUCK_ALERT_ID })).find(
				(e) => e.status === 'success',
			),
		{ timeoutMs: 60_000, intervalMs: 500 },
	);

	/** A session of the keys database of its own (an operator's psql, the test's gate). */
	async function session() {
		const client = await db.connect();
		return {
			query: async (sql, values) => await client.query(sql, values),
			end: async () => {
				await client.query('ROLLBACK').catch(() => undefined);
				await client.query(`SELECT pg_advisory_unlock_all()`).catch(() => undefined);
				client.release();
			},
		};
	}

	async function keyState(key) {
		const { rows } = await db.query(
			`SELECT status, attempts, (extract(epoch FROM lease_until) * 1000)::float8 AS lease_until_ms,
			        extract(epoch FROM lease_until - now())::float8 AS lease_left
			 FROM processed_events WHERE key = $1`,
			[key],
		);
		return rows[0];
	}

	return {
		alerting,
		session,
		keyState,

		/** Holds the business step of `key` (and fails it afterwards with thenFail) until open(). */
		async holdBusinessStep(key, { thenFail = false } = {}) {
			await db.query(`INSERT INTO held_business_step VALUES ($1, $2)`, [key, thenFail]);
			const gate = await session();
			await gate.query(`SELECT pg_advisory_lock(${GATE_LOCK})`);
			let opened = false;
			return {
				/** Once a held step waits at the gate, later inserts of the key go through unheld. */
				stopHoldingNewSteps: async () =>
					await db.query(`DELETE FROM held_business_step WHERE event_key = $1`, [key]),
				/** Lets the held step go on (idempotent). */
				open: async () => {
					if (opened) return;
					opened = true;
					await db.query(`DELETE FROM held_business_step WHERE event_key = $1`, [key]);
					await gate.end();
				},
			};
		},

		/** Waits (bounded) until a business step waits at the gate. */
		async businessStepHeld() {
			await waitFor(
				'the business step to be held',
				async () =>
					(
						await db.query(
							`SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND query ILIKE 'INSERT INTO business_log%' AND wait_event_type = 'Lock' AND wait_event = 'advisory'`,
							[stack.keysDatabase],
						)
					).rows.length > 0,
				{ timeoutMs: 60_000, intervalMs: 100 },
			);
		},

		/** Waits until the key's lease has ended by the database's clock. */
		async leaseEnded(key) {
			await sleep(Math.max(0, (await keyState(key)).lease_left * 1000 + 200));
			await waitFor(
				`the lease of ${key} to end`,
				async () => (await keyState(key)).lease_left < 0,
				{
					timeoutMs: 10_000,
					intervalMs: 100,
				},
			);
		},

		/** The Error Workflow's run for the failed execution (bounded wait). */
		async errorWorkflowRunFor(failedExecutionId) {
			return await waitFor(
				`the Error Workflow's run for execution ${failedExecutionId}`,
				async () =>
					(await stack.executions.list({ workflowId: ERRORS_ID })).find(
						(e) => String(e.trigger?.execution?.id) === failedExecutionId,
					),
				{ timeoutMs: 60_000, intervalMs: 250 },
			);
		},

		/** The stuck-keys template's runs so far. */
		async stuckAlertRuns() {
			return await stack.executions.list({ workflowId: STUCK_ALERT_ID });
		},
	};
}
