// The exactly-once template (workflows/exactly-once-postgres.json) against the faults that made the
// webhook template run a business step twice, in a real n8n 2.41.1 with the packed package:
//   - n8n killed with kill -9 while the business INSERT runs (an AFTER INSERT trigger sleeps, so the
//     row exists, uncommitted), then started again and the event resent like a provider. The same
//     rounds run the webhook template beside it, whose autocommit INSERT PostgreSQL finishes and
//     commits for the dead client: its takeover inserts a second row (the limit the README states).
//   - the key store's PostgreSQL stopped (immediate, as a crash) while the transaction is open;
//   - the lease ends while the slow statement runs and 32 retries arrive together;
//   - the webhook template with a step far longer than its lease, kept while the execution runs.
// No client_connection_check_interval here: nothing cancels the dead client's statement.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { sendEvent, sleep, startStack, waitFor } from '../../scripts/harness/index.mjs';
import { importableCopy, withParameters } from '../../scripts/harness/templates.mjs';
import { installSlowSteps, report, withLogs } from './support.mjs';

const LEASE_SECONDS = 20;
/** Crash rounds; each kills n8n with EVENTS_PER_ROUND exactly-once events (and one plain one) in flight. */
const ROUNDS = Number(process.env.EXACTLY_ONCE_CRASH_ROUNDS ?? 2);
const EVENTS_PER_ROUND = 5;
const SLOW_TYPE = 'slow.business.step';

// The 1 s copy stands for a lease that ends while its execution runs: it is not kept (Keep the
// Lease While Running off), as before that setting; the crash rounds keep theirs.
const exactlyOnceCopy = (id, path, leaseSeconds) => {
	const workflow = withParameters(importableCopy('workflows/exactly-once-postgres.json', id), {
		'Idempotency Reserve': { leaseSeconds, keepLease: leaseSeconds >= LEASE_SECONDS },
	});
	workflow.nodes.find((node) => node.type === 'n8n-nodes-base.webhook').parameters.path = path;
	return { workflow };
};

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;
/** The exactly-once template with the lease of the crash rounds, and a copy with a 1 s lease. */
let exactlyOnce;
let shortLease;

before(
	async () => {
		stack = await startStack({
			label: 'faults_exactly_once',
			keyStore: { separate: true },
			templateParameters: { 'Idempotency Reserve': { leaseSeconds: LEASE_SECONDS } },
			extraWorkflows: [
				exactlyOnceCopy('ExactlyOnceTmpl01', 'exactly-once-webhook', LEASE_SECONDS),
				exactlyOnceCopy('ExactlyOnceShort1', 'exactly-once-short-lease', 1),
			],
		});
		[exactlyOnce, shortLease] = stack.extraWorkflows;
		const db = stack.keysDb;
		await installSlowSteps(db);
	},
	{ timeout: 60 * 60_000 },
);

after(async () => await stack?.stop(), { timeout: 120_000 });

const event = (id) => ({ id, type: SLOW_TYPE });
const keyOf = (id) => `evt:${id}`;

async function makeSlow(ids, seconds) {
	await stack.keysDb.query(
		`INSERT INTO slow_business_step SELECT unnest($1::text[]), $2 ON CONFLICT (event_key) DO UPDATE SET seconds = $2`,
		[ids.map(keyOf), seconds],
	);
}

async function makeFast() {
	await stack.keysDb.query(`DELETE FROM slow_business_step`);
}

/** Business INSERTs running in the keys database right now (the slow steps). */
const insertsRunning = async () => await stack.businessInsertsRunning();

const rowCount = async (id) => (await stack.businessRows(keyOf(id))).length;

async function waitForLeasesToEnd(ids) {
	await waitFor(
		'the dead executions’ leases to end',
		async () => {
			const { rows } = await stack.keysDb.query(
				`SELECT count(*)::int AS leased FROM processed_events WHERE key = ANY($1) AND lease_until > now()`,
				[ids.map(keyOf)],
			);
			return rows[0].leased === 0;
		},
		{ timeoutMs: (LEASE_SECONDS + 30) * 1000, intervalMs: 500 },
	);
}

/** A delivery whose answer is never awaited for its content (n8n dies before it answers). */
const sendUnanswered = (url, id) =>
	sendEvent(url, event(id), { timeoutMs: 120_000 }).catch(() => undefined);

/** Resends like a provider, on any non-2xx, until a 2xx (bounded); returns the answers in order. */
async function resendUntilAccepted(id, to, { tries = 30, pauseMs = 2000 } = {}) {
	const answers = [];
	for (let attempt = 0; attempt < tries; attempt++) {
		const { response } = await stack.deliver(event(id), { to });
		answers.push(`${response.status} ${response.json?.status ?? ''}`.trim());
		if (response.status >= 200 && response.status < 300) return answers;
		await sleep(pauseMs);
	}
	throw new Error(`${id} was never accepted: ${answers.join(', ')}`);
}

