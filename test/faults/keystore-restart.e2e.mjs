// Fault suite, key store: the keys database (processed_events, business_log) on a PostgreSQL of its
// own, separate from n8n's database, so it can be stopped and started while n8n runs. Both
// credentials (Idempotency Postgres, Business Postgres) log in as `idem_app`, a non-superuser that
// owns the keys database. The template is the file's, in lease mode, with a 25 s lease instead of
// 300 s so that a takeover does not keep the suite waiting. Covers: a restart in the middle of a load
// run, a Release that fails itself (DELETE revoked; key store gone while the business step runs), and
// a wrong password. Nobody deletes a key by hand: the sender resends (honouring Retry-After) and an
// event whose execution could not release its key is taken over once the lease has ended.
// Run with `npm run test:faults`.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { BUSINESS_STEP, sleep, startStack, waitFor } from '../../scripts/harness/index.mjs';
import { runLoad, tally } from '../../scripts/harness/load.mjs';
import {
	assertInternalProblem,
	assertMatchesDoc,
	cell,
	healthz,
	isOk,
	nodesCell,
	report,
	resendLikeProvider,
	RESERVE_FAILURE_NODES,
	withLogs,
} from './support.mjs';

const ROLE = 'idem_app';
const EVENTS = 240;
const CONCURRENCY = 8;
const PACE_MS = 70;
const STOP_AFTER_ANSWERS = 60;
const OUTAGE_MS = 4_000;
// Longer than any execution here takes from Reserve to Complete Key, short enough to wait for.
const LEASE_SECONDS = 25;

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;
/** Rows of the faults:release-matrix table, filled by the tests below and checked by the last one. */
const releaseMatrix = [];

before(
	async () => {
		stack = await startStack({
			label: 'faults_keystore',
			keyStore: { separate: true, role: ROLE },
			templateParameters: { 'Idempotency Reserve': { leaseSeconds: LEASE_SECONDS } },
		});
	},
	{ timeout: 30 * 60_000 },
);

after(
	async () => {
		await stack?.stop();
	},
	{ timeout: 180_000 },
);

function ran(execution, node) {
	return Boolean(execution?.nodesRun.includes(node));
}

async function keyExists(key) {
	return (await stack.keyRows(key)).length > 0;
}

/** The key's row in lease mode: status and attempt (undefined when there is none). */
async function keyState(key) {
	const { rows } = await stack.keysDb.query(
		'SELECT status, attempts FROM processed_events WHERE key = $1',
		[key],
	);
	return rows[0];
}

async function businessCount(key) {
	return (await stack.businessRows(key)).length;
}

/**
 * The text n8n recorded as the execution's error, with this run's port replaced. A server that goes
 * away while a pooled connection is being handed out gives either of two sentences, depending on
 * whether the pool had already dropped the dead connection: both are shown as one.
 */
const GONE = [
	'Nothing is listening at 127.0.0.1:<port> (connection refused)',
	'The connection to PostgreSQL at 127.0.0.1:<port> was lost',
];
function errorText(execution) {
	const text = (execution?.error ?? '')
		.replaceAll(`:${stack.keyServer.port}`, ':<port>')
		// How long the retries lasted and how many there were varies from run to run.
		.replace(
			/unreachable for \d+\.\d s \(\d+ attempts?\)/,
			'unreachable for <seconds> s (<attempts>)',
		);
	return GONE.includes(text) ? GONE.map((t) => `\`${t}\``).join(' or ') : `\`${text}\``;
}

/** How a non-2xx delivery ended, from what n8n recorded. */
function classify(execution) {
	if (!execution) return 'no execution recorded';
	if (!ran(execution, BUSINESS_STEP)) return 'reserve failed';
	if (ran(execution, 'Respond 500')) return 'business step failed, key released';
	if (ran(execution, 'Release Key')) return 'business step failed, release failed';
	// Complete Key answers 200 itself once it completed: a non-2xx after it ran is its failure.
	if (ran(execution, 'Complete Key')) return 'business step done, complete failed';
	return `other (${execution.nodesRun.join(' → ')})`;
}

