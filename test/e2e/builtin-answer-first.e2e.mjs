// End-to-end: the answer-first built-in workflows (workflows/cloud/answer-first/<provider>.json,
// planner/builtIn/builtInAnswerFirst.ts) in a real n8n 2.41.1 with community packages turned off and
// this package not installed, as builtin.e2e.mjs runs the answer-last ones; with N8N_LINE=1 the
// `--n8n 1` variant on n8n 1.123.81. Stripe's workflow and Slack's are published side by side, each
// as the CLI writes it with the prebuilt file's settings but for the timings a test can wait out
// (lease 20 s, a check every 2 s, Max Attempts 3, backoff 1 s); the first test proves that is the
// only difference from the Cloud files. The business step's speed and failures come from a trigger
// on business_log, so the workflows' own Postgres node is what runs slowly or fails. One stack.
//   1. a 10 s business step answered 200 accepted within 1 s, processed once (both senders);
//   2. Slack's url_verification still answered; forged deliveries 401, a malformed one 400, nothing stored;
//   3. kill -9 of n8n right after both 2xx: once n8n is back, each event processed exactly once by
//      the Schedule Trigger's claim, nothing resent;
//   4. a step that always fails: a dead letter after Max Attempts; retried by the workflow's own
//      Run by Hand path (`n8n execute`), processed once;
//   5. a delivery over the record cap: not stored, answered last (200 processed).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import {
	BUSINESS_STEP,
	E2E_STRIPE_SECRET,
	runN8nCliBesideServer,
	sendEvent,
	startStack,
	waitFor,
	withStackLogs,
} from '../../scripts/harness/index.mjs';
import {
	behave,
	cancelDeadClientsStatements,
	installBusinessBehaviour,
	keyRow,
} from '../support/answerFirstStack.mjs';

const require = createRequire(import.meta.url);
const { signAs } = require('../support/signAs.js');
const { signDelivery, signerFor } = require('../support/signDelivery.js');
const { SIGNED_EXAMPLES } = require('../support/handshakeExamples.js');
const { PROVIDERS } = require('../../dist/nodes/shared/webhook/providers');

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const LINE = process.env.N8N_LINE === '1' ? '1' : '2';
/** Timings a test can wait out; everything else is the prebuilt file's. */
const TIMINGS = { lease: 20, checkEvery: 2, maxAttempts: 3, backoff: 1 };
const SLOW_SECONDS = 10;
const SLACK = PROVIDERS.find((/** @type {any} */ p) => p.value === 'slack');
const RETRY_BY_HAND_ID = 'AnswerFirstByHand1';
const SENDERS = /** @type {const} */ (['stripe', 'slack']);

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;
/** @type {any} the Stripe workflow as published */
let stripeWorkflow;
/** @type {any} the Slack workflow as published (stack.extraWorkflows entry) */
let slack;

/** The workflow as the CLI writes it for this provider, with the test's timings. */
function workflowFromCli(/** @type {string} */ provider) {
	const out = execFileSync(
		process.execPath,
		[
			path.join(ROOT, 'scripts/planner.mjs'),
			'--built-in',
			'--answer-first',
			'--provider',
			provider,
			'--lease',
			String(TIMINGS.lease),
			'--check-every',
			String(TIMINGS.checkEvery),
			'--max-attempts',
			String(TIMINGS.maxAttempts),
			'--backoff',
			String(TIMINGS.backoff),
			'--n8n',
			LINE,
		],
		{ encoding: 'utf8' },
	);
	return JSON.parse(out);
}

const cloudFile = (/** @type {string} */ provider) =>
	JSON.parse(
		readFileSync(path.join(ROOT, 'workflows', 'cloud', 'answer-first', `${provider}.json`), 'utf8'),
	);

