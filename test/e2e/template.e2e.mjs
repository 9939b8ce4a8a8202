// End-to-end: the packed package installed into a real n8n 2.41.1 server, driven through the
// unchanged template workflows/idempotent-webhook.json, checked against what n8n recorded in its own
// database and what the workflow wrote to PostgreSQL. Run with `npm run test:e2e` (node --test);
// `npm run test:e2e:n8n1` runs every test of this file on n8n 1.123.81 (N8N_LINE=1), whose error
// output takes other items than 2.x's (nodes/shared/run/itemErrors.ts).
// The file is not named *.test.* on purpose: the unit tests' jest must not pick it up.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import {
	BUSINESS_STEP,
	deliverWithFailingBusinessStep,
	runBurst,
	runSeedSequence,
	startStack,
	withStackLogs,
} from '../../scripts/harness/index.mjs';
import { sha256Hex } from '../support/webhookItems.js';

const PURGE_EVERY_SECONDS = 5;

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;

function ran(execution, node) {
	return execution.nodesRun.includes(node);
}

async function webhookExecutions() {
	return await stack.executions.list({ workflowId: stack.webhookWorkflowId });
}

/** Runs a check; on failure prints the tail of n8n's log, where the cause usually is. */
const withN8nLog = (fn) => withStackLogs(stack, fn);

before(
	async () => {
		stack = await startStack({ label: 'e2e', purgeEverySeconds: PURGE_EVERY_SECONDS });
	},
	{ timeout: 60 * 60_000 },
);

after(
	async () => {
		await stack?.stop();
	},
	{ timeout: 120_000 },
);

test(
	'seed sequence: A, A again re-signed with a later timestamp, B → 3 executions, 2 business rows, the repeat answered as a duplicate',
	{ timeout: 180_000 },
	() =>
		withN8nLog(async () => {
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
			assert.notEqual(first.signature, repeat.signature);

			const executions = await webhookExecutions();
			assert.equal(executions.length, 3, 'n8n recorded one execution per delivery');
			for (const execution of executions) {
				assert.equal(execution.status, 'success');
				assert.equal(execution.mode, 'webhook');
				if (stack.publishedVersionId && execution.workflowVersionId) {
					assert.equal(
						execution.workflowVersionId,
						stack.publishedVersionId,
						'executions ran the published version',
					);
				}
			}

			// The repeat: routed duplicate and answered by Reserve (2.3), never the business step.
			assert.deepEqual(repeat.execution.nodesRun, ['Webhook', 'Idempotency Reserve']);
			assert.equal(repeat.execution.reserveRoute(), 'duplicate');
			assert.ok(!ran(repeat.execution, BUSINESS_STEP));
			assert.equal(repeat.execution.trigger.headers['stripe-signature'], repeat.signature);
			assert.equal(first.execution.trigger.headers['stripe-signature'], first.signature);
			const reserved = repeat.execution.items('Idempotency Reserve', 1)[0];
			assert.equal(reserved.idempotency.key, 'evt:evt_A');
			assert.equal(reserved.idempotency.isNew, false);
			// Complete Key ran after A's business step, so its repeat is a completed event.
			assert.equal(reserved.idempotency.status, 'completed');
			assert.ok(
				!Number.isNaN(Date.parse(reserved.idempotency.firstSeenAt)),
				'a sequential duplicate knows when the key was first seen',
			);

			for (const step of [first, other]) {
				assert.deepEqual(step.execution.nodesRun, [
					'Webhook',
					'Idempotency Reserve',
					BUSINESS_STEP,
					'Complete Key',
				]);
			}

			const rows = await stack.businessRows();
			assert.deepEqual(
				rows.map((row) => [row.event_key, row.event_type]),
				[
					['evt:evt_A', 'payment_intent.succeeded'],
					['evt:evt_B', 'payment_intent.succeeded'],
				],
			);
			assert.deepEqual([first.businessRows, repeat.businessRows, other.businessRows], [1, 1, 2]);
			assert.deepEqual(
				(await stack.keyRows()).map((row) => row.key),
				['evt:evt_A', 'evt:evt_B'],
			);
		}),
);