test(
	`key-store PostgreSQL stopped for ${OUTAGE_MS / 1000} s in the middle of ${EVENTS} deliveries: n8n stays up, outage requests answered non-2xx, resending like a provider processes every event with no key deleted by hand`,
	{ timeout: 10 * 60_000 },
	() =>
		withLogs(stack, async () => {
			const events = Array.from({ length: EVENTS }, (_, i) => ({
				id: `evt_rs_${String(i).padStart(3, '0')}`,
				type: 'order.created',
			}));
			const keyOf = (event) => `evt:${event.id}`;
			const jobs = events.map((event) => [{ body: event, tag: event }]);

			const outage = { health: [], n8nAlive: [] };
			let outageDone;
			const onResult = (_result, done) => {
				if (done !== STOP_AFTER_ANSWERS || outageDone) return;
				outageDone = (async () => {
					await stack.restartableKeyServer.stopServer({ mode: 'fast' });
					outage.stoppedAt = Date.now();
					// Bounded: OUTAGE_MS / 500 probes of n8n while its key store is gone.
					for (let probe = 0; probe < OUTAGE_MS / 500; probe++) {
						outage.health.push(await healthz(stack));
						outage.n8nAlive.push(!stack.n8n.process.exitStatus);
						await sleep(Math.max(0, outage.stoppedAt + (probe + 1) * 500 - Date.now()));
					}
					outage.restartBeganAt = Date.now();
					await stack.restartableKeyServer.startServer();
					outage.startedAt = Date.now();
				})();
			};
			const run = await runLoad(stack.webhookUrl, jobs, {
				concurrency: CONCURRENCY,
				paceMs: PACE_MS,
				timeoutMs: 120_000,
				deadlineMs: 5 * 60_000,
				onResult,
			});
			assert.ok(outageDone, 'the key store was stopped during the run');
			await outageDone;
			assert.deepEqual(run.notSent, []);
			assert.equal(run.results.length, EVENTS);

			// n8n stayed up through the outage and after it.
			assert.ok(outage.n8nAlive.every(Boolean), 'the n8n process stayed alive');
			assert.ok(
				outage.health.every((status) => status === 200),
				`healthz during the outage: ${outage.health.join(', ')}`,
			);
			assert.equal(stack.n8n.process.exitStatus, undefined);
			assert.equal(await healthz(stack), 200);

			const ok = run.results.filter((r) => r.status >= 200 && r.status < 300);
			const failed = run.results.filter((r) => !(r.status >= 200 && r.status < 300));
			assert.ok(failed.length > 0, 'some deliveries met the outage');
			for (const r of ok) assert.deepEqual(r.json, { status: 'processed' });

			// What n8n recorded for every delivery (matched by the request id header).
			const requestIds = new Set(run.results.map((r) => r.requestId).filter(Boolean));
			const recorded = await waitFor(
				`n8n to record the ${requestIds.size} executions`,
				async () => {
					const mine = (
						await stack.executions.list({ workflowId: stack.webhookWorkflowId })
					).filter((e) => requestIds.has(e.requestId));
					return mine.length === requestIds.size
						? new Map(mine.map((e) => [e.requestId, e]))
						: undefined;
				},
				{ timeoutMs: 60_000, intervalMs: 1_000, maxAttempts: 60 },
			);
			const reserveStart = (r) => recorded.get(r.requestId)?.startTime('Idempotency Reserve');
			const reserveEnd = (r) => recorded.get(r.requestId)?.endTime('Idempotency Reserve');

			// Every execution whose Reserve ran from start to end while the server was down (stopped, not
			// yet started again) got a non-2xx answer, and every non-2xx answer belongs to an execution
			// whose Reserve started before the server was back.
			const reservedWhileDown = run.results.filter(
				(r) => reserveStart(r) >= outage.stoppedAt && reserveEnd(r) <= outage.restartBeganAt,
			);
			assert.ok(
				reservedWhileDown.length > 0,
				'some executions ran Reserve while the key store was down',
			);
			assert.deepEqual(
				reservedWhileDown
					.filter((r) => r.status >= 200 && r.status < 300)
					.map((r) => [reserveStart(r) - outage.stoppedAt, r.status, r.text]),
				[],
				'no execution that ran Reserve during the outage answered 2xx',
			);
			for (const r of failed) {
				assert.ok(
					reserveStart(r) !== undefined && reserveStart(r) < outage.startedAt,
					`a delivery failed whose Reserve started ${reserveStart(r) - outage.startedAt} ms after the restart: ${r.status} ${r.text}`,
				);
			}
			const sentDuringOutage = run.results.filter(
				(r) => r.sentAt >= outage.stoppedAt && r.sentAt < outage.restartBeganAt,
			);

			// How each failed delivery ended, and what it left in the key table.
			const failures = failed.map((r) => {
				const execution = recorded.get(r.requestId);
				return { result: r, execution, kind: classify(execution), key: keyOf(r.delivery.tag) };
			});
			for (const f of failures) {
				assert.equal(
					f.result.status,
					500,
					`${f.key}: ${f.result.status} ${f.result.error ?? f.result.text}`,
				);
				if (f.kind === 'business step failed, key released') {
					// The template's error path: handled, so n8n records the execution as a success.
					assert.deepEqual(f.result.json, { status: 'failed', released: true });
					assert.equal(f.execution.status, 'success');
				} else if (f.kind === 'reserve failed') {
					// The template's error output: 500 problem+json, then the execution fails.
					assertInternalProblem(f.result, f.key);
					assert.equal(f.execution?.status, 'error', `${f.key}: not a failed execution`);
				} else {
					assert.deepEqual(
						f.result.json,
						{ message: 'Error in workflow' },
						`${f.key}: ${f.result.text}`,
					);
					assert.equal(
						f.execution?.status,
						'error',
						`${f.key}: a non-2xx answer without a failed execution`,
					);
				}
				const state = await keyState(f.key);
				if (f.kind === 'business step done, complete failed') {
					// The business step committed, Complete Key could not reach the server: the row is there,
					// the key stays in_progress until its lease ends.
					assert.equal(await businessCount(f.key), 1, `${f.key}: ${f.kind}`);
					assert.equal(state?.status, 'in_progress', `${f.key}: ${f.kind}`);
				} else {
					assert.equal(
						await businessCount(f.key),
						0,
						`${f.key}: a failed delivery wrote a business row`,
					);
					// Release failed: the key is held in_progress by the dead reservation; otherwise nothing is reserved.
					if (f.kind === 'business step failed, release failed')
						assert.equal(state?.status, 'in_progress', f.key);
					else assert.equal(state, undefined, `${f.key} (${f.kind}) left a reservation`);
				}
			}
			const leftReserved = failures.filter(
				(f) =>
					f.kind === 'business step failed, release failed' ||
					f.kind === 'business step done, complete failed',
			);

			// The provider resends every event that got a non-2xx answer: 5 s after a 500, after Retry-After
			// after a 409. Keys still held by a dead reservation answer 409 until the lease ends, then the
			// next resend takes them over. Nobody touches the key table.
			const resent = await resendLikeProvider(stack, failed, {
				concurrency: CONCURRENCY,
				deadlineMs: (LEASE_SECONDS + 120) * 1000,
			});
			assert.deepEqual(
				resent.unanswered.map((d) => keyOf(d.tag)),
				[],
				'every resent event answered 2xx before the deadline',
			);
			const resendAnswers = new Map();
			for (const r of resent.results) {
				assert.ok(r.status === 409 || isOk(r), `resend: ${r.status} ${r.error ?? r.text}`);
				resendAnswers.set(keyOf(r.delivery.tag), [
					...(resendAnswers.get(keyOf(r.delivery.tag)) ?? []),
					r.json?.status,
				]);
			}
			// Every resent event ends `processed` (none `duplicate`: nothing was completed for them), and only
			// events whose key a dead reservation held were told 409 in between.
			for (const [key, answers] of resendAnswers) {
				assert.equal(answers.at(-1), 'processed', `${key}: ${answers.join(', ')}`);
				assert.ok(
					answers.slice(0, -1).every((a) => a === 'in_progress'),
					`${key}: ${answers.join(', ')}`,
				);
			}
			const told409 = [...resendAnswers]
				.filter(([, answers]) => answers.includes('in_progress'))
				.map(([key]) => key);
			const heldKeys = new Set(leftReserved.map((f) => f.key));
			assert.deepEqual(
				told409.filter((key) => !heldKeys.has(key)),
				[],
				'only keys held by a dead reservation answered 409',
			);
			for (const f of leftReserved)
				assert.deepEqual(
					await keyState(f.key),
					{ status: 'completed', attempts: 2 },
					`${f.key}: taken over once`,
				);

			// Overall: every event processed, and exactly once unless its business step had committed before
			// Complete Key failed (the lease's known limit: the takeover runs the step again).
			const { rows } = await stack.keysDb.query(
				'SELECT event_key, count(*)::int AS n FROM business_log WHERE event_key LIKE $1 GROUP BY event_key',
				['evt:evt_rs_%'],
			);
			assert.equal(rows.length, EVENTS, 'business rows = distinct events');
			const completeFailed = new Set(
				failures.filter((f) => f.kind === 'business step done, complete failed').map((f) => f.key),
			);
			assert.deepEqual(
				rows.filter((row) => row.n !== (completeFailed.has(row.event_key) ? 2 : 1)),
				[],
				'one business row per event, two where Complete Key failed after the step',
			);
			const { rows: keys } = await stack.keysDb.query(
				'SELECT status, attempts, count(*)::int AS n FROM processed_events WHERE key LIKE $1 GROUP BY 1, 2 ORDER BY 1, 2',
				['evt:evt_rs_%'],
			);
			assert.deepEqual(keys, [
				{ status: 'completed', attempts: 1, n: EVENTS - leftReserved.length },
				...(leftReserved.length
					? [{ status: 'completed', attempts: 2, n: leftReserved.length }]
					: []),
			]);
			assert.equal(stack.n8n.process.exitStatus, undefined, 'n8n is still running');

			// Recovery: from the moment the server was started again to the end of the first Reserve that succeeded after it.
			const recoveredAt = Math.min(
				...ok.filter((r) => reserveStart(r) >= outage.restartBeganAt).map((r) => reserveEnd(r)),
			);
			report('key-store restart', {
				deliveries: EVENTS,
				concurrency: CONCURRENCY,
				paceMs: PACE_MS,
				seconds: Number(run.seconds.toFixed(1)),
				leaseSeconds: LEASE_SECONDS,
				outageMs: outage.startedAt - outage.stoppedAt,
				restartMs: outage.startedAt - outage.restartBeganAt,
				sentDuringOutage: sentDuringOutage.length,
				reserveRanDuringOutage: reservedWhileDown.length,
				answered2xx: ok.length,
				answeredNon2xx: tally(failed.map((r) => r.status)),
				failureKinds: tally(failures.map((f) => f.kind)),
				healthzDuringOutage: tally(outage.health),
				firstReserveOkAfterRestartMs: Number.isFinite(recoveredAt)
					? recoveredAt - outage.restartBeganAt
					: null,
				resend: { seconds: Math.round(resent.seconds), rounds: resent.rounds },
				keptInProgressByDeadReservation: tally(leftReserved.map((f) => f.kind)),
				takenOverAfterLease: leftReserved.length,
				eventsWithTwoBusinessRows: completeFailed.size,
				businessRows: rows.reduce((sum, row) => sum + row.n, 0),
				keysDeletedByHand: 0,
			});
		}),
);