before(
	async () => {
		execFileSync(process.execPath, [path.join(ROOT, 'scripts/build-planner.mjs')], {
			stdio: 'ignore',
		});
		stripeWorkflow = workflowFromCli('stripe');
		stack = await startStack({
			label: 'builtin-answer-first',
			builtInWorkflow: stripeWorkflow,
			extraWorkflows: [{ workflow: { ...workflowFromCli('slack'), id: 'AnswerFirstSlack01' } }],
			...(LINE === '1' ? { env: { WEBHOOK_SIGNING_SECRET: E2E_STRIPE_SECRET } } : {}),
		});
		slack = stack.extraWorkflows[0];
		const note = stripeWorkflow.nodes.find(
			(/** @type {any} */ n) => n.type === 'n8n-nodes-base.stickyNote',
		);
		const sql = /```sql\n([\s\S]*?)\n```/.exec(note.parameters.content)?.[1];
		assert.ok(sql, 'the sticky note carries the CREATE TABLE statements');
		await cancelDeadClientsStatements(stack.keysDb, stack.keysDatabase);
		// The Schedule Triggers checked from the first second, so n8n's connections were opened before that
		// setting, which reaches only new ones: end them (n8n's pool opens new ones), or a killed n8n's
		// sleeping insert would commit after its sleep.
		await stack.keysDb.query(
			`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			 WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
			[stack.keysDatabase],
		);
		await stack.keysDb.query(sql);
		await installBusinessBehaviour(stack.keysDb);
	},
	{ timeout: 60 * 60_000 },
);

after(async () => await stack?.stop(), { timeout: 120_000 });

const withLogs = (/** @type {() => Promise<void>} */ fn) => withStackLogs(stack, fn);

/** A fresh event of one sender, its key and its business step's event type. */
/**
 * @param {'stripe'|'slack'} sender
 * @param {string} name
 * @returns {{ sender: 'stripe'|'slack', type: string, key: string, body: any }}
 */
function event(sender, name, extra = {}) {
	const type = `af.${name}.${randomUUID().slice(0, 8)}`;
	const id = `Ev${randomUUID().replaceAll('-', '')}`;
	return sender === 'stripe'
		? { sender, type, key: `evt:${id}`, body: { id, type, ...extra } }
		: {
				sender,
				type,
				key: `slack:${id}`,
				body: { type, team_id: 'T1', event_id: id, event: { type: 'app_mention' }, ...extra },
			};
}

/** POSTs the event, signed with `secret`, to its sender's workflow; resolves with the answer. */
async function post(/** @type {any} */ e, { secret = E2E_STRIPE_SECRET, timeoutMs = 60_000 } = {}) {
	if (e.sender === 'stripe') {
		if (secret === E2E_STRIPE_SECRET) return await stack.send(e.body, { timeoutMs });
		return await sendEvent(stack.webhookUrl, e.body, {
			timeoutMs,
			headers: { 'stripe-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` },
		});
	}
	const signed = signAs(SLACK, {
		body: e.body,
		secret,
		url: slack.webhookUrl,
		eventId: e.body.event_id,
	});
	return await sendEvent(slack.webhookUrl, signed.body, {
		sign: false,
		headers: signed.headers,
		timeoutMs,
	});
}

const businessRows = async (/** @type {string} */ key) => (await stack.businessRows(key)).length;

/**
 * How many of these keys' business inserts run right now: the Postgres node writes its parameters
 * into the statement's text, so pg_stat_activity shows each insert's key.
 */
async function insertsRunningFor(/** @type {string[]} */ keys) {
	const { rows } = await stack.keysDb.query(
		`SELECT count(*)::int AS running FROM pg_stat_activity, unnest($2::text[]) AS k(key)
		 WHERE datname = $1 AND state = 'active' AND query ILIKE 'INSERT INTO business_log%'
		   AND position(k.key IN query) > 0`,
		[stack.keysDatabase, keys],
	);
	return rows[0].running;
}

