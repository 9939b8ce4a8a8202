// End-to-end behind a connection pooler: the packed package in a real n8n 2.41.1 server, both
// Postgres credentials reaching the keys database through PgBouncer in transaction mode (Debian's
// pgbouncer, started by the harness on 127.0.0.1), with fewer server connections
// (default_pool_size 3) than the credentials' pools (10 and 20). In transaction mode consecutive
// statements of one client may run on different server connections, so anything that relies on
// session state breaks there. The template (lease mode) and the simple-mode workflow run the seed
// sequence and a 64-way burst; the credential's Test button is pressed through n8n's REST API.
// Run with `npm run test:e2e:pooler`.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';

import {
	BUSINESS_STEP,
	deliverWithFailingBusinessStep,
	runBurst,
	runSeedSequence,
	sendEvent,
	startStack,
	withStackLogs,
} from '../../scripts/harness/index.mjs';
import { branchOf } from '../../scripts/harness/records.mjs';

const DEFAULT_POOL_SIZE = 3;
const SIMPLE_WORKFLOW = { path: 'bench/workflows/package-simple.json', id: 'PoolerSimple00001' };
const SIMPLE_TABLE = 'processed_events_simple';
const EXACTLY_ONCE_WORKFLOW = {
	path: 'workflows/exactly-once-postgres.json',
	id: 'PoolerExactly0001',
};
const BROWSER_ID = 'pooler-e2e-browser';

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;
let simple;
/** The exactly-once template: its SQL and the completion in one transaction, through PgBouncer. */
let exactlyOnce;

const withLogs = (fn) => withStackLogs(stack, fn);
const ran = (execution, node) => execution.nodesRun.includes(node);

before(
	async () => {
		stack = await startStack({
			label: 'pooler',
			pooler: { defaultPoolSize: DEFAULT_POOL_SIZE, maxClientConn: 100 },
			extraWorkflows: [SIMPLE_WORKFLOW, EXACTLY_ONCE_WORKFLOW],
		});
		simple = stack.extraWorkflows.find((workflow) => workflow.id === SIMPLE_WORKFLOW.id);
		exactlyOnce = stack.extraWorkflows.find((workflow) => workflow.id === EXACTLY_ONCE_WORKFLOW.id);
	},
	{ timeout: 60 * 60_000 },
);

after(
	async () => {
		await stack?.stop();
	},
	{ timeout: 120_000 },
);

/** Transactions PgBouncer has passed to the keys database so far. */
const pooledTransactions = async () => await stack.pooler.transactions(stack.keysDatabase);

/** PgBouncer's log lines above LOG level (WARNING, ERROR, FATAL): there must be none. */
function poolerProblems() {
	return readFileSync(stack.pooler.logFile, 'utf8')
		.split('\n')
		.filter((line) => /\] (WARNING|ERROR|FATAL) /.test(line));
}

async function keysIn(table, key) {
	const { rows } = await stack.keysDb.query(`SELECT key FROM ${table} WHERE key = $1`, [key]);
	return rows.length;
}

/** Posts to the simple-mode workflow and waits for n8n's record of it. */
async function deliverSimple(body, options) {
	const response = await sendEvent(simple.webhookUrl, body, options);
	const execution = await stack.executions.waitForRequest(simple.id, response.requestId);
	return { response, execution, branch: branchOf(execution) };
}