/** Sends one event and waits for n8n's record of it. */
async function deliverOnce(event) {
	return await stack.deliver(event);
}

/**
 * A Release that fails leaves the key held by the failed execution's reservation until its lease
 * ends. The provider's retry meanwhile is answered 409 `in_progress` with Retry-After (a non-2xx, so
 * it keeps retrying) and the business step does not run; the retry after the lease takes the key
 * over and processes the event. Nobody deletes the key. Records the matrix row: what the sender saw,
 * what n8n recorded, the table, the retry, what happened after the lease.
 */
async function assertReleaseFailure(id, fault, event, failed, fix, fixText) {
	const key = `evt:${event.id}`;
	assert.equal(failed.response.status, 500);
	assert.deepEqual(failed.response.json, { message: 'Error in workflow' });
	assert.equal(failed.execution.status, 'error');
	assert.deepEqual(failed.execution.nodesRun, [
		'Webhook',
		'Idempotency Reserve',
		BUSINESS_STEP,
		'Release Key',
	]);
	assert.equal(failed.execution.lastNodeExecuted, 'Release Key');
	assert.deepEqual(
		await keyState(key),
		{ status: 'in_progress', attempts: 1 },
		'the key stayed reserved, in progress',
	);
	assert.equal(await businessCount(key), 0);

	const retry = await deliverOnce(event);
	assert.equal(retry.response.status, 409, retry.response.text);
	assert.equal(retry.response.json.status, 'in_progress');
	const retryAfter = Number(retry.response.headers['retry-after']);
	assert.ok(retryAfter >= 1 && retryAfter <= LEASE_SECONDS, `Retry-After ${retryAfter}`);
	assert.ok(!ran(retry.execution, BUSINESS_STEP));
	assert.equal(await businessCount(key), 0, 'the retry did not run the business step');

	await fix();
	// The provider comes back when Retry-After said: the lease has ended, the retry takes the key over.
	await sleep((retryAfter + 1) * 1000);
	const resent = await deliverOnce(event);
	assert.equal(resent.response.status, 200, resent.response.text);
	assert.deepEqual(resent.response.json, { status: 'processed' });
	assert.equal(await businessCount(key), 1);
	const state = await keyState(key);
	assert.deepEqual(state, { status: 'completed', attempts: 2 });

	releaseMatrix.push([
		id,
		fault,
		String(failed.response.status),
		cell(`\`${failed.response.text}\``),
		cell(`${nodesCell(failed.execution)}: ${errorText(failed.execution)}`),
		'key stays `in_progress` until its lease ends',
		'none',
		cell(
			`${retry.response.status} \`${retry.response.json.status}\`, Retry-After = rest of the lease, business step not run`,
		),
		cell(
			`${fixText}; retry after the lease: ${resent.response.status} \`${resent.response.json.status}\` (attempt ${state.attempts}), 1 business row, no key deleted`,
		),
	]);
}