/** The business rows of a key and the executions that ran the business step: why a key ran twice. */
async function whoInserted(/** @type {string} */ key) {
	const rows = await stack.businessRows(key);
	const executions = [];
	for (const id of [stack.webhookWorkflowId, slack.id])
		for (const x of await stack.executions.list({ workflowId: id }))
			if (
				x.nodesRun.includes(BUSINESS_STEP) &&
				x.items('Event to Run').some((/** @type {any} */ item) => item.key === key)
			)
				executions.push([x.id, x.mode, x.startedAt, x.status, x.nodesRun.join(' > ')]);
	return JSON.stringify({ key, rows, executions });
}

async function completed(/** @type {string} */ key, timeoutMs = 90_000) {
	return await waitFor(
		`${key} completed`,
		async () => {
			const row = await keyRow(stack.keysDb, key);
			return row?.status === 'completed' ? row : undefined;
		},
		{ timeoutMs, intervalMs: 250 },
	);
}

test('the published workflows are the Cloud files but for the timings: the same nodes, statements and wiring', () => {
	for (const [provider, published] of [
		['stripe', stripeWorkflow],
		['slack', workflowFromCli('slack')],
	]) {
		const file = cloudFile(provider);
		const shape = (/** @type {any} */ w) =>
			w.nodes.map((/** @type {any} */ n) => [n.name, n.type, n.parameters.query ?? null]);
		if (LINE === '2') assert.deepEqual(shape(published), shape(file), provider);
		else
			assert.deepEqual(
				shape(published).map(([name]) => name),
				shape(file).map(([name]) => name),
			);
		assert.deepEqual(published.connections, file.connections, provider);
		assert.deepEqual(
			published.nodes.filter((/** @type {any} */ n) => !n.type.startsWith('n8n-nodes-base.')),
			[],
		);
	}
	assert.equal(stack.ctx.extraEnv?.N8N_COMMUNITY_PACKAGES_ENABLED, 'false');
});

test(
	`a ${SLOW_SECONDS} s business step: answered 200 accepted within 1 s, then processed once (Stripe and Slack)`,
	{ timeout: 180_000 },
	() =>
		withLogs(async () => {
			// n8n's first request of a workflow loads it: warm both up, so the timing is of the answer alone.
			await Promise.all(
				SENDERS.map(async (sender) => {
					const warm = event(sender, 'warm');
					assert.equal((await post(warm)).status, 200);
					await completed(warm.key);
				}),
			);
			// One sender after the other is answered, their steps overlapping, as two senders' deliveries would.
			const slow = [];
			for (const sender of SENDERS) {
				const e = event(sender, 'slow');
				await behave(stack.keysDb, e.type, { sleep: SLOW_SECONDS });
				const answer = await post(e);
				assert.deepEqual([answer.status, answer.json], [200, { status: 'accepted' }], sender);
				assert.ok(answer.ms < 1000, `${sender}: answered in ${answer.ms} ms`);
				const row = await keyRow(stack.keysDb, e.key);
				assert.deepEqual([row.status, row.stored], ['in_progress', true]);
				slow.push({ e, answer });
			}
			const timings = [];
			for (const { e, answer } of slow) {
				const done = await completed(e.key, 60_000);
				assert.equal(done.attempts, 1);
				assert.equal(await businessRows(e.key), 1);
				// A repeat of the same delivery is a duplicate.
				const again = await post(e);
				assert.deepEqual([again.status, again.json?.status], [200, 'duplicate']);
				timings.push(`${e.sender} ${answer.ms} ms`);
			}
			process.stderr.write(`[builtin-answer-first] 10 s step answered in ${timings.join(', ')}\n`);
		}),
);