test(
	'lease mode, seed sequence through PgBouncer: A processed, A again a completed duplicate, B processed',
	{ timeout: 180_000 },
	() =>
		withLogs(async () => {
			const transactionsBefore = await pooledTransactions();
			const [first, repeat, other] = await runSeedSequence(stack);
			assert.deepEqual(
				[first, repeat, other].map((step) => [step.status, step.answer]),
				[
					// Complete Key answers a new event with a fixed body (no expression per execution).
					[200, { status: 'processed' }],
					[200, { status: 'duplicate', key: 'evt:evt_A' }],
					[200, { status: 'processed' }],
				],
			);
			for (const step of [first, other]) {
				assert.deepEqual(step.execution.nodesRun, [
					'Webhook',
					'Idempotency Reserve',
					BUSINESS_STEP,
					'Complete Key',
				]);
			}
			assert.equal(
				repeat.execution.items('Idempotency Reserve', 1)[0].idempotency.status,
				'completed',
			);
			assert.ok([first, repeat, other].every((step) => step.execution.status === 'success'));
			assert.deepEqual([first.businessRows, repeat.businessRows, other.businessRows], [1, 1, 2]);
			assert.deepEqual(
				(await stack.keysDb.query('SELECT key, status FROM processed_events ORDER BY key')).rows,
				[
					{ key: 'evt:evt_A', status: 'completed' },
					{ key: 'evt:evt_B', status: 'completed' },
				],
			);
			// Table check and creation, 2 × (reserve, business insert, complete), 1 reserve, at least.
			assert.ok(
				(await pooledTransactions()) - transactionsBefore >= 8,
				'the statements went through PgBouncer',
			);
			assert.deepEqual(poolerProblems(), []);
		}),
);

test(
	'lease mode, 64 simultaneous deliveries through PgBouncer on 3 server connections: one processed, the rest 409 or duplicate',
	{ timeout: 300_000 },
	() =>
		withLogs(async () => {
			const event = { id: 'evt_pooled_burst', type: 'invoice.paid' };
			const key = 'evt:evt_pooled_burst';
			const { answers, processed, inFlight, duplicates, executions } = await runBurst(
				stack,
				event,
				{ label: 'pooler' },
			);
			assert.equal(processed.length, 1, `answers: ${JSON.stringify(answers)}`);
			assert.equal(inFlight.length + duplicates.length, 63, `answers: ${JSON.stringify(answers)}`);
			for (const r of inFlight)
				assert.equal(r.headers['retry-after'], String(r.json.retryAfterSeconds));

			assert.ok(
				executions.every((e) => e.status === 'success'),
				'no execution failed',
			);
			assert.equal(executions.filter((e) => ran(e, BUSINESS_STEP)).length, 1);
			assert.equal((await stack.businessRows(key)).length, 1);
			assert.deepEqual(
				(
					await stack.keysDb.query('SELECT status, attempts FROM processed_events WHERE key = $1', [
						key,
					])
				).rows,
				[{ status: 'completed', attempts: 1 }],
			);
			const retried = await stack.send(event);
			assert.deepEqual([retried.status, retried.json?.status], [200, 'duplicate']);
			assert.deepEqual(poolerProblems(), []);
		}),
);

test(
	'lease mode, a failing business step through PgBouncer: 500, key released, the retry processed once',
	{ timeout: 180_000 },
	() =>
		withLogs(async () => {
			const event = { id: 'evt_pooled_fail', type: 'fail.me' };
			const key = 'evt:evt_pooled_fail';
			const failed = await deliverWithFailingBusinessStep(stack, event);
			assert.equal(failed.response.status, 500);
			assert.deepEqual(failed.execution.items('Release Key')[0].idempotency, {
				key,
				released: true,
			});
			assert.equal(await keysIn('processed_events', key), 0);

			const retry = await stack.deliver(event);
			assert.deepEqual(
				[retry.response.status, retry.response.json],
				[200, { status: 'processed' }],
			);
			assert.equal((await stack.businessRows(key)).length, 1);
		}),
);

