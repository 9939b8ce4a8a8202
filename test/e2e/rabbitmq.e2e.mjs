// A RabbitMQ queue consumed exactly once (issue 38), end to end: the template
// workflows/rabbitmq-consumer.json (RabbitMQ Trigger acking only successful executions → Reserve
// on the message, lease mode, Wait While In Flight → Exactly-Once SQL insert into business_log) in a
// real n8n 2.41.1 with the packed package, against this machine's RabbitMQ (started if it is not
// running), next to the same trigger straight into an insert (n8n's Postgres node, no Reserve).
// Messages are published with n8n's own amqplib. Three runs, each sent to both consumers:
//   (a) the same body published twice without message-id: keyed by the content hash;
//   (b) 900 messages, 100 of them published twice with the same message-id (1,000 deliveries),
//       half of the copies right after their original so both are in flight at once;
//   (c) kill -9 of n8n while 5 business inserts per consumer are held open (an AFTER INSERT
//       trigger that sleeps), restart, RabbitMQ redelivers while the dead executions' leases run.
// The published template differs from the file only in its queue name. One stack for the file.
// Run with: npm run test:e2e:rabbitmq (node --test test/e2e/rabbitmq.e2e.mjs after npm run build).
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';

import {
	ensureN8n,
	progress,
	startStack,
	waitFor,
	withStackLogs,
} from '../../scripts/harness/index.mjs';
import {
	connectRabbitMq,
	consumerWorkflows,
	queueCounts,
	rabbitMqCredential,
} from '../../scripts/harness/rabbitmq.mjs';

const RUN = randomUUID().slice(0, 8);
const QUEUES = { template: `idem-e2e-${RUN}-template`, bare: `idem-e2e-${RUN}-bare` };
const IDS = { template: 'IdemRabbitTpl0001', bare: 'IdemRabbitBare001' };

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;
/** @type {any} amqplib's connection and confirm channel */
let connection;
/** @type {any} */
let channel;
/** The template's lease and wait, read from the file: the in-flight bound is made of them. */
const consumers = consumerWorkflows({ queues: QUEUES, ids: IDS });
const { leaseSeconds, waitSeconds } = consumers;
const suiteStartedAt = Date.now();
/** What each run gave, per consumer, for the side-by-side table. */
const results = [];

before(
	async () => {
		const paths = await ensureN8n();
		connection = await connectRabbitMq(paths);
		channel = await connection.createConfirmChannel();
		// As the trigger asserts them (template options assertQueue, durable), so both agree.
		for (const queue of Object.values(QUEUES)) await channel.assertQueue(queue, { durable: true });
		stack = await startStack({
			label: 'rabbitmq',
			extraCredentials: [rabbitMqCredential()],
			extraWorkflows: [{ workflow: consumers.template }, { workflow: consumers.bare }],
		});
		await waitForConsumers();
	},
	{ timeout: 60 * 60_000 },
);

after(
	async () => {
		try {
			await stack?.stop();
			if (channel) for (const queue of Object.values(QUEUES)) await channel.deleteQueue(queue);
			await connection?.close();
		} finally {
			process.stderr.write(`${formatResults()}\n`);
			process.stderr.write(
				`[rabbitmq] suite wall time ${((Date.now() - suiteStartedAt) / 1000).toFixed(1)} s\n`,
			);
		}
	},
	{ timeout: 120_000 },
);

const withLogs = (fn) => withStackLogs(stack, fn);

async function waitForConsumers() {
	for (const queue of Object.values(QUEUES))
		await waitFor(
			`n8n consuming ${queue}`,
			async () => ((await queueCounts(queue)).consumers >= 1 ? true : undefined),
			{ timeoutMs: 120_000, intervalMs: 1000 },
		);
}

/**
 * Publishes persistent messages and waits for the broker's confirms.
 * @param {string} queue
 * @param {Array<{ body: string, messageId?: string }>} messages
 */
async function publish(queue, messages) {
	for (const { body, messageId } of messages)
		channel.sendToQueue(queue, Buffer.from(body), {
			persistent: true,
			...(messageId === undefined ? {} : { messageId }),
		});
	await channel.waitForConfirms();
}

/** business_log rows of a consumer (event_type is the routing key: the queue), by event_key. */
async function rowsByKey(queue, keyLike) {
	const { rows } = await stack.keysDb.query(
		`SELECT event_key, count(*)::int AS n FROM business_log
		 WHERE event_type = $1 AND event_key LIKE $2 GROUP BY event_key`,
		[queue, keyLike],
	);
	return new Map(rows.map((row) => [row.event_key, row.n]));
}

/** Waits until the queue has nothing ready or unacknowledged and the rows stopped changing. */
async function waitSettled(queue, keyLike, { timeoutMs = 300_000 } = {}) {
	let last = '';
	return await waitFor(
		() => `${queue} drained and its rows settled (last seen ${last})`,
		async () => {
			const counts = await queueCounts(queue);
			const rows = await rowsByKey(queue, keyLike);
			const seen = `${counts.ready} ready, ${counts.unacked} unacked, ${rows.size} keys, ${[...rows.values()].reduce((a, b) => a + b, 0)} rows`;
			const settled = counts.ready === 0 && counts.unacked === 0 && seen === last;
			last = seen;
			return settled ? { counts, rows } : undefined;
		},
		{ timeoutMs, intervalMs: 2000 },
	);
}