test(
	"Slack's url_verification answered; forged deliveries 401 and a malformed one 400, nothing stored",
	{ timeout: 120_000 },
	() =>
		withLogs(async () => {
			const keysBefore = (await stack.keyRows()).length;
			const example = SIGNED_EXAMPLES.slack;
			const headers = signDelivery(SLACK, signerFor(SLACK.signing, E2E_STRIPE_SECRET), {
				bytes: Buffer.from(example.body),
				headers: { ...example.headers, 'content-type': 'application/json' },
				nowSeconds: Math.floor(Date.now() / 1000),
			});
			const handshake = await sendEvent(slack.webhookUrl, example.body, { sign: false, headers });
			const expected = /** @type {any} */ (example).expected(E2E_STRIPE_SECRET);
			assert.deepEqual([handshake.status, handshake.text], [expected.statusCode, expected.body]);

			for (const sender of SENDERS) {
				const forged = await post(event(sender, 'forged'), { secret: 'not-the-secret' });
				assert.equal(forged.status, 401, sender);
				// Signed, but its id cannot be a key: answered 400 problem+json before anything is stored.
				const malformed = event(sender, 'malformed');
				if (sender === 'stripe') malformed.body.id = { not: 'an id' };
				if (sender === 'slack') malformed.body.event_id = { not: 'an id' };
				const answer = await post(malformed);
				assert.equal(answer.status, 400, `${sender}: ${answer.text}`);
				assert.match(answer.headers['content-type'], /application\/problem\+json/);
			}
			assert.equal((await stack.keyRows()).length, keysBefore, 'nothing stored');
		}),
);

test(
	'kill -9 of n8n right after the 2xx: once n8n is back, each event processed exactly once, nothing resent',
	{ timeout: 300_000 },
	() =>
		withLogs(async () => {
			const events = [event('stripe', 'crash'), event('slack', 'crash')];
			for (const e of events) await behave(stack.keysDb, e.type, { sleep: 60 });
			for (const e of events) {
				const answer = await post(e);
				assert.deepEqual([answer.status, answer.json], [200, { status: 'accepted' }]);
			}
			await waitFor(
				'both slow business steps to be running',
				async () => (await insertsRunningFor(events.map((e) => e.key))) === events.length,
				{ timeoutMs: 30_000, intervalMs: 100 },
			);
			// From now on the step is quick: the inserts already sleeping keep their 60 s, and die with n8n.
			for (const e of events) await behave(stack.keysDb, e.type, {});
			const killedAt = Date.now();
			await stack.crashAndRestartN8n();
			// The dead n8n's sleeping inserts are cancelled by PostgreSQL, never committed after their sleep
			// (client_connection_check_interval); the claim's own runs are quick.
			await waitFor(
				"PostgreSQL to cancel the dead execution's inserts",
				async () => (await stack.businessInsertsRunning()) === 0,
				{ timeoutMs: 60_000, intervalMs: 200 },
			);
			const seconds = [];
			for (const e of events) {
				const row = await completed(e.key, (TIMINGS.lease + 60) * 1000);
				seconds.push(((Date.now() - killedAt) / 1000).toFixed(1));
				assert.equal(row.attempts, 2, 'run again once, by the claim');
				assert.equal(await businessRows(e.key), 1);
			}
			// Nothing else runs it: a few checks later, still one row each, and no insert running.
			await new Promise((resolve) => setTimeout(resolve, TIMINGS.checkEvery * 3 * 1000));
			assert.equal(await stack.businessInsertsRunning(), 0);
			for (const e of events) assert.equal(await businessRows(e.key), 1, await whoInserted(e.key));
			process.stderr.write(
				`[builtin-answer-first] kill -9: redriven and completed ${seconds.join(' s, ')} s after the kill (lease ${TIMINGS.lease} s)\n`,
			);
		}),
);