test(
	'exactly-once template, 64 simultaneous deliveries through PgBouncer: one transaction commits the row and the completion, the rest 409 or duplicate',
	{ timeout: 300_000 },
	() =>
		withLogs(async () => {
			const event = { id: 'evt_pooled_exactly_once', type: 'invoice.paid' };
			const key = 'evt:evt_pooled_exactly_once';
			const { answers, responses, inFlight, duplicates, executions } = await runBurst(
				stack,
				event,
				{ webhookUrl: exactlyOnce.webhookUrl, workflowId: exactlyOnce.id, label: 'pooler' },
			);
			const processed = responses.filter((r) => r.status === 200 && r.json?.status === 'processed');
			assert.equal(processed.length, 1, `answers: ${JSON.stringify(answers)}`);
			assert.equal(inFlight.length + duplicates.length, 63, `answers: ${JSON.stringify(answers)}`);
			const [row] = await stack.businessRows(key);
			assert.deepEqual(processed[0].json, { status: 'processed', key, id: row.id });
			assert.ok(
				executions.every((e) => e.status === 'success'),
				'no execution failed',
			);
			assert.equal((await stack.businessRows(key)).length, 1);
			assert.deepEqual(
				(await stack.keysDb.query('SELECT status FROM processed_events WHERE key = $1', [key]))
					.rows,
				[{ status: 'completed' }],
			);
			assert.deepEqual(poolerProblems(), []);
		}),
);

test(
	'exactly-once template, a failing statement through PgBouncer: rolled back, 500, key released, the retry processed once',
	{ timeout: 180_000 },
	() =>
		withLogs(async () => {
			const event = { id: 'evt_pooled_exactly_once_fail', type: 'fail.me.exactly.once' };
			const key = 'evt:evt_pooled_exactly_once_fail';
			const failed = await deliverWithFailingBusinessStep(stack, event, { to: exactlyOnce });
			assert.equal(failed.response.status, 500);
			assert.deepEqual(failed.execution.items('Release Key')[0].idempotency, {
				key,
				released: true,
			});
			assert.equal((await stack.businessRows(key)).length, 0);
			assert.equal(await keysIn('processed_events', key), 0);

			const retry = await stack.deliver(event, { to: exactlyOnce });
			assert.deepEqual([retry.response.status, retry.response.json?.status], [200, 'processed']);
			assert.equal((await stack.businessRows(key)).length, 1);
			assert.deepEqual(poolerProblems(), []);
		}),
);

test(
	'simple mode, seed sequence through PgBouncer: the two-column table is created, A processed, A again a duplicate, B processed',
	{ timeout: 180_000 },
	() =>
		withLogs(async () => {
			const now = Math.floor(Date.now() / 1000);
			const A = { id: 'evt_simple_A', type: 'payment_intent.succeeded' };
			const B = { id: 'evt_simple_B', type: 'payment_intent.succeeded' };
			const steps = [];
			for (const [body, signedAt] of [
				[A, now - 2],
				[A, now],
				[B, now],
			]) {
				steps.push(await deliverSimple(body, { signedAt }));
			}
			assert.deepEqual(
				steps.map((step) => [step.response.status, step.response.json, step.branch]),
				[
					[200, { status: 'processed', key: 'evt:evt_simple_A' }, 'processed'],
					[200, { status: 'duplicate', key: 'evt:evt_simple_A' }, 'duplicate'],
					[200, { status: 'processed', key: 'evt:evt_simple_B' }, 'processed'],
				],
			);
			assert.ok(steps.every((step) => step.execution.status === 'success'));
			assert.equal(steps[1].execution.items('Idempotency Reserve', 1)[0].idempotency.isNew, false);
			assert.ok(!ran(steps[1].execution, BUSINESS_STEP));
			for (const id of ['evt:evt_simple_A', 'evt:evt_simple_B']) {
				assert.equal((await stack.businessRows(id)).length, 1, `one business row for ${id}`);
				assert.equal(await keysIn(SIMPLE_TABLE, id), 1, `one key row ${id}`);
			}
			const { rows } = await stack.keysDb.query(
				`SELECT column_name FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position`,
				[SIMPLE_TABLE],
			);
			assert.deepEqual(
				rows.map((row) => row.column_name),
				['key', 'first_seen'],
			);
			assert.deepEqual(poolerProblems(), []);
		}),
);