test(
	'a body without id is keyed by the SHA-256 of the exact bytes sent; the second copy is a duplicate',
	{ timeout: 120_000 },
	() =>
		withN8nLog(async () => {
			const body = Buffer.from('{ "type" :  "ping",\n  "n": 1 }', 'utf8');
			const expectedKey = `sha256:${sha256Hex(body)}`;
			// The raw bytes, not a re-serialisation of the parsed body.
			assert.notEqual(
				expectedKey,
				`sha256:${sha256Hex(Buffer.from(JSON.stringify(JSON.parse(body.toString('utf8')))))}`,
			);
			const executionsBefore = (await webhookExecutions()).length;

			const first = await stack.deliver(body, { contentType: 'application/json' });
			assert.equal(first.response.status, 200);
			assert.deepEqual(first.response.json, { status: 'processed' });
			assert.equal(first.branch, 'processed');
			assert.deepEqual(
				(await stack.keyRows(expectedKey)).map((row) => row.key),
				[expectedKey],
			);
			assert.deepEqual(
				(await stack.businessRows(expectedKey)).map((row) => row.event_type),
				['ping'],
			);

			const second = await stack.deliver(body, { contentType: 'application/json' });
			assert.equal(second.response.status, 200);
			assert.deepEqual(second.response.json, { status: 'duplicate', key: expectedKey });
			assert.equal(second.execution.reserveRoute(), 'duplicate');
			assert.ok(!ran(second.execution, BUSINESS_STEP));
			assert.equal((await stack.businessRows(expectedKey)).length, 1);
			assert.equal((await webhookExecutions()).length, executionsBefore + 2);
		}),
);

test(
	'64 simultaneous deliveries of one new event → one processed, the rest 409 while in flight or 200 duplicate, exactly one business row',
	{ timeout: 300_000 },
	() =>
		withN8nLog(async () => {
			const event = { id: 'evt_burst_64', type: 'invoice.paid' };
			const key = 'evt:evt_burst_64';
			const { answers, processed, inFlight, duplicates, executions } = await runBurst(stack, event);
			assert.equal(processed.length, 1, `answers: ${JSON.stringify(answers)}`);
			assert.equal(inFlight.length + duplicates.length, 63, `answers: ${JSON.stringify(answers)}`);
			for (const r of inFlight) {
				// In flight: the sender is told to come back once the lease could have ended.
				assert.ok(r.json.retryAfterSeconds >= 1 && r.json.retryAfterSeconds <= 300, r.text);
				assert.equal(r.headers['retry-after'], String(r.json.retryAfterSeconds));
			}
			assert.equal((await stack.businessRows(key)).length, 1);
			assert.equal((await stack.keyRows(key)).length, 1);

			assert.equal(executions.filter((e) => ran(e, BUSINESS_STEP)).length, 1);
			const routed = (route) => executions.filter((e) => e.reserveRoute() === route).length;
			assert.equal(routed('duplicate'), duplicates.length);
			assert.equal(routed('in flight'), inFlight.length);
			assert.ok(executions.every((e) => e.status === 'success'));

			// The senders that got 409 come back: the event is completed by now, so each is a 200 duplicate.
			const retried = await stack.send(event);
			assert.deepEqual([retried.status, retried.json?.status], [200, 'duplicate']);
			assert.equal((await stack.businessRows(key)).length, 1);
		}),
);

