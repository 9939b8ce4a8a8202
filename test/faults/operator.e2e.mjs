// Fault suite, what an operator does to a running system, through the real server and the template
// in lease mode: a key row held by someone's open transaction; the database made read-only; a
// statement or lock timeout set on the role; a privilege taken away; a purge during a load of new
// reservations and takeovers; n8n's clock 10 minutes off the database's. The keys database is on a
// PostgreSQL of its own and both credentials log in as `idem_app`, a non-superuser that owns it (so
// ALTER ROLE and REVOKE apply to what the nodes use). Each fault must end in a clear error and a
// non-2xx answer (so the provider retries), nothing routed as a duplicate, and, once the operator
// fixed the cause, the next delivery processed, with nobody touching the key table. The rows of
// docs/faults.md's operator and clock matrices are compared with what these runs observe.
// Run with `npm run test:faults` (or `node --test test/faults/operator.e2e.mjs`).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';

import {
	RESERVE_OUTPUTS,
	sendEvent,
	sleep,
	startStack,
	waitFor,
} from '../../scripts/harness/index.mjs';
import { runLoad, tally } from '../../scripts/harness/load.mjs';
import {
	assertInternalProblem,
	assertMatchesDoc,
	cell,
	nodesCell,
	RESERVE_FAILURE_NODES,
	report,
	REPO_DIR,
	withLogs,
} from './support.mjs';

const ROLE = 'idem_app';
// Longer than any execution here takes from Reserve to Complete Key (the slowed business steps included).
const LEASE_SECONDS = 30;
// The nodes' bound on waiting for a key row (nodes/shared/store/sql.ts, LOCK_WAIT_MS).
const LOCK_WAIT_MS = 2_000;
const PURGE_PATH = 'faults-purge';
const PURGE_WORKFLOW_ID = 'IdemFaultsPurgeWh';
const CLOCK_PRELOAD = path.join(REPO_DIR, 'test', 'faults', 'preload', 'shift-clock.mjs');

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;
let purgeUrl;
const operatorMatrix = [];
const clockMatrix = [];

/**
 * The purge template with its Schedule Trigger replaced by a Webhook that answers with Purge Keys'
 * output, so a test can run the unchanged Purge Keys node (30 days, batches of 1,000) in the server
 * exactly when it wants and see its result.
 */
function purgeByWebhook() {
	const template = JSON.parse(
		readFileSync(path.join(REPO_DIR, 'workflows', 'purge-keys.json'), 'utf8'),
	);
	const copy = structuredClone(template);
	copy.id = PURGE_WORKFLOW_ID;
	copy.name = `${template.name} (webhook, fault suite)`;
	const trigger = copy.nodes.find((node) => node.type === 'n8n-nodes-base.scheduleTrigger');
	Object.assign(trigger, {
		name: 'Webhook',
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2,
		webhookId: randomUUID(),
		parameters: { httpMethod: 'POST', path: PURGE_PATH, responseMode: 'lastNode', options: {} },
	});
	copy.connections = { Webhook: template.connections['Schedule Trigger'] };
	return copy;
}

before(
	async () => {
		stack = await startStack({
			label: 'faults_operator',
			keyStore: { separate: true, role: ROLE },
			templateParameters: { 'Idempotency Reserve': { leaseSeconds: LEASE_SECONDS } },
			extraWorkflows: [{ workflow: purgeByWebhook() }],
		});
		purgeUrl = stack.extraWorkflows.find((w) => w.id === PURGE_WORKFLOW_ID)?.webhookUrl;
		assert.ok(purgeUrl, 'the purge copy is published');
		// The key table with its lease columns, made by the nodes themselves.
		const warm = await stack.deliver({ id: 'evt_op_warm', type: 'order.created' });
		assert.equal(warm.response.status, 200, warm.response.text);
	},
	{ timeout: 30 * 60_000 },
);

after(async () => await stack?.stop(), { timeout: 180_000 });

/** The superuser on the keys database (the operator's psql). */
/** @type {(sql: string, values?: unknown[]) => Promise<import('pg').QueryResult>} */
const admin = async (sql, values) => await stack.keysDb.query(sql, values);