test(
	"Release fails (DELETE on processed_events revoked from the credential's user) after a failing business step → 500, failure recorded, retry 409 while the lease runs, processed after it",
	{ timeout: 180_000 },
	() =>
		withLogs(stack, async () => {
			const event = { id: 'evt_relfail_revoked', type: 'fail.release' };
			await stack.keysDb.query(
				`ALTER TABLE business_log ADD CONSTRAINT faults_fail_release CHECK (event_type <> 'fail.release')`,
			);
			await stack.keysDb.query(`REVOKE DELETE ON processed_events FROM ${ROLE}`);
			let failed;
			try {
				failed = await deliverOnce(event);
			} catch (error) {
				await stack.keysDb.query(`GRANT DELETE ON processed_events TO ${ROLE}`);
				await stack.keysDb.query(
					'ALTER TABLE business_log DROP CONSTRAINT IF EXISTS faults_fail_release',
				);
				throw error;
			}
			assert.match(failed.execution.error, /permission denied for table processed_events/);
			await assertReleaseFailure(
				'R1',
				'DELETE on processed_events revoked, business step fails',
				event,
				failed,
				async () => {
					await stack.keysDb.query(`GRANT DELETE ON processed_events TO ${ROLE}`);
					await stack.keysDb.query('ALTER TABLE business_log DROP CONSTRAINT faults_fail_release');
				},
				'causes fixed (constraint dropped, DELETE granted)',
			);
		}),
);

