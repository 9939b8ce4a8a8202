// Fault suite, queue mode: n8n main + 2 `n8n worker` processes (EXECUTIONS_MODE=queue, Redis at
// 127.0.0.1:6379 with prefixes of this run only), one PostgreSQL for n8n and the keys, the unchanged
// template. 1,000 deliveries at concurrency 32, 30 % of them repeats of earlier events, a third of
// those sent at the same moment as their original. Run with `npm run test:faults`.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { BUSINESS_STEP, startStack, waitFor } from '../../scripts/harness/index.mjs';
import { runLoad, seededRandom, tally } from '../../scripts/harness/load.mjs';
import { report, withLogs } from './support.mjs';

const TOTAL = 1_000;
const REPEAT_SHARE = 0.3;
const SIMULTANEOUS_SHARE_OF_REPEATS = 1 / 3;
const CONCURRENCY = 32;
const SEED = 20_251_202;

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;

before(
	async () => {
		stack = await startStack({ label: 'faults_queue', queue: { workers: 2 } });
	},
	{ timeout: 30 * 60_000 },
);

after(
	async () => {
		await stack?.stop();
	},
	{ timeout: 180_000 },
);

/**
 * 700 distinct events and 300 repeats. 100 repeats go out in the same job as their original (sent
 * at the same moment); the other 200 are placed at random later positions, each repeating an event
 * that comes earlier in the list. Every delivery is signed when it is sent (the harness signs each
 * request), so a repeat carries its own stripe-signature, as a provider's retry does.
 */
function buildJobs() {
	const random = seededRandom(SEED);
	const repeats = Math.round(TOTAL * REPEAT_SHARE);
	const distinct = TOTAL - repeats;
	const simultaneous = Math.round(repeats * SIMULTANEOUS_SHARE_OF_REPEATS);
	const later = repeats - simultaneous;
	const event = (i) => ({ id: `evt_q_${String(i).padStart(4, '0')}`, type: i % 7 === 0 ? 'invoice.paid' : 'payment_intent.succeeded' });
	const delivery = (i, kind) => ({
		body: event(i),
		tag: { key: `evt:${event(i).id}`, kind },
	});

	// Which events get a simultaneous twin: spread over the run.
	const twinOf = new Set();
	while (twinOf.size < simultaneous) twinOf.add(Math.floor(random() * distinct));
	const jobs = [];
	for (let i = 0; i < distinct; i++) {
		jobs.push(twinOf.has(i) ? [delivery(i, 'original', 0), delivery(i, 'simultaneous repeat', 1)] : [delivery(i, 'original', 0)]);
	}
	// Later repeats: inserted after their original, at random positions.
	for (let r = 0; r < later; r++) {
		const i = Math.floor(random() * (distinct - 1));
		const originalPosition = jobs.findIndex((job) => job[0].body.id === event(i).id);
		const position = originalPosition + 1 + Math.floor(random() * (jobs.length - originalPosition));
		jobs.splice(position, 0, [delivery(i, 'later repeat', 2 + r)]);
	}
	return { jobs, distinct, repeats, simultaneous, later };
}

