// The answer-first template (workflows/answer-first.json) in a real n8n, for the suites that run it:
// test/e2e/answer-first.e2e.mjs (its own stack) and test/faults/queue-mode.e2e.mjs (queue mode, two
// workers). The published copy differs from the file only where a test needs seconds, not minutes:
// Reserve's and the trigger's lease, the trigger's Check Every, Backoff and Max Attempts, and Also
// Store Headers (the harness's request id, so a redriven execution names the request it replays).
// The business step's speed and failures come from a trigger on business_log (business_behaviour),
// as in builtin.e2e.mjs, so the template's own Postgres node is what runs slowly or fails.
import assert from 'node:assert/strict';

import { BUSINESS_STEP, REQUEST_ID_HEADER, waitFor } from '../../scripts/harness/index.mjs';
import { importableCopy } from '../../scripts/harness/templates.mjs';

/** @typedef {{ query: (...args: any[]) => any }} Queryable  a pg Pool, or the harness's stand-in */

export const ANSWER_FIRST_TEMPLATE = 'workflows/answer-first.json';
export const REDRIVE_TRIGGER = 'Redrive Unfinished Keys';
export const DEAD_LETTER_ALERT = 'Dead Letter Alert (replace me)';
export const COMPLETE = 'Complete Key';
export const RESPOND_ACCEPTED = 'Respond 200 accepted';

/**
 * The template as published by a test: its leases, checks and attempts short enough for a test.
 * @param {{ id: string, leaseSeconds: number, checkEverySeconds: number, maxAttempts: number }} settings
 */
export function answerFirstCopy({ id, leaseSeconds, checkEverySeconds, maxAttempts }) {
	const workflow = importableCopy(ANSWER_FIRST_TEMPLATE, id);
	const node = (/** @type {string} */ name) => {
		const found = workflow.nodes.find((/** @type {any} */ candidate) => candidate.name === name);
		if (!found) throw new Error(`${ANSWER_FIRST_TEMPLATE} has no node "${name}"`);
		return found;
	};
	const reserve = node('Idempotency Reserve');
	assert.equal(
		reserve.parameters.answerFirst,
		true,
		`${ANSWER_FIRST_TEMPLATE}: Reserve no longer answers first`,
	);
	reserve.parameters = { ...reserve.parameters, leaseSeconds, storedHeaders: REQUEST_ID_HEADER };
	const trigger = node(REDRIVE_TRIGGER);
	trigger.parameters = {
		...trigger.parameters,
		checkEverySeconds,
		leaseSeconds,
		backoffSeconds: 0,
		maxAttempts,
	};
	return workflow;
}

/**
 * Makes PostgreSQL cancel the statement of a client that died: a kill -9'd n8n's sleeping business
 * insert must be cancelled, not committed after its sleep. client_connection_check_interval only
 * reaches connections opened after this: call it before the stack's first execution.
 * @param {Queryable} db
 * @param {string} database
 */
export async function cancelDeadClientsStatements(db, database) {
	await db.query(`ALTER DATABASE "${database}" SET client_connection_check_interval = '200ms'`);
}

/**
 * Makes the business_log insert behave per event type (behave(): sleep, or fail), through a trigger
 * on business_log, so the template's own Postgres node is what runs slowly or fails.
 * @param {Queryable} db
 */
export async function installBusinessBehaviour(db) {
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
}

/**
 * How the business step behaves for one event type from now on: sleeps this long, or fails.
 * @param {Queryable} db
 * @param {string} type
 * @param {{ sleep?: number, fail?: boolean }} how
 */
export async function behave(db, type, how) {
	await db.query(
		`INSERT INTO business_behaviour VALUES ($1, $2, $3)
		 ON CONFLICT (event_type) DO UPDATE SET sleep_seconds = $2, fail = $3`,
		[type, how.sleep ?? null, how.fail ?? false],
	);
}

/**
 * The event's key row.
 * @param {Queryable} db
 * @param {string} key
 */
export async function keyRow(db, key) {
	const { rows } = await db.query(
		`SELECT status, attempts, owner_token, lease_until, delivery IS NOT NULL AS stored
		 FROM processed_events WHERE key = $1`,
		[key],
	);
	return rows[0];
}

/**
 * The executions the Redrive Trigger started for this key on its redrive output.
 * @param {Array<import('../../scripts/harness/records.mjs').RecordedExecution>} executions
 * @param {string} key
 */
export function redrivesOf(executions, key) {
	return executions.filter(
		(execution) =>
			execution.nodesRun[0] === REDRIVE_TRIGGER &&
			execution.items(REDRIVE_TRIGGER, 0).some((item) => item.idempotency?.key === key),
	);
}

/**
 * Waits until the Redrive Trigger completed the key, then for the one execution it started for the
 * key (since `since`, epoch ms), which must have run the business step and Complete Key and answered
 * nobody. Returns the key row, when it was seen completed, and that execution.
 * @param {{ db: Queryable, listExecutions: () => Promise<Array<import('../../scripts/harness/records.mjs').RecordedExecution>>, key: string, since?: number, timeoutMs: number }} options
 */
export async function completedByOneRedrive({ db, listExecutions, key, since = 0, timeoutMs }) {
	const row = await waitFor(
		`the Redrive Trigger to complete ${key}`,
		async () => {
			const found = await keyRow(db, key);
			return found?.status === 'completed' ? found : undefined;
		},
		{ timeoutMs, intervalMs: 250 },
	);
	const completedAt = Date.now();
	const [redrive, ...more] = await waitFor(
		'the redriven execution to be recorded',
		async () => {
			const found = redrivesOf(await listExecutions(), key).filter(
				(execution) => new Date(execution.startedAt).getTime() >= since,
			);
			return found.length > 0 ? found : undefined;
		},
		{ timeoutMs: 30_000, intervalMs: 250 },
	);
	assert.deepEqual(more, [], 'one redrive');
	assert.equal(redrive.status, 'success', redrive.error);
	assert.ok(
		[BUSINESS_STEP, COMPLETE].every((name) => redrive.nodesRun.includes(name)),
		redrive.nodesRun.join(' → '),
	);
	assert.ok(!redrive.nodesRun.includes(RESPOND_ACCEPTED), 'a redrive answers nobody');
	return { row, completedAt, redrive };
}