test(
	'Release fails (key store stopped while the business step runs) → 500, failure recorded, retry 409 while the lease runs, processed after it',
	{ timeout: 240_000 },
	() =>
		withLogs(stack, async () => {
			const event = { id: 'evt_relfail_down', type: 'slow.down' };
			// Holds the business step's INSERT long enough to stop the server under it.
			await stack.keysDb
				.query(`CREATE OR REPLACE FUNCTION faults_slow_business() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN PERFORM pg_sleep(30); RETURN NEW; END $$`);
			await stack.keysDb.query(`CREATE TRIGGER faults_slow_business BEFORE INSERT ON business_log
			FOR EACH ROW WHEN (NEW.event_type = 'slow.down') EXECUTE FUNCTION faults_slow_business()`);
			const dropTrigger = async () => {
				await stack.keysDb.query('DROP TRIGGER IF EXISTS faults_slow_business ON business_log');
			};
			let failed;
			try {
				const sending = deliverOnce(event);
				sending.catch(() => undefined);
				await waitFor(
					'the business step to be inside the slowed INSERT',
					async () => {
						const { rows } = await stack.keysDb.query(
							`SELECT pid FROM pg_stat_activity WHERE usename = $1 AND wait_event = 'PgSleep' AND query ILIKE 'INSERT INTO business_log%'`,
							[ROLE],
						);
						return rows.length > 0;
					},
					{ timeoutMs: 30_000, intervalMs: 100 },
				);
				await stack.restartableKeyServer.stopServer({ mode: 'fast' });
				try {
					failed = await sending;
				} finally {
					await stack.restartableKeyServer.startServer();
				}
			} finally {
				await dropTrigger();
			}
			// Release Key retries a lost connection for CONNECTION_RETRY_MS, then names its key.
			assert.match(
				failed.execution.error,
				new RegExp(
					`^Could not release the key "evt:${event.id}": the key store at 127\\.0\\.0\\.1:\\d+ stayed unreachable for \\d+\\.\\d s \\(\\d+ attempts?\\)$`,
				),
			);
			assert.ok(
				failed.execution.items('Business Step (insert business_log)', 1).length === 1,
				'the business step went to its error output',
			);
			await assertReleaseFailure(
				'R2',
				'key store stopped while the business step runs',
				event,
				failed,
				async () => undefined,
				'none needed',
			);
		}),
);