/** Another session on the keys database, as an operator's psql that leaves a transaction open. */
async function session() {
	const client = new pg.Client(stack.keyServer.clientConfig(stack.keysDatabase));
	client.on('error', () => undefined);
	await client.connect();
	return {
		query: async (sql, values) => await client.query(sql, values),
		end: async () => {
			await client.query('ROLLBACK').catch(() => undefined);
			await client.end().catch(() => undefined);
		},
	};
}

/** Ends the nodes' sessions, as a restart or the pools' idle timeout would: new ones start with the new settings. */
async function endRoleSessions() {
	await admin('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [ROLE]);
	// Gives n8n's pools a moment to notice their connections closed.
	await sleep(500);
}

/** A reservation whose execution died: in progress, owned by nobody alive, lease ending in `seconds` (database clock). */
async function deadReservation(key, seconds, { firstSeen = 'now()' } = {}) {
	await admin(
		`INSERT INTO processed_events (key, first_seen, status, owner_token, lease_until)
		 VALUES ($1, ${firstSeen}, 'in_progress', 'dead-execution', now() + make_interval(secs => $2))`,
		[key, seconds],
	);
}

async function keyState(key) {
	const { rows } = await admin('SELECT status, attempts FROM processed_events WHERE key = $1', [
		key,
	]);
	return rows[0];
}

async function businessCount(key) {
	return (await stack.businessRows(key)).length;
}

async function timedDeliver(event, options) {
	const started = Date.now();
	const delivered = await stack.deliver(event, options);
	return { ...delivered, ms: Date.now() - started };
}

/** What n8n recorded as the error, with this run's port and database name replaced. */
/**
 * A setting on the role, and a dead reservation's row held FOR UPDATE by another session: delivers
 * the event while both are in place, then ends that session and resets the setting.
 */
async function deliverWithRoleSettingAndHeldRow(event, key, setting, value) {
	await deadReservation(key, -1);
	const psql = await session();
	try {
		await admin(`ALTER ROLE ${ROLE} SET ${setting} = '${value}'`);
		await endRoleSessions();
		await psql.query('BEGIN');
		await psql.query('SELECT * FROM processed_events WHERE key = $1 FOR UPDATE', [key]);
		return await timedDeliver(event);
	} finally {
		await psql.end();
		await admin(`ALTER ROLE ${ROLE} RESET ${setting}`);
	}
}

function errorText(execution) {
	return (execution?.error ?? '')
		.replaceAll(`:${stack.keyServer.port}`, ':<port>')
		.replaceAll(stack.keysDatabase, '<keys db>');
}

/**
 * A delivery that met a fault: answered 500 (the provider retries), failed at Reserve with a
 * NodeApiError, nothing routed to `false`, nothing reserved, no business step.
 */
function assertFailedAtReserve(delivered, what) {
	assertInternalProblem(delivered.response, what);
	assert.equal(delivered.execution.status, 'error', what);
	// Nothing went on through `new` or `duplicate`: only the error output's answer, then the failure.
	assert.deepEqual(delivered.execution.nodesRun, RESERVE_FAILURE_NODES, what);
}

function matrixRow(id, fault, failed, hint, table, fixed, fixText) {
	return [
		id,
		fault,
		String(failed.response.status),
		cell(`${nodesCell(failed.execution)}: \`${errorText(failed.execution)}\``),
		cell(`\`${hint}\``),
		table,
		cell(
			`${fixText}; next delivery: ${fixed.response.status} \`${fixed.response.json?.status}\`${fixed.attempt ? ` (attempt ${fixed.attempt})` : ''}`,
		),
		'no',
	];
}

test(
	`a key row held by someone's open transaction: that key's delivery fails after at most ${LOCK_WAIT_MS / 1000} s naming the key, other keys are not held up, and after the transaction ends the next delivery is processed`,
	{ timeout: 180_000 },
	() =>
		withLogs(stack, async () => {
			// L1: an operator's `BEGIN; DELETE …` on a completed key, left open.
			const event = { id: 'evt_op_locked', type: 'order.created' };
			const key = `evt:${event.id}`;
			assert.equal((await stack.deliver(event)).response.status, 200);
			const psql = await session();
			let held;
			let other;
			try {
				await psql.query('BEGIN');
				await psql.query('DELETE FROM processed_events WHERE key = $1', [key]);
				[held, other] = await Promise.all([
					timedDeliver(event),
					timedDeliver({ id: 'evt_op_not_held', type: 'order.created' }),
				]);
			} finally {
				await psql.end();
			}
			assertFailedAtReserve(held, 'L1');
			const reserveMs =
				held.execution.endTime('Idempotency Reserve') -
				held.execution.startTime('Idempotency Reserve');
			assert.ok(
				reserveMs >= LOCK_WAIT_MS - 100 && reserveMs < LOCK_WAIT_MS + 2_000,
				`Reserve waited ${reserveMs} ms`,
			);
			assert.equal(
				held.execution.error,
				`Key "${key}" is held by another transaction: gave up waiting for it after the lock timeout (at most ${LOCK_WAIT_MS / 1000} s), so PostgreSQL could not reserve the keys`,
			);
			assert.match(held.execution.errorDescription, /idle in transaction/);
			assert.equal(other.response.status, 200);
			assert.equal(other.response.json.status, 'processed');
			// n8n's own time for the node (a wait for the held row would be the whole bound).
			const otherReserveMs =
				other.execution.endTime('Idempotency Reserve') -
				other.execution.startTime('Idempotency Reserve');
			assert.ok(otherReserveMs < LOCK_WAIT_MS, `the other key's Reserve took ${otherReserveMs} ms`);
			assert.equal(await businessCount(key), 1);
			// The transaction rolled back (the operator's ROLLBACK or their session ending): the event stays completed.
			const afterRollback = await stack.deliver(event);
			assert.equal(afterRollback.response.status, 200);
			assert.equal(afterRollback.response.json.status, 'duplicate');
			assert.equal(await businessCount(key), 1);
			operatorMatrix.push(
				matrixRow(
					'L1',
					'`BEGIN; DELETE FROM processed_events WHERE key = …` left open on a completed key',
					held,
					'idle in transaction',
					'unchanged (the DELETE is not committed)',
					afterRollback,
					'transaction rolled back',
				),
			);

			// L2: a dead reservation's row locked FOR UPDATE by someone: the takeover waits for it, bounded.
			const deadEvent = { id: 'evt_op_for_update', type: 'order.created' };
			const deadKey = `evt:${deadEvent.id}`;
			await deadReservation(deadKey, -1);
			const psql2 = await session();
			let locked;
			try {
				await psql2.query('BEGIN');
				await psql2.query('SELECT * FROM processed_events WHERE key = $1 FOR UPDATE', [deadKey]);
				locked = await timedDeliver(deadEvent);
				await psql2.query('COMMIT');
			} finally {
				await psql2.end();
			}
			assertFailedAtReserve(locked, 'L2');
			assert.match(
				locked.execution.error,
				new RegExp(`^Key "${deadKey}" is held by another transaction`),
			);
			assert.deepEqual(await keyState(deadKey), { status: 'in_progress', attempts: 1 });
			const takenOver = await stack.deliver(deadEvent);
			assert.equal(takenOver.response.status, 200);
			assert.deepEqual(await keyState(deadKey), { status: 'completed', attempts: 2 });
			operatorMatrix.push(
				matrixRow(
					'L2',
					'`BEGIN; SELECT … FOR UPDATE` left open on a key whose lease ended (its execution died)',
					locked,
					'idle in transaction',
					'key stays `in_progress`, attempt 1',
					{ ...takenOver, attempt: 2 },
					'transaction committed',
				),
			);

			// L3: a completed key locked FOR UPDATE: a retry only reads it, so it does not wait at all.
			const psql3 = await session();
			let duplicate;
			try {
				await psql3.query('BEGIN');
				await psql3.query('SELECT * FROM processed_events WHERE key = $1 FOR UPDATE', [key]);
				duplicate = await timedDeliver(event);
			} finally {
				await psql3.end();
			}
			assert.equal(duplicate.response.status, 200);
			assert.equal(duplicate.response.json.status, 'duplicate');
			const duplicateReserveMs =
				duplicate.execution.endTime('Idempotency Reserve') -
				duplicate.execution.startTime('Idempotency Reserve');
			assert.ok(duplicateReserveMs < LOCK_WAIT_MS, `Reserve took ${duplicateReserveMs} ms`);
			operatorMatrix.push([
				'L3',
				'`BEGIN; SELECT … FOR UPDATE` left open on a completed key',
				String(duplicate.response.status),
				cell(nodesCell(duplicate.execution)),
				'—',
				'unchanged',
				'(no wait: a duplicate is only read, never locked)',
				'no',
			]);
			report('operator: row locks', {
				heldReserveMs: reserveMs,
				heldAnsweredMs: held.ms,
				otherKeyReserveMs: otherReserveMs,
				otherKeyAnsweredMs: other.ms,
				lockedTakeoverAnsweredMs: locked.ms,
				duplicateOfLockedRowReserveMs: duplicateReserveMs,
			});
		}),
);

test(
	'read-only database, statement and lock timeouts on the role, a privilege revoked: each a clear error and a 500, nothing reserved; after the fix the next delivery is processed with no key touched by hand',
	{ timeout: 240_000 },
	() =>
		withLogs(stack, async () => {
			const database = `"${stack.keysDatabase}"`;

			// O1: read-only for every session at once (ALTER SYSTEM and a reload reach open sessions too).
			{
				const event = { id: 'evt_op_ro_system', type: 'order.created' };
				let failed;
				try {
					await admin('ALTER SYSTEM SET default_transaction_read_only = on');
					await admin('SELECT pg_reload_conf()');
					await sleep(500);
					failed = await stack.deliver(event);
				} finally {
					await admin('ALTER SYSTEM RESET default_transaction_read_only');
					await admin('SELECT pg_reload_conf()');
					await sleep(500);
				}
				assertFailedAtReserve(failed, 'O1');
				assert.match(
					failed.execution.error,
					/^PostgreSQL at 127\.0\.0\.1:\d+ is read-only, so it could not reserve the keys$/,
				);
				assert.match(failed.execution.errorDescription, /RESET default_transaction_read_only/);
				assert.equal(await keyState(`evt:${event.id}`), undefined);
				const fixed = await stack.deliver(event);
				assert.equal(fixed.response.status, 200, fixed.response.text);
				assert.equal(fixed.response.json.status, 'processed');
				operatorMatrix.push(
					matrixRow(
						'O1',
						'`ALTER SYSTEM SET default_transaction_read_only = on` + `pg_reload_conf()` (every session, open ones too)',
						failed,
						'RESET default_transaction_read_only',
						'nothing reserved',
						fixed,
						'reset and reloaded',
					),
				);
			}

			// O2 / O3: read-only for the keys database: open sessions keep the setting they started with.
			{
				const open = { id: 'evt_op_ro_db_open', type: 'order.created' };
				const event = { id: 'evt_op_ro_db', type: 'order.created' };
				let stillWrites;
				let failed;
				try {
					await admin(`ALTER DATABASE ${database} SET default_transaction_read_only = on`);
					stillWrites = await stack.deliver(open);
					await endRoleSessions();
					failed = await stack.deliver(event);
				} finally {
					await admin(`ALTER DATABASE ${database} RESET default_transaction_read_only`);
				}
				assert.equal(stillWrites.response.status, 200, stillWrites.response.text);
				assert.equal(stillWrites.response.json.status, 'processed');
				operatorMatrix.push([
					'O2',
					"`ALTER DATABASE <keys db> SET default_transaction_read_only = on`, the pool's sessions left open",
					String(stillWrites.response.status),
					cell(`${nodesCell(stillWrites.execution)}`),
					'—',
					'1 row, `completed`',
					'(open sessions keep the setting they started with; new ones get it)',
					'no',
				]);
				assertFailedAtReserve(failed, 'O3');
				assert.match(failed.execution.error, /is read-only, so it could not reserve the keys/);
				// No session ended after the fix: the read-only one was dropped by the pool when its statement failed.
				const fixed = await stack.deliver(event);
				assert.equal(fixed.response.status, 200, fixed.response.text);
				assert.equal(fixed.response.json.status, 'processed');
				operatorMatrix.push(
					matrixRow(
						'O3',
						'the same, after the sessions ended (new sessions are read-only)',
						failed,
						'RESET default_transaction_read_only',
						'nothing reserved',
						fixed,
						'`ALTER DATABASE … RESET`, no session ended',
					),
				);
			}

			// O4: statement_timeout on the role, shorter than a row wait.
			{
				const event = { id: 'evt_op_stmt_timeout', type: 'order.created' };
				const key = `evt:${event.id}`;
				const failed = await deliverWithRoleSettingAndHeldRow(
					event,
					key,
					'statement_timeout',
					'500ms',
				);
				assertFailedAtReserve(failed, 'O4');
				assert.equal(
					errorText(failed.execution),
					`PostgreSQL cancelled the statement to reserve the keys: it ran longer than the statement_timeout set for user "${ROLE}" or database "<keys db>"`,
				);
				assert.match(failed.execution.errorDescription, /RESET statement_timeout/);
				assert.deepEqual(await keyState(key), { status: 'in_progress', attempts: 1 });
				const fixed = await stack.deliver(event);
				assert.equal(fixed.response.status, 200, fixed.response.text);
				assert.equal(fixed.response.json.status, 'processed');
				assert.deepEqual(await keyState(key), { status: 'completed', attempts: 2 });
				operatorMatrix.push(
					matrixRow(
						'O4',
						`\`ALTER ROLE ${ROLE} SET statement_timeout = '500ms'\`, sessions ended, a dead reservation's row held \`FOR UPDATE\``,
						failed,
						'RESET statement_timeout',
						'dead reservation unchanged (`in_progress`, attempt 1)',
						{ ...fixed, attempt: 2 },
						'role reset, lock released',
					),
				);
			}

			// O5: lock_timeout on the role, shorter than the nodes' own bound: the shorter one applies.
			{
				const event = { id: 'evt_op_lock_timeout', type: 'order.created' };
				const key = `evt:${event.id}`;
				const failed = await deliverWithRoleSettingAndHeldRow(event, key, 'lock_timeout', '300ms');
				assertFailedAtReserve(failed, 'O5');
				const reserveMs =
					failed.execution.endTime('Idempotency Reserve') -
					failed.execution.startTime('Idempotency Reserve');
				assert.ok(
					reserveMs < LOCK_WAIT_MS - 500,
					`Reserve waited ${reserveMs} ms: the role's 300 ms should apply`,
				);
				assert.match(
					failed.execution.error,
					new RegExp(`^Key "${key}" is held by another transaction`),
				);
				const fixed = await stack.deliver(event);
				assert.equal(fixed.response.status, 200, fixed.response.text);
				assert.deepEqual(await keyState(key), { status: 'completed', attempts: 2 });
				operatorMatrix.push(
					matrixRow(
						'O5',
						`\`ALTER ROLE ${ROLE} SET lock_timeout = '300ms'\`, sessions ended, a dead reservation's row held \`FOR UPDATE\``,
						failed,
						'idle in transaction',
						'dead reservation unchanged (`in_progress`, attempt 1)',
						{ ...fixed, attempt: 2 },
						'lock released',
					),
				);
				report('operator: role lock_timeout 300ms', { reserveMs, answeredMs: failed.ms });
			}

			// O6: INSERT, UPDATE and DELETE revoked from the role.
			{
				const event = { id: 'evt_op_revoked', type: 'order.created' };
				let failed;
				try {
					await admin(`REVOKE INSERT, UPDATE, DELETE ON processed_events FROM ${ROLE}`);
					failed = await stack.deliver(event);
				} finally {
					await admin(`GRANT INSERT, UPDATE, DELETE ON processed_events TO ${ROLE}`);
				}
				assertFailedAtReserve(failed, 'O6');
				assert.equal(
					failed.execution.error,
					`User "${ROLE}" lacks a privilege to reserve the keys in "public"."processed_events": permission denied for table processed_events`,
				);
				assert.match(
					failed.execution.errorDescription,
					/GRANT SELECT, INSERT, UPDATE, DELETE ON "public"\."processed_events" TO "idem_app"/,
				);
				assert.equal(await keyState(`evt:${event.id}`), undefined);
				const fixed = await stack.deliver(event);
				assert.equal(fixed.response.status, 200, fixed.response.text);
				assert.equal(fixed.response.json.status, 'processed');
				operatorMatrix.push(
					matrixRow(
						'O6',
						`\`REVOKE INSERT, UPDATE, DELETE ON processed_events FROM ${ROLE}\``,
						failed,
						`GRANT SELECT, INSERT, UPDATE, DELETE ON "public"."processed_events" TO "${ROLE}"`,
						'nothing reserved',
						fixed,
						'granted again',
					),
				);
			}
		}),
);

test('docs/faults.md operator matrix matches what these runs observed', () => {
	assertMatchesDoc('operator-matrix', operatorMatrix);
	assert.equal(operatorMatrix.length, 9, 'the row-lock and operator tests above all ran');
});

const OLD_COMPLETED = 20_000;
const OLD_TAKEN_OVER = 12;
const NEW_EVENTS = 120;
const SLOW_SECONDS = 10;

test(
	`purge of ${OLD_COMPLETED} keys past the retention during new reservations and takeovers of old events: no reservation waits on it, no live lease deleted, the purge finishes`,
	{ timeout: 300_000 },
	() =>
		withLogs(stack, async () => {
			// Keys from 40 days ago: completed ones (the purge's work) and dead reservations whose events
			// are retried now, so they are taken over (new lease) while their first_seen is past the retention.
			await admin(
				`INSERT INTO processed_events (key, first_seen, status, completed_at)
			 SELECT 'evt:evt_op_old_' || g, now() - interval '40 days', 'completed', now() - interval '40 days' FROM generate_series(1, $1::int) g`,
				[OLD_COMPLETED],
			);
			const oldEvents = Array.from({ length: OLD_TAKEN_OVER }, (_, i) => ({
				id: `evt_op_old_dead_${i}`,
				type: 'slow.purge',
			}));
			for (const event of oldEvents)
				await deadReservation(`evt:${event.id}`, -1, { firstSeen: "now() - interval '40 days'" });
			// Their business step sleeps, so their leases are live while the purge runs.
			await admin(`CREATE OR REPLACE FUNCTION faults_slow_purge() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN PERFORM pg_sleep(${SLOW_SECONDS}); RETURN NEW; END $$`);
			await admin(`CREATE TRIGGER faults_slow_purge BEFORE INSERT ON business_log
			FOR EACH ROW WHEN (NEW.event_type = 'slow.purge') EXECUTE FUNCTION faults_slow_purge()`);
			try {
				const takeovers = runLoad(
					stack.webhookUrl,
					oldEvents.map((event) => [{ body: event, tag: event }]),
					{ concurrency: OLD_TAKEN_OVER, timeoutMs: 120_000, deadlineMs: 180_000 },
				);
				await waitFor(
					`the ${OLD_TAKEN_OVER} takeovers to be inside their business step`,
					async () => {
						const { rows } = await admin(
							`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query ILIKE 'INSERT INTO business_log%'`,
						);
						return rows[0].n === OLD_TAKEN_OVER;
					},
					{ timeoutMs: 60_000, intervalMs: 100 },
				);
				const { rows: leased } = await admin(
					`SELECT count(*)::int AS n FROM processed_events WHERE key LIKE 'evt:evt_op_old_dead_%' AND status = 'in_progress' AND attempts = 2 AND lease_until > now()`,
				);
				assert.equal(
					leased[0].n,
					OLD_TAKEN_OVER,
					'every old event was taken over and holds a live lease',
				);

				// The purge and a load of new events, at the same moment.
				const newEvents = Array.from({ length: NEW_EVENTS }, (_, i) => ({
					id: `evt_op_new_${i}`,
					type: 'order.created',
				}));
				const purgeStarted = Date.now();
				const purging = sendEvent(purgeUrl, {}, { sign: false, timeoutMs: 120_000 }).then(
					(response) => ({ response, ms: Date.now() - purgeStarted }),
				);
				const load = await runLoad(
					stack.webhookUrl,
					newEvents.map((event) => [{ body: event, tag: event }]),
					{ concurrency: 8, timeoutMs: 60_000, deadlineMs: 120_000 },
				);
				const purge = await purging;
				assert.equal(purge.response.status, 200, purge.response.text);
				assert.equal(purge.response.json.deleted, OLD_COMPLETED);
				assert.equal(purge.response.json.batches, OLD_COMPLETED / 1000 + 1);

				// Nothing still needed was deleted: the live leases (first_seen past the retention) and every new key.
				const { rows: kept } = await admin(
					`SELECT count(*)::int AS n FROM processed_events WHERE key LIKE 'evt:evt_op_old_dead_%'`,
				);
				assert.equal(kept[0].n, OLD_TAKEN_OVER, 'no live lease was purged');
				assert.deepEqual(load.notSent, []);
				assert.deepEqual(tally(load.results.map((r) => `${r.status} ${r.json?.status}`)), {
					'200 processed': NEW_EVENTS,
				});

				// The takeovers finish: Complete Key finds its row.
				const taken = await takeovers;
				assert.deepEqual(tally(taken.results.map((r) => `${r.status} ${r.json?.status}`)), {
					'200 processed': OLD_TAKEN_OVER,
				});
				const { rows: states } = await admin(
					`SELECT status, attempts, count(*)::int AS n FROM processed_events WHERE key LIKE 'evt:evt_op_old_dead_%' OR key LIKE 'evt:evt_op_new_%' GROUP BY 1, 2 ORDER BY 2`,
				);
				assert.deepEqual(states, [
					{ status: 'completed', attempts: 1, n: NEW_EVENTS },
					{ status: 'completed', attempts: 2, n: OLD_TAKEN_OVER },
				]);

				// How long the new reservations took while the purge ran (n8n's records of Reserve).
				const requestIds = new Set(load.results.map((r) => r.requestId));
				const recorded = await waitFor(
					'n8n to record the new events',
					async () => {
						const mine = (
							await stack.executions.list({ workflowId: stack.webhookWorkflowId })
						).filter((e) => requestIds.has(e.requestId));
						return mine.length === requestIds.size ? mine : undefined;
					},
					{ timeoutMs: 60_000, intervalMs: 1_000 },
				);
				const reserveMs = recorded
					.map((e) => e.endTime('Idempotency Reserve') - e.startTime('Idempotency Reserve'))
					.sort((a, b) => a - b);
				const duringPurge = load.results.filter((r) => r.sentAt < purgeStarted + purge.ms).length;
				assert.ok(duringPurge > 0, 'some new events were sent while the purge ran');
				report('operator: purge during load', {
					purged: purge.response.json.deleted,
					batches: purge.response.json.batches,
					purgeAnsweredMs: purge.ms,
					newEvents: NEW_EVENTS,
					newEventsSentDuringPurge: duringPurge,
					loadSeconds: Number(load.seconds.toFixed(1)),
					reserveMsP50: reserveMs[Math.floor(reserveMs.length / 2)],
					reserveMsMax: reserveMs.at(-1),
					takeoversKept: kept[0].n,
				});
			} finally {
				await admin('DROP TRIGGER IF EXISTS faults_slow_purge ON business_log');
			}
		}),
);

/** Seconds between n8n's clock and the database's, seen in what n8n recorded for an execution. */
async function n8nClockOffsetSeconds(execution) {
	const { rows } = await stack.n8nDb.query('SELECT extract(epoch FROM now())::float8 AS now');
	return Math.round((new Date(execution.startedAt).getTime() / 1000 - rows[0].now) / 60) * 60;
}

for (const shiftMinutes of [10, -10]) {
	test(
		`n8n's clock ${shiftMinutes > 0 ? '+' : ''}${shiftMinutes} min off the database's: leases, Retry-After, takeover and purge follow the database clock`,
		{ timeout: 300_000 },
		() =>
			withLogs(stack, async () => {
				const shiftMs = shiftMinutes * 60_000;
				const tag = shiftMinutes > 0 ? 'ahead' : 'behind';
				const id = (n) => `C${shiftMinutes > 0 ? '+' : '−'}${n}`;
				await stack.restartN8n({
					env: {
						NODE_OPTIONS: `--import=${CLOCK_PRELOAD}`,
						N8N_TEST_CLOCK_SHIFT_MS: String(shiftMs),
					},
				});
				// The sender's clock agrees with n8n's here (else the signature check refuses it, see C·1).
				const signedAt = () => Math.floor((Date.now() + shiftMs) / 1000);

				// C·1: a sender whose clock is right, n8n's 10 minutes off: the tolerance (300 s) refuses it.
				const honest = await stack.deliver({
					id: `evt_clock_${tag}_honest`,
					type: 'order.created',
				});
				assert.equal(honest.response.status, 401, honest.response.text);
				const reason = honest.execution.items(
					'Idempotency Reserve',
					RESERVE_OUTPUTS.invalidSignature,
				)[0]?.signature?.reason;
				assert.equal(reason, 'timestamp_out_of_tolerance');
				const offset = await n8nClockOffsetSeconds(honest.execution);
				assert.equal(offset, shiftMinutes * 60, `n8n's clock is off by ${offset} s`);
				clockMatrix.push([
					id(1),
					'delivery signed with the true time',
					`401, Reserve → \`invalid signature\` (\`${reason}\`)`,
					"nothing reserved (the signature check compares with n8n's clock: keep it in sync)",
				]);

				// C·2: a new event: its lease is the database's now() + lease, whatever n8n's clock says.
				const event = { id: `evt_clock_${tag}_new`, type: 'order.created' };
				const created = await stack.deliver(event, { signedAt: signedAt() });
				assert.equal(created.response.status, 200, created.response.text);
				const reserved = created.execution.items('Idempotency Reserve', 0)[0].idempotency;
				const { rows: leaseRows } = await admin(
					`SELECT extract(epoch FROM first_seen)::float8 AS first_seen FROM processed_events WHERE key = $1`,
					[`evt:${event.id}`],
				);
				// Both come from the same statement's now(): exactly the lease apart, on the database clock.
				const leaseSeconds = Date.parse(reserved.leaseUntil) / 1000 - leaseRows[0].first_seen;
				assert.ok(
					Math.abs(leaseSeconds - LEASE_SECONDS) < 0.005,
					`leaseUntil − first_seen = ${leaseSeconds} s`,
				);
				clockMatrix.push([
					id(2),
					'new event',
					"200 `processed`; Reserve's `leaseUntil` − the row's `first_seen` = the lease",
					`${LEASE_SECONDS} s, both from the database's now()`,
				]);

				// C·3: a dead reservation whose lease ends in 6 s by the database clock.
				const dead = { id: `evt_clock_${tag}_dead`, type: 'order.created' };
				await deadReservation(`evt:${dead.id}`, 6);
				const early = await stack.deliver(dead, { signedAt: signedAt() });
				assert.equal(early.response.status, 409, early.response.text);
				const retryAfter = Number(early.response.headers['retry-after']);
				assert.ok(retryAfter >= 1 && retryAfter <= 6, `Retry-After ${retryAfter}`);
				await sleep((retryAfter + 1) * 1000);
				const late = await stack.deliver(dead, { signedAt: signedAt() });
				assert.equal(late.response.status, 200, late.response.text);
				assert.equal(late.response.json.status, 'processed');
				assert.deepEqual(await keyState(`evt:${dead.id}`), { status: 'completed', attempts: 2 });
				clockMatrix.push([
					id(3),
					'retry of a dead reservation whose lease ends in 6 s (database clock)',
					'409 `in_progress`, Retry-After 1–6; after it: 200 `processed` (attempt 2)',
					'taken over once, when the database says the lease ended',
				]);

				// C·4: purge: 30 days counted back from the database's now(), not n8n's.
				const keep = `evt:evt_clock_${tag}_keep`;
				const drop = `evt:evt_clock_${tag}_drop`;
				await admin(
					`INSERT INTO processed_events (key, first_seen) VALUES ($1, now() - interval '30 days' + interval '5 minutes'), ($2, now() - interval '30 days' - interval '5 minutes')`,
					[keep, drop],
				);
				const purge = await sendEvent(purgeUrl, {}, { sign: false, timeoutMs: 60_000 });
				assert.equal(purge.status, 200, purge.text);
				const { rows: cutoffRows } = await admin(
					`SELECT extract(epoch FROM now() - interval '30 days')::float8 AS cutoff`,
				);
				assert.ok(
					Math.abs(Date.parse(purge.json.cutoff) / 1000 - cutoffRows[0].cutoff) < 30,
					`cutoff ${purge.json.cutoff}`,
				);
				assert.deepEqual(
					(
						await admin('SELECT key FROM processed_events WHERE key = ANY($1) ORDER BY key', [
							[keep, drop],
						])
					).rows,
					[{ key: keep }],
				);
				clockMatrix.push([
					id(4),
					'Purge Keys (30 days) over keys 30 days − 5 min and 30 days + 5 min old (database clock)',
					'the older one deleted, the other kept; `cutoff` = database now() − 30 days',
					"n8n's clock not used",
				]);
				report(`operator: clock ${shiftMinutes} min`, {
					n8nClockOffsetSeconds: offset,
					retryAfter,
					purgeCutoff: purge.json.cutoff,
				});
			}),
	);
}

test('docs/faults.md clock matrix matches what these runs observed', () => {
	assertMatchesDoc('clock-matrix', clockMatrix);
	assert.equal(clockMatrix.length, 8, 'both clock tests ran');
});