test(`queue mode, main + 2 workers: ${TOTAL} deliveries at concurrency ${CONCURRENCY}, 30 % repeats → one business row per event, every request 200, no failed execution, both workers ran jobs`, { timeout: 20 * 60_000 }, () =>
	withLogs(stack, async () => {
		const { jobs, distinct, repeats, simultaneous, later } = buildJobs();
		const deliveries = jobs.flat();
		assert.equal(deliveries.length, TOTAL);
		const distinctKeys = new Set(deliveries.map((d) => d.tag.key));
		assert.equal(distinctKeys.size, distinct);

		const run = await runLoad(stack.webhookUrl, jobs, { concurrency: CONCURRENCY, timeoutMs: 180_000, deadlineMs: 15 * 60_000 });
		const { results } = run;
		const perSecond = results.length / run.seconds;
		const latencies = results.map((r) => r.ms).sort((a, b) => a - b);
		const p = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];

		assert.deepEqual(run.notSent, [], 'every delivery was sent before the deadline');
		assert.equal(results.length, TOTAL);
		assert.deepEqual(tally(results.map((r) => r.status)), { 200: TOTAL }, `answers: ${JSON.stringify(results.filter((r) => r.status !== 200).slice(0, 5).map((r) => [r.status, r.error ?? r.text.slice(0, 200)]))}`);
		assert.ok(run.maxInFlight <= CONCURRENCY);

		// Exactly one `processed` answer per event, every other delivery of it a `duplicate`.
		const answersByKey = new Map();
		for (const r of results) {
			assert.equal(r.json?.key, r.delivery.tag.key, `the answer names the delivery's key: ${r.text}`);
			const list = answersByKey.get(r.json.key) ?? [];
			list.push(r.json.status);
			answersByKey.set(r.json.key, list);
		}
		for (const [key, answers] of answersByKey) {
			assert.equal(answers.filter((a) => a === 'processed').length, 1, `${key}: ${answers.join(', ')}`);
			assert.ok(answers.every((a) => a === 'processed' || a === 'duplicate'), `${key}: ${answers.join(', ')}`);
		}
		const answerTally = tally(results.map((r) => r.json.status));
		assert.deepEqual(answerTally, { processed: distinct, duplicate: repeats });

		// The database: business_log has exactly one row per distinct event, processed_events one key each.
		const { rows: business } = await stack.keysDb.query('SELECT event_key, count(*)::int AS n FROM business_log GROUP BY event_key');
		assert.equal(business.length, distinct, 'business_log rows = distinct events');
		assert.deepEqual(business.filter((row) => row.n !== 1), [], 'no event has two business rows');
		assert.deepEqual(new Set(business.map((row) => row.event_key)), distinctKeys);
		const { rows: keys } = await stack.keysDb.query('SELECT count(*)::int AS n FROM processed_events');
		assert.equal(keys[0].n, distinct);

		// n8n's own records: one finished execution per delivery, none failed.
		const requestIds = new Set(results.map((r) => r.requestId));
		const executions = await waitFor(
			`n8n to record the ${TOTAL} executions`,
			async () => {
				const mine = (await stack.executions.list({ workflowId: stack.webhookWorkflowId })).filter((e) => requestIds.has(e.requestId));
				return mine.length === TOTAL ? mine : undefined;
			},
			{ timeoutMs: 180_000, intervalMs: 2_000, maxAttempts: 100 },
		);
		assert.deepEqual(tally(executions.map((e) => e.status)), { success: TOTAL });
		const { rows: unfinished } = await stack.n8nDb.query(
			`SELECT status, count(*)::int AS n FROM execution_entity WHERE "workflowId" = $1 AND status <> 'success' GROUP BY status`,
			[stack.webhookWorkflowId],
		);
		assert.deepEqual(unfinished, [], 'no execution of the webhook workflow is failed, crashed, waiting or still running');
		assert.equal(executions.filter((e) => e.nodesRun.includes(BUSINESS_STEP)).length, distinct, 'the business step ran once per event');
		assert.equal(executions.filter((e) => e.nodesRun.includes('Respond 200 duplicate')).length, repeats);

		// Which process ran them: n8n does not record the worker in execution_entity; each worker logs
		// "Worker started execution <id>" (info level). Every execution ran on exactly one worker.
		const perWorker = stack.workers.map((w) => ({ name: w.name, started: new Set(w.startedExecutions()), alive: w.alive() }));
		const executionIds = executions.map((e) => e.id);
		const onWorkers = executionIds.map((id) => perWorker.filter((w) => w.started.has(id)).length);
		assert.equal(onWorkers.filter((n) => n !== 1).length, 0, 'every execution was started by exactly one worker (none by the main)');
		const spread = perWorker.map((w) => executionIds.filter((id) => w.started.has(id)).length);
		for (const [i, count] of spread.entries()) assert.ok(count > 0, `worker ${i + 1} ran no execution`);
		for (const w of perWorker) assert.ok(w.alive, `${w.name} is still running`);
		const health = await fetch(`${stack.baseUrl}/healthz`, { signal: AbortSignal.timeout(5_000) });
		assert.equal(health.status, 200);

		report('queue mode', {
			deliveries: TOTAL,
			distinctEvents: distinct,
			repeats: `${repeats} (${simultaneous} sent at the same moment as the original, ${later} later)`,
			concurrency: CONCURRENCY,
			maxInFlight: run.maxInFlight,
			seconds: Number(run.seconds.toFixed(1)),
			requestsPerSecond: Number(perSecond.toFixed(1)),
			latencyMs: { p50: p(0.5), p95: p(0.95), max: latencies.at(-1) },
			answers: answerTally,
			businessRows: business.length,
			executions: executions.length,
			executionsPerWorker: Object.fromEntries(perWorker.map((w, i) => [w.name, spread[i]])),
		});
	}),
);