test(
	'wrong password on the key store (rotated in PostgreSQL, not in n8n) → 500 at Reserve, nothing reserved; works again once it matches',
	{ timeout: 180_000 },
	() =>
		withLogs(stack, async () => {
			const event = { id: 'evt_wrong_password', type: 'order.created' };
			const key = `evt:${event.id}`;
			const restore = async () => {
				await stack.keysDb.query(`ALTER ROLE ${ROLE} PASSWORD '${stack.keyLogin.password}'`);
			};
			let failed;
			try {
				await stack.keysDb.query(`ALTER ROLE ${ROLE} PASSWORD 'not-the-credential-password'`);
				// Pooled connections stay logged in: end them, as a restart or the pool's idle timeout would.
				await stack.keysDb.query(
					'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1',
					[ROLE],
				);
				failed = await deliverOnce(event);
			} finally {
				await restore();
			}
			assertInternalProblem(failed.response, 'R3');
			assert.deepEqual(failed.execution.nodesRun, RESERVE_FAILURE_NODES);
			assert.equal(failed.execution.status, 'error');
			assert.equal(await keyExists(key), false, 'nothing reserved');
			assert.equal(await businessCount(key), 0);
			const resent = await deliverOnce(event);
			assert.equal(resent.response.status, 200);
			assert.deepEqual(resent.response.json, { status: 'processed' });
			assert.equal(await businessCount(key), 1);
			releaseMatrix.push([
				'R3',
				'wrong password for the Idempotency Postgres credential',
				String(failed.response.status),
				cell(`\`${failed.response.text}\``),
				cell(`${nodesCell(failed.execution)}: ${errorText(failed.execution)}`),
				'nothing reserved',
				'none',
				cell(
					`password fixed, resend: ${resent.response.status} \`${resent.response.json.status}\`, 1 business row`,
				),
				'(none needed)',
			]);
		}),
);

test('docs/faults.md release matrix matches what these runs observed', () => {
	assert.equal(releaseMatrix.length, 3, 'the release and password tests above all ran');
	assertMatchesDoc('release-matrix', releaseMatrix);
});