test(
	'a failing business step → 500 to the sender, key released; the retry is processed once',
	{ timeout: 180_000 },
	() =>
		withN8nLog(async () => {
			const event = { id: 'evt_F', type: 'fail.me' };
			const key = 'evt:evt_F';
			const failed = await deliverWithFailingBusinessStep(stack, event);
			assert.equal(failed.response.status, 500);
			assert.deepEqual(failed.response.json, { status: 'failed', released: true });
			assert.deepEqual(failed.execution.nodesRun, [
				'Webhook',
				'Idempotency Reserve',
				BUSINESS_STEP,
				'Release Key',
				'Respond 500',
			]);
			assert.deepEqual(failed.execution.items('Release Key')[0].idempotency, {
				key,
				released: true,
			});
			assert.deepEqual(await stack.keyRows(key), [], 'the key was released');
			assert.deepEqual(await stack.businessRows(key), []);

			const retry = await stack.deliver(event);
			assert.equal(retry.response.status, 200);
			assert.deepEqual(retry.response.json, { status: 'processed' });
			assert.equal(retry.branch, 'processed');
			assert.equal((await stack.businessRows(key)).length, 1);
			assert.equal((await stack.keyRows(key)).length, 1);

			const again = await stack.deliver(event);
			assert.equal(again.response.status, 200);
			assert.deepEqual(again.response.json, { status: 'duplicate', key });
			assert.equal((await stack.businessRows(key)).length, 1);
		}),
);

test(
	'the purge template deletes only keys older than its 30-day retention',
	{ timeout: 180_000 },
	() =>
		withN8nLog(async () => {
			const old = ['evt:purge_old_1', 'evt:purge_old_2', 'sha256:purge_old_3'];
			const recent = ['evt:purge_recent_29d', 'evt:purge_recent_1h'];
			const keptBefore = (await stack.keyRows()).map((row) => row.key);
			assert.ok(keptBefore.length > 0, 'earlier tests left keys');
			await stack.keysDb.query(
				`INSERT INTO processed_events (key, first_seen)
			 SELECT k, now() - interval '40 days' FROM unnest($1::text[]) AS k
			 UNION ALL SELECT $2, now() - interval '29 days'
			 UNION ALL SELECT $3, now() - interval '1 hour'`,
				[old, recent[0], recent[1]],
			);
			const inserted = new Date();

			const run = await stack.waitForPurgeRunAfter(inserted, {
				timeoutMs: (PURGE_EVERY_SECONDS + 60) * 1000,
			});
			assert.equal(run.status, 'success', run.error);
			assert.deepEqual(run.nodesRun, ['Schedule Trigger', 'Purge Keys']);
			const summary = run.items('Purge Keys')[0];
			assert.equal(typeof summary.deleted, 'number');
			assert.ok(summary.batches >= 1);
			const cutoffAgeDays = (Date.now() - new Date(summary.cutoff).getTime()) / 86_400_000;
			assert.ok(cutoffAgeDays > 29.9 && cutoffAgeDays < 30.1, `cutoff ${summary.cutoff}`);

			const remaining = new Set((await stack.keyRows()).map((row) => row.key));
			for (const key of old) assert.ok(!remaining.has(key), `${key} (40 days old) was purged`);
			for (const key of [...recent, ...keptBefore])
				assert.ok(remaining.has(key), `${key} was kept`);

			// Every purge run so far together deleted exactly the three old keys (a run may have started
			// a moment before the insert and taken some of them).
			const runs = await stack.executions.list({ workflowId: stack.purgeWorkflowId });
			const deleted = runs
				.flatMap((e) => e.items('Purge Keys'))
				.reduce((sum, item) => sum + (item?.deleted ?? 0), 0);
			assert.equal(deleted, old.length);
		}),
);