/** The executions of a consumer for messages whose id (or content) starts with `prefix`. */
async function executionsFor(workflowId, prefix, since = 0) {
	const all = await stack.executions.list({ workflowId });
	return all
		.filter((execution) => Date.parse(execution.startedAt) >= since)
		.map((execution) => {
			const message = execution.trigger ?? {};
			return {
				status: execution.status,
				id: message.properties?.messageId ?? message.content,
				redelivered: message.fields?.redelivered,
				nodesRun: execution.nodesRun,
			};
		})
		.filter((execution) => typeof execution.id === 'string' && execution.id.startsWith(prefix));
}

const sum = (map) => [...map.values()].reduce((a, b) => a + b, 0);
const doubled = (map) => [...map.values()].filter((n) => n > 1).length;

/** JSON with sorted keys, no spaces: the text the RabbitMQ Message preset hashes for a JSON body. */
const canonical = (object) =>
	JSON.stringify(Object.fromEntries(Object.entries(object).sort(([a], [b]) => a.localeCompare(b))));

test('(a) the same body published twice without message-id: one row, keyed by the content hash', async () => {
	await withLogs(async () => {
		const order = { order: `a-${RUN}`, amount: 1 };
		const body = JSON.stringify(order);
		for (const queue of Object.values(QUEUES)) await publish(queue, [{ body }, { body }]);
		const started = Date.now();
		const key = `orders:sha256:${createHash('sha256').update(canonical(order)).digest('hex')}`;
		const template = await waitSettled(QUEUES.template, key);
		const settledAfter = (Date.now() - started) / 1000;
		const bare = await waitSettled(QUEUES.bare, '{%');
		// The first executions of a fresh server are slow (the second copy may wait, or go in flight once).
		const executions = await executionsFor(IDS.template, body, started - 1000);
		const routes = executions.map((execution) =>
			execution.status === 'success' ? execution.nodesRun.at(-1) : execution.status,
		);
		results.push({
			run: '(a) same body twice, no message-id',
			template: template.rows,
			bare: bare.rows,
			note: `template executions: ${routes.join(', ')}; its queue settled after ${settledAfter.toFixed(0)} s`,
		});
		assert.deepEqual([...template.rows], [[key, 1]]);
		assert.deepEqual([...bare.rows], [[body, 2]], 'without Reserve, both deliveries insert');
	});
});

test('(b) 1,000 deliveries of 900 messages (100 published twice): exactly 900 rows, all acknowledged', async () => {
	await withLogs(async () => {
		const prefix = `b-${RUN}-`;
		const messages = [];
		const later = [];
		for (let i = 0; i < 900; i++) {
			const message = { body: JSON.stringify({ order: i, run: RUN }), messageId: `${prefix}${i}` };
			messages.push(message);
			// 50 copies right behind their original (both in flight at once), 50 at the end.
			if (i < 50) messages.push(message);
			else if (i < 100) later.push(message);
		}
		messages.push(...later);
		assert.equal(messages.length, 1000);
		const started = Date.now();
		for (const queue of Object.values(QUEUES)) await publish(queue, messages);
		const template = await waitSettled(QUEUES.template, `orders:evt:${prefix}%`);
		const bare = await waitSettled(QUEUES.bare, `${prefix}%`);
		const seconds = (Date.now() - started) / 1000;
		const executions = await executionsFor(IDS.template, prefix, started - 1000);
		const succeeded = executions.filter((execution) => execution.status === 'success');
		const failed = executions.length - succeeded.length;
		results.push({
			run: '(b) 900 messages, 100 twice',
			template: template.rows,
			bare: bare.rows,
			note: `template: ${succeeded.length} successful (acked) executions, ${failed} failed (nacked, in flight past the wait); both drained in ${seconds.toFixed(0)} s`,
		});
		assert.equal(template.rows.size, 900);
		assert.equal(sum(template.rows), 900, 'exactly one row per message');
		assert.deepEqual(template.counts, { ...template.counts, ready: 0, unacked: 0 });
		// Every delivery acknowledged: a successful execution per delivery (a failed one is nacked).
		assert.equal(succeeded.length, 1000);
		const duplicates = succeeded.filter((execution) =>
			execution.nodesRun.includes('Duplicate (acknowledged, no step)'),
		);
		assert.equal(duplicates.length, 100);
		assert.equal(sum(bare.rows), 1000, 'without Reserve every delivery inserts');
		assert.equal(doubled(bare.rows), 100);
	});
});