test(
	`kill -9 during the business INSERT, ${ROUNDS} rounds × ${EVENTS_PER_ROUND} events: the exactly-once template ends with one row for each, the webhook template with two`,
	{ timeout: ROUNDS * 300_000 },
	() =>
		withLogs(stack, async () => {
			const outcomes = { exactlyOnce: [], webhookTemplate: [] };
			for (let round = 1; round <= ROUNDS; round++) {
				const ids = Array.from(
					{ length: EVENTS_PER_ROUND },
					(_, i) => `evt_eo_crash_${round}_${i}`,
				);
				const plainId = `evt_plain_crash_${round}`;
				await makeSlow([...ids, plainId], 8);
				// First deliveries, never answered: n8n dies while each one's INSERT sleeps.
				const lost = [
					...ids.map((id) => sendUnanswered(exactlyOnce.webhookUrl, id)),
					sendUnanswered(stack.webhookUrl, plainId),
				];
				await waitFor(
					`the ${EVENTS_PER_ROUND + 1} business INSERTs to run`,
					async () => (await insertsRunning()) >= EVENTS_PER_ROUND + 1,
					{ timeoutMs: 60_000, intervalMs: 100 },
				);
				await stack.crashAndRestartN8n();
				await Promise.all(lost);
				await waitFor(
					'the dead clients’ INSERTs to end',
					async () => (await insertsRunning()) === 0,
					{
						timeoutMs: 60_000,
						intervalMs: 200,
					},
				);
				const afterCrash = {
					exactlyOnce: await Promise.all(ids.map(rowCount)),
					webhookTemplate: await rowCount(plainId),
				};
				// Nothing of the exactly-once transactions committed; the autocommit INSERT did.
				assert.deepEqual(
					afterCrash.exactlyOnce,
					ids.map(() => 0),
				);
				assert.equal(afterCrash.webhookTemplate, 1);

				await makeFast();
				await waitForLeasesToEnd([...ids, plainId]);
				for (const id of ids) await resendUntilAccepted(id, exactlyOnce);
				await resendUntilAccepted(plainId, undefined);
				const rows = await Promise.all(ids.map(rowCount));
				assert.deepEqual(
					rows,
					ids.map(() => 1),
					`round ${round}: one row per event`,
				);
				outcomes.exactlyOnce.push(...rows);
				outcomes.webhookTemplate.push(await rowCount(plainId));
				// Later resends are duplicates and add nothing.
				const late = await stack.deliver(event(ids[0]), { to: exactlyOnce });
				assert.deepEqual([late.response.status, late.response.json?.status], [200, 'duplicate']);
				assert.equal(await rowCount(ids[0]), 1);
			}
			// The webhook template's stated limit, reported as observed (the README's guarantees table).
			assert.ok(
				outcomes.webhookTemplate.every((rows) => rows === 2),
				`webhook template rows: ${outcomes.webhookTemplate}`,
			);
			report('exactly-once crash', {
				rounds: ROUNDS,
				eventsKilledMidInsert: outcomes.exactlyOnce.length,
				exactlyOnceRows: outcomes.exactlyOnce,
				webhookTemplateRows: outcomes.webhookTemplate,
			});
		}),
);

test(
	"the key store's PostgreSQL stopped (immediate) while the transaction is open: the dead transaction commits nothing, one row in the end",
	{ timeout: 300_000 },
	() =>
		withLogs(stack, async () => {
			const id = 'evt_eo_pg_restart';
			await makeSlow([id], 6);
			const first = sendEvent(exactlyOnce.webhookUrl, event(id), { timeoutMs: 120_000 });
			await waitFor('the business INSERT to run', async () => (await insertsRunning()) >= 1, {
				timeoutMs: 60_000,
				intervalMs: 100,
			});
			const server = stack.restartableKeyServer;
			await server.stopServer({ mode: 'immediate' });
			await server.startServer();
			const answer = await first;
			let answers = [];
			if (answer.status === 200) {
				// The step retries a lost connection for 5 s (connectionRetry.ts): the server was back in
				// time, and the rolled-back transaction ran again there, once.
				assert.equal(answer.json?.status, 'processed', JSON.stringify(answer.json));
				assert.equal(await rowCount(id), 1);
				await makeFast();
			} else {
				assert.ok(answer.status >= 500, `the interrupted delivery was answered ${answer.status}`);
				assert.equal(await rowCount(id), 0, 'a 500 left no row');
				await makeFast();
				answers = await resendUntilAccepted(id, exactlyOnce);
				assert.equal(answers.at(-1), '200 processed');
				assert.equal(await rowCount(id), 1);
			}
			const late = await stack.deliver(event(id), { to: exactlyOnce });
			assert.equal(late.response.json?.status, 'duplicate');
			assert.equal(await rowCount(id), 1);
			report('exactly-once, key store stopped mid-transaction', {
				firstAnswer: answer.status,
				resends: answers,
				businessRows: 1,
			});
		}),
);