test(
	'simple mode, 64 simultaneous deliveries through PgBouncer: one processed, 63 duplicates, one business row',
	{ timeout: 300_000 },
	() =>
		withLogs(async () => {
			const event = { id: 'evt_simple_burst', type: 'invoice.paid' };
			const key = 'evt:evt_simple_burst';
			const { answers, processed, duplicates, executions } = await runBurst(stack, event, {
				webhookUrl: simple.webhookUrl,
				workflowId: simple.id,
				label: 'pooler',
			});
			assert.equal(processed.length, 1, `answers: ${JSON.stringify(answers)}`);
			assert.equal(duplicates.length, 63, `answers: ${JSON.stringify(answers)}`);
			assert.ok(
				executions.every((e) => e.status === 'success'),
				'no execution failed',
			);
			assert.equal(executions.filter((e) => ran(e, BUSINESS_STEP)).length, 1);
			assert.equal((await stack.businessRows(key)).length, 1);
			assert.equal(await keysIn(SIMPLE_TABLE, key), 1);
			assert.deepEqual(poolerProblems(), []);
		}),
);

/** The editor's Test button: POST /rest/credentials/test as the owner, with the credential's data as the dialog sends it. */
async function pressTest(cookie, data) {
	const response = await fetch(`${stack.baseUrl}/rest/credentials/test`, {
		method: 'POST',
		headers: { 'content-type': 'application/json', cookie, 'browser-id': BROWSER_ID },
		body: JSON.stringify({
			credentials: {
				id: 'IdemPgCredE2E0001',
				name: 'Idempotency Postgres',
				type: 'idempotencyPostgresApi',
				data,
			},
		}),
		signal: AbortSignal.timeout(60_000),
	});
	const text = await response.text();
	assert.equal(response.status, 200, text.slice(0, 300));
	return JSON.parse(text).data;
}

test(
	"the credential's Test button in n8n connects through PgBouncer, and a wrong password reads as one sentence",
	{ timeout: 120_000 },
	() =>
		withLogs(async () => {
			const setup = await fetch(`${stack.baseUrl}/rest/owner/setup`, {
				method: 'POST',
				headers: { 'content-type': 'application/json', 'browser-id': BROWSER_ID },
				body: JSON.stringify({
					email: 'pooler@example.com',
					firstName: 'Pool',
					lastName: 'Er',
					password: 'Pooler-e2e-Passw0rd',
				}),
				signal: AbortSignal.timeout(30_000),
			});
			assert.equal(setup.status, 200, (await setup.text()).slice(0, 300));
			const cookie = setup.headers
				.getSetCookie()
				.map((line) => line.split(';')[0])
				.join('; ');
			assert.match(cookie, /n8n-auth=/);

			const data = {
				host: stack.pooler.host,
				port: stack.pooler.port,
				database: stack.keysDatabase,
				user: stack.pooler.login.user,
				password: stack.pooler.login.password,
				ssl: 'disable',
				maxConnections: 10,
			};
			const statsBefore = await stack.pooler.admin('SHOW STATS');
			assert.deepEqual(await pressTest(cookie, data), {
				status: 'OK',
				message: 'Connection successful',
			});
			const statsAfter = await stack.pooler.admin('SHOW STATS');
			const queries = (rows) =>
				Number(rows.find((row) => row.database === stack.keysDatabase)?.total_query_count ?? 0);
			assert.ok(
				queries(statsAfter) > queries(statsBefore),
				"the Test button's SELECT 1 went through PgBouncer",
			);

			const wrong = await pressTest(cookie, { ...data, password: 'wrong-password' });
			assert.equal(wrong.status, 'Error');
			assert.match(
				wrong.message,
				new RegExp(
					`^PostgreSQL at 127\\.0\\.0\\.1:${stack.pooler.port} refused the password for user "${data.user}"`,
				),
			);
		}),
);
