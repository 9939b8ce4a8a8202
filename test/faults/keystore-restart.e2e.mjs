// Fault suite, key store: the keys database (processed_events, business_log) on a PostgreSQL of its
// own, separate from n8n's database, so it can be stopped and started while n8n runs. Both
// credentials (Idempotency Postgres, Business Postgres) log in as `idem_app`, a non-superuser that
// owns the keys database. The template is unchanged. Covers: a restart in the middle of a load run,
// a Release that fails itself (DELETE revoked; key store gone while the business step runs), and a
// wrong password. Run with `npm run test:faults`.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { BUSINESS_STEP, sleep, startStack, waitFor } from '../../scripts/harness/index.mjs';
import { runLoad, tally } from '../../scripts/harness/load.mjs';
import { assertMatchesDoc, cell, healthz, nodesCell, report, withLogs } from './support.mjs';

const ROLE = 'idem_app';
const EVENTS = 240;
const CONCURRENCY = 8;
const PACE_MS = 70;
const STOP_AFTER_ANSWERS = 60;
const OUTAGE_MS = 4_000;
const MAX_RESEND_ROUNDS = 5;

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;
/** Rows of the faults:release-matrix table, filled by the tests below and checked by the last one. */
const releaseMatrix = [];

before(
	async () => {
		stack = await startStack({ label: 'faults_keystore', keyStore: { separate: true, role: ROLE } });
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

async function businessCount(key) {
	return (await stack.businessRows(key)).length;
}

/**
 * The text n8n recorded as the execution's error, with this run's port replaced. A server that goes
 * away while a pooled connection is being handed out gives either of two sentences, depending on
 * whether the pool had already dropped the dead connection: both are shown as one.
 */
const GONE = ['Nothing is listening at 127.0.0.1:<port> (connection refused)', 'The connection to PostgreSQL at 127.0.0.1:<port> was lost'];
function errorText(execution) {
	const text = (execution?.error ?? '').replaceAll(`:${stack.keyServer.port}`, ':<port>');
	return GONE.includes(text) ? GONE.map((t) => `\`${t}\``).join(' or ') : `\`${text}\``;
}

/** How a non-2xx delivery ended, from what n8n recorded. */
function classify(execution) {
	if (!execution) return 'no execution recorded';
	if (!ran(execution, BUSINESS_STEP)) return 'reserve failed';
	if (ran(execution, 'Respond 500')) return 'business step failed, key released';
	if (ran(execution, 'Release Key')) return 'business step failed, release failed';
	return `other (${execution.nodesRun.join(' → ')})`;
}

test(`key-store PostgreSQL stopped for ${OUTAGE_MS / 1000} s in the middle of ${EVENTS} deliveries: n8n stays up, outage requests answered non-2xx and reserve nothing, resending them processes each event exactly once`, { timeout: 10 * 60_000 }, () =>
	withLogs(stack, async () => {
		const events = Array.from({ length: EVENTS }, (_, i) => ({ id: `evt_rs_${String(i).padStart(3, '0')}`, type: 'order.created' }));
		const keyOf = (event) => `evt:${event.id}`;
		const jobs = events.map((event, i) => [{ body: event, tag: event }]);

		const outage = { health: [], n8nAlive: [] };
		let outageDone;
		const onResult = (_result, done) => {
			if (done !== STOP_AFTER_ANSWERS || outageDone) return;
			outageDone = (async () => {
				await stack.keyServer.stopServer({ mode: 'fast' });
				outage.stoppedAt = Date.now();
				// Bounded: OUTAGE_MS / 500 probes of n8n while its key store is gone.
				for (let probe = 0; probe < OUTAGE_MS / 500; probe++) {
					outage.health.push(await healthz(stack));
					outage.n8nAlive.push(!stack.n8n.process.exitStatus);
					await sleep(Math.max(0, outage.stoppedAt + (probe + 1) * 500 - Date.now()));
				}
				outage.restartBeganAt = Date.now();
				await stack.keyServer.startServer();
				outage.startedAt = Date.now();
			})();
		};
		const run = await runLoad(stack.webhookUrl, jobs, { concurrency: CONCURRENCY, paceMs: PACE_MS, timeoutMs: 120_000, deadlineMs: 5 * 60_000, onResult });
		assert.ok(outageDone, 'the key store was stopped during the run');
		await outageDone;
		assert.deepEqual(run.notSent, []);
		assert.equal(run.results.length, EVENTS);

		// n8n stayed up through the outage and after it.
		assert.ok(outage.n8nAlive.every(Boolean), 'the n8n process stayed alive');
		assert.ok(outage.health.every((status) => status === 200), `healthz during the outage: ${outage.health.join(', ')}`);
		assert.equal(stack.n8n.process.exitStatus, undefined);
		assert.equal(await healthz(stack), 200);

		const ok = run.results.filter((r) => r.status >= 200 && r.status < 300);
		const failed = run.results.filter((r) => !(r.status >= 200 && r.status < 300));
		assert.ok(failed.length > 0, 'some deliveries met the outage');
		for (const r of ok) assert.deepEqual(r.json, { status: 'processed', key: keyOf(r.delivery.tag) });

		// What n8n recorded for every delivery (matched by the request id header).
		const requestIds = new Set(run.results.map((r) => r.requestId).filter(Boolean));
		const recorded = await waitFor(
			`n8n to record the ${requestIds.size} executions`,
			async () => {
				const mine = (await stack.executions.list({ workflowId: stack.webhookWorkflowId })).filter((e) => requestIds.has(e.requestId));
				return mine.length === requestIds.size ? new Map(mine.map((e) => [e.requestId, e])) : undefined;
			},
			{ timeoutMs: 60_000, intervalMs: 1_000, maxAttempts: 60 },
		);
		const reserveStart = (r) => recorded.get(r.requestId)?.startTime('Idempotency Reserve');
		const reserveEnd = (r) => recorded.get(r.requestId)?.endTime('Idempotency Reserve');

		// Every execution whose Reserve ran from start to end while the server was down (stopped, not
		// yet started again) got a non-2xx answer, and every non-2xx answer belongs to an execution
		// whose Reserve started before the server was back.
		const reservedWhileDown = run.results.filter((r) => reserveStart(r) >= outage.stoppedAt && reserveEnd(r) <= outage.restartBeganAt);
		assert.ok(reservedWhileDown.length > 0, 'some executions ran Reserve while the key store was down');
		assert.deepEqual(
			reservedWhileDown.filter((r) => r.status >= 200 && r.status < 300).map((r) => [reserveStart(r) - outage.stoppedAt, r.status, r.text]),
			[],
			'no execution that ran Reserve during the outage answered 2xx',
		);
		for (const r of failed) {
			assert.ok(reserveStart(r) !== undefined && reserveStart(r) < outage.startedAt, `a delivery failed whose Reserve started ${reserveStart(r) - outage.startedAt} ms after the restart: ${r.status} ${r.text}`);
		}
		const sentDuringOutage = run.results.filter((r) => r.sentAt >= outage.stoppedAt && r.sentAt < outage.restartBeganAt);

		// How each failed delivery ended, and what it left in the key table.
		const failures = failed.map((r) => {
			const execution = recorded.get(r.requestId);
			return { result: r, execution, kind: classify(execution), key: keyOf(r.delivery.tag) };
		});
		for (const f of failures) {
			assert.equal(f.result.status, 500, `${f.key}: ${f.result.status} ${f.result.error ?? f.result.text}`);
			if (f.kind === 'business step failed, key released') {
				// The template's error path: handled, so n8n records the execution as a success.
				assert.deepEqual(f.result.json, { status: 'failed', released: true });
				assert.equal(f.execution.status, 'success');
			} else {
				assert.deepEqual(f.result.json, { message: 'Error in workflow' }, `${f.key}: ${f.result.text}`);
				assert.equal(f.execution?.status, 'error', `${f.key}: a non-2xx answer without a failed execution`);
			}
			assert.equal(await businessCount(f.key), 0, `${f.key}: a failed delivery wrote a business row`);
			// Reserve failed or the key was released: nothing is reserved for it.
			if (f.kind !== 'business step failed, release failed') assert.equal(await keyExists(f.key), false, `${f.key} (${f.kind}) left a reservation`);
		}
		const leftReserved = failures.filter((f) => f.kind === 'business step failed, release failed');
		for (const f of leftReserved) assert.equal(await keyExists(f.key), true);

		// The provider resends every event that got a non-2xx answer (bounded rounds, 1 s apart).
		let pending = failures.map((f) => f.result.delivery);
		const lost = [];
		const rounds = [];
		for (let round = 1; round <= MAX_RESEND_ROUNDS && pending.length > 0; round++) {
			const again = await runLoad(stack.webhookUrl, pending.map((d) => [{ ...d }]), { concurrency: CONCURRENCY, timeoutMs: 60_000, deadlineMs: 120_000 });
			rounds.push(tally(again.results.map((r) => r.status)));
			pending = again.results.filter((r) => !(r.status >= 200 && r.status < 300)).map((r) => r.delivery);
			for (const r of again.results.filter((x) => x.status === 200 && x.json?.status === 'duplicate')) lost.push(r.delivery.tag);
			if (pending.length > 0) await sleep(1_000);
		}
		assert.deepEqual(pending, [], `still failing after ${MAX_RESEND_ROUNDS} resend rounds`);
		// A resend answered as a duplicate is an event whose Release failed: its key stayed reserved, the
		// business step never ran. Exactly those, and only those, are the ones n8n recorded so.
		assert.deepEqual(lost.map(keyOf).sort(), leftReserved.map((f) => f.key).sort());
		for (const event of lost) assert.equal(await businessCount(keyOf(event)), 0);

		// The operator's fix for those: delete the key (only keys without a business row), resend.
		if (lost.length > 0) {
			const { rowCount } = await stack.keysDb.query(
				`DELETE FROM processed_events WHERE key = ANY($1) AND NOT EXISTS (SELECT 1 FROM business_log b WHERE b.event_key = processed_events.key)`,
				[lost.map(keyOf)],
			);
			assert.equal(rowCount, lost.length);
			const fixed = await runLoad(stack.webhookUrl, lost.map((event) => [{ body: event }]), { concurrency: CONCURRENCY, timeoutMs: 60_000, deadlineMs: 120_000 });
			assert.deepEqual(fixed.results.map((r) => r.json?.status), lost.map(() => 'processed'));
		}

		// Overall: every event exactly once.
		const { rows } = await stack.keysDb.query('SELECT event_key, count(*)::int AS n FROM business_log WHERE event_key LIKE $1 GROUP BY event_key', ['evt:evt_rs_%']);
		assert.equal(rows.length, EVENTS, 'business rows = distinct events');
		assert.deepEqual(rows.filter((row) => row.n !== 1), [], 'no event processed twice');
		const { rows: keys } = await stack.keysDb.query('SELECT count(*)::int AS n FROM processed_events WHERE key LIKE $1', ['evt:evt_rs_%']);
		assert.equal(keys[0].n, EVENTS);
		assert.equal(stack.n8n.process.exitStatus, undefined, 'n8n is still running');

		// Recovery: from the moment the server was started again to the end of the first Reserve that succeeded after it.
		const recoveredAt = Math.min(...ok.filter((r) => reserveStart(r) >= outage.restartBeganAt).map((r) => reserveEnd(r)));
		report('key-store restart', {
			deliveries: EVENTS,
			concurrency: CONCURRENCY,
			paceMs: PACE_MS,
			seconds: Number(run.seconds.toFixed(1)),
			outageMs: outage.startedAt - outage.stoppedAt,
			restartMs: outage.startedAt - outage.restartBeganAt,
			sentDuringOutage: sentDuringOutage.length,
			reserveRanDuringOutage: reservedWhileDown.length,
			answered2xx: ok.length,
			answeredNon2xx: tally(failed.map((r) => r.status)),
			failureKinds: tally(failures.map((f) => f.kind)),
			healthzDuringOutage: tally(outage.health),
			firstReserveOkAfterRestartMs: Number.isFinite(recoveredAt) ? recoveredAt - outage.restartBeganAt : null,
			resendRounds: rounds,
			keptReservedByFailedRelease: leftReserved.length,
			businessRows: rows.length,
		});
	}),
);

/** Sends one event, signed anew (the harness signs each request), and waits for n8n's record of it. */
async function deliverOnce(event) {
	return await stack.deliver(event);
}

/**
 * A Release that fails leaves the key reserved. The provider's retry is then answered 200 duplicate
 * and the business step never runs: the event is lost until someone deletes the key. Records the
 * matrix row: what the sender saw, what n8n recorded, the table, the retry, the fix.
 */
async function assertReleaseFailure(id, fault, event, failed, fix) {
	const key = `evt:${event.id}`;
	assert.equal(failed.response.status, 500);
	assert.deepEqual(failed.response.json, { message: 'Error in workflow' });
	assert.equal(failed.execution.status, 'error');
	assert.deepEqual(failed.execution.nodesRun, ['Webhook', 'Verify Webhook Signature', 'Idempotency Reserve', BUSINESS_STEP, 'Release Key']);
	assert.equal(failed.execution.lastNodeExecuted, 'Release Key');
	assert.ok(await keyExists(key), 'the key stayed reserved');
	assert.equal(await businessCount(key), 0);

	const retry = await deliverOnce(event);
	assert.equal(retry.response.status, 200);
	assert.deepEqual(retry.response.json, { status: 'duplicate', key });
	assert.ok(!ran(retry.execution, BUSINESS_STEP));
	assert.equal(await businessCount(key), 0, 'the retry did not run the business step');

	await fix();
	const { rowCount } = await stack.keysDb.query('DELETE FROM processed_events WHERE key = $1', [key]);
	assert.equal(rowCount, 1);
	const resent = await deliverOnce(event);
	assert.equal(resent.response.status, 200);
	assert.deepEqual(resent.response.json, { status: 'processed', key });
	assert.equal(await businessCount(key), 1);

	releaseMatrix.push([
		id,
		fault,
		String(failed.response.status),
		cell(`\`${failed.response.text}\``),
		cell(`${nodesCell(failed.execution)}: ${errorText(failed.execution)}`),
		'key stays reserved',
		'none',
		cell(`${retry.response.status} \`${retry.response.json.status}\`, business step not run`),
		cell(`key deleted by hand, resend: ${resent.response.status} \`${resent.response.json.status}\`, 1 business row`),
	]);
}

test('Release fails (DELETE on processed_events revoked from the credential\'s user) after a failing business step → 500, failure recorded, key stays reserved', { timeout: 180_000 }, () =>
	withLogs(stack, async () => {
		const event = { id: 'evt_relfail_revoked', type: 'fail.release' };
		await stack.keysDb.query(`ALTER TABLE business_log ADD CONSTRAINT faults_fail_release CHECK (event_type <> 'fail.release')`);
		await stack.keysDb.query(`REVOKE DELETE ON processed_events FROM ${ROLE}`);
		let failed;
		try {
			failed = await deliverOnce(event);
		} catch (error) {
			await stack.keysDb.query(`GRANT DELETE ON processed_events TO ${ROLE}`);
			await stack.keysDb.query('ALTER TABLE business_log DROP CONSTRAINT IF EXISTS faults_fail_release');
			throw error;
		}
		assert.match(failed.execution.error, /permission denied for table processed_events/);
		await assertReleaseFailure('R1', 'DELETE on processed_events revoked, business step fails', event, failed, async () => {
			await stack.keysDb.query(`GRANT DELETE ON processed_events TO ${ROLE}`);
			await stack.keysDb.query('ALTER TABLE business_log DROP CONSTRAINT faults_fail_release');
		});
	}),
);

test('Release fails (key store stopped while the business step runs) → 500, failure recorded, key stays reserved', { timeout: 240_000 }, () =>
	withLogs(stack, async () => {
		const event = { id: 'evt_relfail_down', type: 'slow.down' };
		// Holds the business step's INSERT long enough to stop the server under it.
		await stack.keysDb.query(`CREATE OR REPLACE FUNCTION faults_slow_business() RETURNS trigger LANGUAGE plpgsql AS $$
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
			await stack.keyServer.stopServer({ mode: 'fast' });
			try {
				failed = await sending;
			} finally {
				await stack.keyServer.startServer();
			}
		} finally {
			await dropTrigger();
		}
		assert.match(failed.execution.error, /^(Nothing is listening at 127\.0\.0\.1:\d+ \(connection refused\)|The connection to PostgreSQL at 127\.0\.0\.1:\d+ was lost)$/);
		assert.ok(failed.execution.items('Business Step (insert business_log)', 1).length === 1, 'the business step went to its error output');
		await assertReleaseFailure('R2', 'key store stopped while the business step runs', event, failed, async () => undefined);
	}),
);

test('wrong password on the key store (rotated in PostgreSQL, not in n8n) → 500 at Reserve, nothing reserved; works again once it matches', { timeout: 180_000 }, () =>
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
			await stack.keysDb.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [ROLE]);
			failed = await deliverOnce(event);
		} finally {
			await restore();
		}
		assert.equal(failed.response.status, 500);
		assert.deepEqual(failed.response.json, { message: 'Error in workflow' });
		assert.deepEqual(failed.execution.nodesRun, ['Webhook', 'Verify Webhook Signature', 'Idempotency Reserve']);
		assert.equal(failed.execution.status, 'error');
		assert.equal(await keyExists(key), false, 'nothing reserved');
		assert.equal(await businessCount(key), 0);
		const resent = await deliverOnce(event);
		assert.equal(resent.response.status, 200);
		assert.deepEqual(resent.response.json, { status: 'processed', key });
		assert.equal(await businessCount(key), 1);
		releaseMatrix.push([
			'R3',
			'wrong password for the Idempotency Postgres credential',
			String(failed.response.status),
			cell(`\`${failed.response.text}\``),
			cell(`${nodesCell(failed.execution)}: ${errorText(failed.execution)}`),
			'nothing reserved',
			'none',
			cell(`password fixed, resend: ${resent.response.status} \`${resent.response.json.status}\`, 1 business row`),
			'(none needed)',
		]);
	}),
);

test('docs/faults.md release matrix matches what these runs observed', () => {
	assert.equal(releaseMatrix.length, 3, 'the release and password tests above all ran');
	assertMatchesDoc('release-matrix', releaseMatrix);
});