test(
	"a step that always fails: a dead letter after Max Attempts; the workflow's Run by Hand retry processes it once",
	{ timeout: 300_000 },
	() =>
		withLogs(async () => {
			const events = [event('stripe', 'dead'), event('slack', 'dead')];
			// The workflow's own Run by Hand path, its Set node given the keys as a user writes them in, run
			// as n8n runs a manual trigger from the command line: an unpublished copy of those nodes alone
			// (`n8n execute` starts at a workflow's first trigger, where the editor starts at the one clicked).
			const byHandPath = [
				'Run by Hand: Dead Letters',
				'Dead Letters to Retry or Drop',
				'Retry Dead Letters',
				'Drop Dead Letters',
			];
			const copy = {
				...structuredClone(stripeWorkflow),
				id: RETRY_BY_HAND_ID,
				name: `${stripeWorkflow.name} (Run by Hand)`,
				active: false,
			};
			copy.nodes = copy.nodes.filter((/** @type {any} */ n) => byHandPath.includes(n.name));
			copy.connections = Object.fromEntries(
				Object.entries(copy.connections).filter(([from]) => byHandPath.includes(from)),
			);
			assert.equal(copy.nodes.length, byHandPath.length);
			const keys = copy.nodes.find(
				(/** @type {any} */ n) => n.name === 'Dead Letters to Retry or Drop',
			);
			keys.parameters.assignments.assignments.find(
				(/** @type {any} */ a) => a.name === 'retry',
			).value = events.map((e) => e.key).join(', ');
			const file = path.join(stack.ctx.logDir, 'retry-by-hand.json');
			writeFileSync(file, JSON.stringify(copy));
			const imported = runN8nCliBesideServer(stack.ctx, ['import:workflow', `--input=${file}`], {
				label: 'import-retry-by-hand',
			});
			for (const e of events) {
				await behave(stack.keysDb, e.type, { fail: true });
				const answer = await post(e);
				assert.deepEqual([answer.status, answer.json], [200, { status: 'accepted' }]);
			}
			for (const e of events) {
				const row = await waitFor(
					`${e.key} to become a dead letter`,
					async () => {
						const found = await keyRow(stack.keysDb, e.key);
						return found?.status === 'dead_letter' ? found : undefined;
					},
					{ timeoutMs: 90_000, intervalMs: 250 },
				);
				assert.deepEqual([row.attempts, row.stored], [TIMINGS.maxAttempts, true]);
				assert.equal(await businessRows(e.key), 0);
				await behave(stack.keysDb, e.type, {});
			}
			await imported;
			const retriedAt = Date.now();
			// Throws unless n8n ends with exit 0; the keys' rows say whether Retry Dead Letters ran.
			const output = await runN8nCliBesideServer(
				stack.ctx,
				['execute', `--id=${RETRY_BY_HAND_ID}`],
				{ label: 'execute-retry-by-hand' },
			);
			for (const e of events)
				assert.notEqual((await keyRow(stack.keysDb, e.key)).status, 'dead_letter', output);
			for (const e of events) {
				const row = await completed(e.key, 60_000);
				assert.equal(row.attempts, 1, 'counted afresh, run once');
				const rows = await stack.businessRows(e.key);
				assert.equal(rows.length, 1);
				assert.ok(new Date(rows[0].created_at).getTime() >= retriedAt - 1000);
			}
			process.stderr.write(
				`[builtin-answer-first] dead letters after ${TIMINGS.maxAttempts} attempts, retried by hand: completed ${((Date.now() - retriedAt) / 1000).toFixed(1)} s after the retry\n`,
			);
		}),
);

test(
	'a delivery over the record cap: not stored, answered last (200 processed after its business step)',
	{ timeout: 120_000 },
	() =>
		withLogs(async () => {
			for (const sender of SENDERS) {
				const e = event(sender, 'big', { fill: 'x'.repeat(300 * 1024) });
				await behave(stack.keysDb, e.type, { sleep: 1 });
				const answer = await post(e);
				assert.deepEqual([answer.status, answer.json], [200, { status: 'processed' }], sender);
				assert.ok(answer.ms >= 1000, `${sender}: answered after the 1 s step (${answer.ms} ms)`);
				const row = await keyRow(stack.keysDb, e.key);
				assert.deepEqual([row.status, row.stored], ['completed', false]);
				assert.equal(await businessRows(e.key), 1);
			}
		}),
);

test('nothing ran any business step twice, and no execution of either workflow used the package', async () => {
	const { rows } = await stack.keysDb.query(
		`SELECT event_key, count(*)::int AS n FROM business_log GROUP BY event_key HAVING count(*) > 1`,
	);
	assert.deepEqual(rows, []);
	assert.ok(BUSINESS_STEP);
});