test(
	'the lease (1 s) ends while a slow INSERT (4 s) runs and 32 retries arrive together: one row, no takeover, no retry answered as new',
	{ timeout: 300_000 },
	() =>
		withLogs(stack, async () => {
			const id = 'evt_eo_lease_race';
			await makeSlow([id], 4);
			const first = stack.deliver(event(id), { to: shortLease, timeoutMs: 120_000 });
			await waitFor('the business INSERT to run', async () => (await insertsRunning()) >= 1, {
				timeoutMs: 60_000,
				intervalMs: 50,
			});
			await sleep(1200); // the lease has ended; the step holds the key row locked
			const retries = await Promise.all(
				Array.from({ length: 32 }, () =>
					sendEvent(shortLease.webhookUrl, event(id), { timeoutMs: 120_000 }),
				),
			);
			const processed = await first;
			assert.deepEqual(
				[processed.response.status, processed.response.json?.status],
				[200, 'processed'],
			);
			const answers = retries.map((r) => `${r.status} ${r.json?.status ?? ''}`.trim());
			// A retry that tried to take the key over waited for the row: it then found it completed (409
			// from its snapshot, or 200 duplicate), or gave up after the 2 s lock bound (500, retried
			// later). None is answered as new.
			for (const r of retries)
				assert.ok(
					[200, 409, 500].includes(r.status) && r.json?.status !== 'processed',
					`answers: ${answers}`,
				);
			assert.equal(await rowCount(id), 1);
			const { rows } = await stack.keysDb.query(
				'SELECT status, attempts FROM processed_events WHERE key = $1',
				[keyOf(id)],
			);
			assert.deepEqual(rows, [{ status: 'completed', attempts: 1 }]);
			const late = await stack.deliver(event(id), { to: shortLease });
			assert.equal(late.response.json?.status, 'duplicate');
			const tally = {};
			for (const answer of answers) tally[answer] = (tally[answer] ?? 0) + 1;
			report('exactly-once, lease ended during the statement', { retries: tally, businessRows: 1 });
		}),
);

test(
	`the webhook template, a business step of 75 s under its ${LEASE_SECONDS} s lease: the lease is kept while the execution runs, so the sender's retries after the lease are 409 in flight, never a second run; then a duplicate`,
	{ timeout: 300_000 },
	() =>
		withLogs(stack, async () => {
			const id = 'evt_plain_slow_step';
			const STEP_SECONDS = 75;
			await makeSlow([id], STEP_SECONDS);
			const startedAt = Date.now();
			const first = stack.deliver(event(id), { timeoutMs: (STEP_SECONDS + 60) * 1000 });
			await waitFor('the business INSERT to run', async () => (await insertsRunning()) >= 1, {
				timeoutMs: 60_000,
				intervalMs: 100,
			});
			const retriesInFlight = [];
			// Past one lease, then past two and a half: each time the reservation's own lease has ended.
			for (const afterSeconds of [LEASE_SECONDS + 5, LEASE_SECONDS * 2.5]) {
				await sleep(Math.max(0, startedAt + afterSeconds * 1000 - Date.now()));
				const { rows } = await stack.keysDb.query(
					'SELECT status, attempts, lease_until > now() AS leased FROM processed_events WHERE key = $1',
					[keyOf(id)],
				);
				assert.deepEqual(rows, [{ status: 'in_progress', attempts: 1, leased: true }]);
				const retry = await stack.deliver(event(id));
				assert.deepEqual(
					[retry.response.status, retry.response.json?.status],
					[409, 'in_progress'],
					retry.response.text,
				);
				retriesInFlight.push(`${retry.response.status} after ${afterSeconds} s`);
			}
			const processed = await first;
			assert.deepEqual(
				[processed.response.status, processed.response.json?.status],
				[200, 'processed'],
			);
			const late = await stack.deliver(event(id));
			assert.deepEqual([late.response.status, late.response.json?.status], [200, 'duplicate']);
			assert.equal(await rowCount(id), 1);
			const { rows } = await stack.keysDb.query(
				'SELECT status, attempts FROM processed_events WHERE key = $1',
				[keyOf(id)],
			);
			assert.deepEqual(rows, [{ status: 'completed', attempts: 1 }]);
			report('webhook template, step longer than the lease', {
				leaseSeconds: LEASE_SECONDS,
				stepSeconds: STEP_SECONDS,
				retries: retriesInFlight,
				businessRows: 1,
			});
		}),
);