test('(c) kill -9 with the business inserts held open: one row per message, the in-flight loop bounded', async () => {
	await withLogs(async () => {
		const prefix = `kill-${RUN}-`;
		const db = stack.keysDb;
		await db.query(`CREATE TABLE e2e_hold (holding boolean NOT NULL);
			INSERT INTO e2e_hold VALUES (true);
			CREATE FUNCTION e2e_hold_insert() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF NEW.event_key LIKE '%kill-%' AND (SELECT holding FROM e2e_hold) THEN PERFORM pg_sleep(20); END IF;
				RETURN NEW;
			END $$;
			CREATE TRIGGER e2e_hold AFTER INSERT ON business_log FOR EACH ROW EXECUTE FUNCTION e2e_hold_insert();`);
		const messages = Array.from({ length: 5 }, (_, i) => ({
			body: JSON.stringify({ order: i, run: RUN, kill: true }),
			messageId: `${prefix}${i}`,
		}));
		for (const queue of Object.values(QUEUES)) await publish(queue, messages);
		await waitFor(
			'10 business inserts sleeping in the AFTER INSERT trigger',
			async () => {
				const { rows } = await db.query(
					`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%business_log%'`,
				);
				return rows[0].n >= 10 ? true : undefined;
			},
			{ timeoutMs: 60_000, intervalMs: 250 },
		);
		// The sleeping statements go on sleeping; redeliveries after the restart insert at once.
		await db.query('UPDATE e2e_hold SET holding = false');
		const killedAt = Date.now();
		await stack.crashAndRestartN8n();
		const restartedAt = Date.now();
		await waitForConsumers();
		const template = await waitSettled(QUEUES.template, `orders:evt:${prefix}%`);
		const bare = await waitSettled(QUEUES.bare, `${prefix}%`);
		const sinceKill = await executionsFor(IDS.template, prefix, killedAt);
		const perMessage = new Map();
		for (const execution of sinceKill)
			perMessage.set(execution.id, (perMessage.get(execution.id) ?? 0) + 1);
		const counts = [...perMessage.values()];
		const bound = Math.ceil(leaseSeconds / waitSeconds) + 1;
		results.push({
			run: '(c) kill -9, 5 held inserts',
			template: template.rows,
			bare: bare.rows,
			note: `restart took ${((restartedAt - killedAt) / 1000).toFixed(0)} s; template executions per redelivered message after the restart: ${counts.sort().join(', ')} (bound ceil(${leaseSeconds} / ${waitSeconds}) + 1 = ${bound}); bare: ${(await executionsFor(IDS.bare, prefix, killedAt)).length} executions`,
		});
		await db.query(
			'DROP TRIGGER e2e_hold ON business_log; DROP FUNCTION e2e_hold_insert(); DROP TABLE e2e_hold',
		);
		assert.equal(template.rows.size, 5);
		assert.equal(sum(template.rows), 5, 'exactly one row per message');
		assert.deepEqual(template.counts, { ...template.counts, ready: 0, unacked: 0 });
		assert.equal(perMessage.size, 5, 'every message was redelivered and run after the restart');
		for (const [id, n] of perMessage)
			assert.ok(n <= bound, `${id}: ${n} executions, more than ${bound}`);
		const succeeded = sinceKill.filter((execution) => execution.status === 'success');
		assert.equal(succeeded.length, 5, 'one acknowledged execution per message');
		progress(`[rabbitmq] ${results.at(-1).note}`);
	});
});

/** The side-by-side table of the runs: rows and doubled messages, template and without Reserve. */
function formatResults() {
	const lines = [
		'[rabbitmq] run | template rows (doubled) | without Reserve rows (doubled)',
		...results.map(
			({ run, template, bare }) =>
				`[rabbitmq] ${run} | ${sum(template)} (${doubled(template)}) | ${sum(bare)} (${doubled(bare)})`,
		),
		...results.filter(({ note }) => note).map(({ run, note }) => `[rabbitmq] ${run}: ${note}`),
	];
	return lines.join('\n');
}

test('(d) a message whose message-id cannot be a key: acknowledged once, kept visible at Unusable Key, never requeued', async () => {
	await withLogs(async () => {
		// A NUL cannot be in a key (PostgreSQL text): the message would fail the same way forever.
		const messageId = `d-${RUN}-nul\u0000x`;
		const started = Date.now();
		await publish(QUEUES.template, [{ body: JSON.stringify({ order: `d-${RUN}` }), messageId }]);
		const [execution] = await waitFor(
			'the unusable message consumed',
			async () => {
				const found = await executionsFor(IDS.template, `d-${RUN}`, started - 1000);
				return found.length > 0 ? found : undefined;
			},
			{ timeoutMs: 120_000, intervalMs: 1000 },
		);
		// Time for a redelivery to show if the message had been nacked.
		await new Promise((resolve) => setTimeout(resolve, 5_000));
		const counts = await queueCounts(QUEUES.template);
		const executions = await executionsFor(IDS.template, `d-${RUN}`, started - 1000);
		assert.deepEqual([counts.ready, counts.unacked], [0, 0], 'acknowledged, not requeued');
		assert.equal(executions.length, 1, `executions: ${JSON.stringify(executions)}`);
		assert.equal(execution.status, 'success');
		assert.equal(execution.nodesRun.at(-1), 'Unusable Key (acknowledged, dropped)');
		assert.ok(!execution.nodesRun.includes('Business Step (insert business_log)'));
		assert.equal((await rowsByKey(QUEUES.template, `%d-${RUN}%`)).size, 0);
	});
});