// Issue 15: JSON.parse makes one number of these two ids; the key must still tell them apart.
test(
	'two ids beyond 2^53 that JSON.parse rounds to one number → two processed events, keys with the exact digits',
	{ timeout: 120_000 },
	() =>
		withN8nLog(async () => {
			const bodies = ['{"id": 98765432101234567891}', '{"id": 98765432101234567892}'];
			const keys = ['evt:98765432101234567891', 'evt:98765432101234567892'];
			assert.equal(JSON.parse(bodies[0]).id, JSON.parse(bodies[1]).id, 'one number to JavaScript');
			const steps = [];
			for (const body of bodies) {
				steps.push(await stack.deliver(Buffer.from(body)));
			}
			assert.deepEqual(
				steps.map((step) => [step.response.status, step.response.json]),
				keys.map(() => [200, { status: 'processed' }]),
			);
			// Each id kept all its digits: two keys, not one.
			for (const key of keys) assert.equal((await stack.keyRows(key)).length, 1, key);
			for (const step of steps)
				assert.ok(ran(step.execution, BUSINESS_STEP), `ran ${step.execution.nodesRun.join(' → ')}`);
			for (const key of keys) {
				assert.equal((await stack.businessRows(key)).length, 1, `one business row for ${key}`);
				assert.equal((await stack.keyRows(key)).length, 1, `one key row ${key}`);
			}
		}),
);

// A delivery whose id can never be a key is answered 400 with its reason, so the sender stops
// retrying; a failure on our side stays 500 (the sender retries) and the execution still fails.
// Reserve 2.2 answers both itself (Answer Problems): nothing runs after it.
const ANSWERED_BY_RESERVE = ['Webhook', 'Idempotency Reserve'];
const isProblem = (response) =>
	/^application\/problem\+json/.test(response.headers['content-type'] ?? '');

test(
	'a signed delivery whose id is an object → 400 problem+json naming the reason, nothing reserved, the execution a success',
	{ timeout: 120_000 },
	() =>
		withN8nLog(async () => {
			const keysBefore = (await stack.keyRows()).length;
			const rowsBefore = (await stack.businessRows()).length;
			const { response, execution } = await stack.deliver(Buffer.from('{"id":{"a":1},"type":"x"}'));
			assert.equal(response.status, 400, response.text);
			assert.ok(isProblem(response), response.headers['content-type']);
			assert.deepEqual(Object.keys(response.json).sort(), ['detail', 'status', 'title', 'type']);
			assert.equal(response.json.status, 400);
			assert.match(response.json.type, /\/docs\/errors\.md#invalid-key$/);
			assert.equal(response.json.title, 'The event id cannot be an idempotency key');
			assert.match(response.json.detail, /is an object, not a text or number/);
			assert.equal(execution.status, 'success');
			assert.deepEqual(execution.nodesRun, ANSWERED_BY_RESERVE);
			assert.equal((await stack.keyRows()).length, keysBefore, 'nothing reserved');
			assert.equal((await stack.businessRows()).length, rowsBefore);
		}),
);

test(
	'the key store refuses the reservation → 500 problem+json that names nothing internal, the execution failed',
	{ timeout: 120_000 },
	() =>
		withN8nLog(async () => {
			const event = { id: 'evt_store_refuses', type: 'x' };
			// A statement error on this one key only: the INSERT breaks a CHECK constraint.
			await stack.keysDb.query(
				`ALTER TABLE processed_events ADD CONSTRAINT e2e_refuse CHECK (key <> 'evt:evt_store_refuses') NOT VALID`,
			);
			let delivered;
			try {
				delivered = await stack.deliver(event);
			} finally {
				await stack.keysDb.query(`ALTER TABLE processed_events DROP CONSTRAINT e2e_refuse`);
			}
			const { response, execution } = delivered;
			assert.equal(response.status, 500, response.text);
			assert.ok(isProblem(response), response.headers['content-type']);
			assert.equal(response.json.status, 500);
			assert.equal(response.json.type, 'about:blank');
			assert.doesNotMatch(
				response.text,
				/processed_events|constraint|e2e_refuse|SQLSTATE|postgres/i,
			);
			// The execution failed (for the Error Workflow and the executions list), after the answer.
			assert.equal(execution.status, 'error');
			assert.deepEqual(execution.nodesRun, ANSWERED_BY_RESERVE);
			assert.deepEqual(await stack.keyRows('evt:evt_store_refuses'), []);
			// Once the cause is gone, the sender's retry goes through.
			const retry = await stack.deliver(event);
			assert.deepEqual([retry.response.status, retry.branch], [200, 'processed']);
		}),
);
