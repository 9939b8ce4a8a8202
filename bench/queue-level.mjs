// Queue level: the RabbitMQ consumer template (workflows/rabbitmq-consumer.json: RabbitMQ Trigger →
// Reserve on the message → Exactly-Once SQL insert) against the same trigger straight into n8n's
// Postgres node (no Reserve), in ONE real n8n 2.41.1 server (scripts/harness startStack) fed by this
// machine's RabbitMQ, measured interleaved, round after round (odd rounds template first, even
// rounds the other first), one consumer busy at a time. Two traffic shapes:
//   distinct   every message a new message-id;
//   repeated   every message-id published twice, the copy right behind its original (half of the
//              deliveries are duplicates, most of them in flight beside their original).
// Per round, variant and shape: N messages are published (confirmed by the broker), then the clock
// runs until n8n has recorded N successful executions of that consumer (each one an acknowledged
// delivery; a nacked in-flight execution is counted apart). Reported: messages/s, and CPU per message
// of n8n's main process and its task runner (from /proc), medians across rounds; the share of the
// machine other processes used meanwhile (the machine is shared: CPU per message moves less than
// messages/s). Afterwards the rows are checked: the template must hold exactly one row per
// message-id, the Reserve-less consumer one per delivery; a difference fails the run (exit 1).
//
//   node bench/queue-level.mjs [--rounds 3] [--messages 200] [--shapes distinct,repeated]
//
// Results are saved as JSON under bench-results/ (not committed).
import { createRequire } from 'node:module';

import { ensureN8n, startStack, waitFor } from '../scripts/harness/index.mjs';
import {
	connectRabbitMq,
	consumerWorkflows,
	rabbitMqCredential,
} from '../scripts/harness/rabbitmq.mjs';
import { cpuSnapshot } from './webhook/cpu.mjs';

const require = createRequire(import.meta.url);
const { saveResults, option } = require('./support.js');

const ROUNDS = Number(option('rounds', '3'));
const MESSAGES = Number(option('messages', '200'));
const SHAPES = String(option('shapes', 'distinct,repeated')).split(',');
const RUN = Date.now().toString(36);
const QUEUES = { template: `idem-bench-${RUN}-template`, bare: `idem-bench-${RUN}-bare` };
const IDS = { template: 'IdemRabbitBenchT1', bare: 'IdemRabbitBenchB1' };
const VARIANTS = ['template', 'bare'];

/** Successful and failed executions n8n recorded for a workflow (a count, not the data). */
async function executionCounts(stack, workflowId) {
	const { rows } = await stack.n8nDb.query(
		`SELECT count(*) FILTER (WHERE status = 'success')::int AS ok,
		        count(*) FILTER (WHERE status IN ('error', 'crashed'))::int AS failed
		 FROM execution_entity WHERE "workflowId" = $1`,
		[workflowId],
	);
	return rows[0];
}

/** The messages of one load: distinct ids, or each id twice with the copy right behind. */
function messagesOf(tag, shape) {
	const messages = [];
	for (let i = 0; messages.length < MESSAGES; i++) {
		const message = { body: JSON.stringify({ order: i, tag }), messageId: `${tag}-${i}` };
		messages.push(message);
		if (shape === 'repeated' && messages.length < MESSAGES) messages.push(message);
	}
	return messages;
}

/** One measured load: publish, then wait for as many successful executions as deliveries. */
async function measure(stack, channel, variant, shape, tag) {
	const workflowId = IDS[variant];
	const before = await executionCounts(stack, workflowId);
	const messages = messagesOf(tag, shape);
	const cpuBefore = cpuSnapshot(stack, undefined);
	for (const { body, messageId } of messages)
		channel.sendToQueue(QUEUES[variant], Buffer.from(body), { persistent: true, messageId });
	await channel.waitForConfirms();
	const after = await waitFor(
		`${messages.length} acknowledged executions of the ${variant} consumer`,
		async () => {
			const counts = await executionCounts(stack, workflowId);
			return counts.ok - before.ok >= messages.length ? counts : undefined;
		},
		{ timeoutMs: 600_000, intervalMs: 100 },
	);
	const cpuAfter = cpuSnapshot(stack, undefined);
	const seconds = (cpuAfter.at - cpuBefore.at) / 1000;
	const n8nCpuMs = cpuAfter.main + cpuAfter.runner - cpuBefore.main - cpuBefore.runner;
	const machineMs = cpuAfter.machine - cpuBefore.machine;
	return {
		variant,
		shape,
		tag,
		deliveries: messages.length,
		distinctIds: new Set(messages.map((message) => message.messageId)).size,
		messagesPerSecond: messages.length / seconds,
		n8nCpuMsPerMessage: n8nCpuMs / messages.length,
		// What the rest of the machine used meanwhile: a busy neighbour slows every variant.
		othersShare: Math.max(0, machineMs - n8nCpuMs) / (seconds * 1000),
		nackedInFlight: after.failed - before.failed,
	};
}

/** business_log rows of a load: by event_key, for the checks. */
async function rowsOf(stack, variant, tag) {
	const like = variant === 'template' ? `orders:evt:${tag}-%` : `${tag}-%`;
	const { rows } = await stack.keysDb.query(
		`SELECT count(*)::int AS n, count(DISTINCT event_key)::int AS keys FROM business_log
		 WHERE event_type = $1 AND event_key LIKE $2`,
		[QUEUES[variant], like],
	);
	return rows[0];
}

const median = (values) => {
	const sorted = [...values].sort((a, b) => a - b);
	const middle = Math.floor(sorted.length / 2);
	return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

async function main() {
	const paths = await ensureN8n();
	const connection = await connectRabbitMq(paths);
	const channel = await connection.createConfirmChannel();
	for (const queue of Object.values(QUEUES)) await channel.assertQueue(queue, { durable: true });
	const consumers = consumerWorkflows({ queues: QUEUES, ids: IDS });
	const stack = await startStack({
		label: 'bench-queue',
		extraCredentials: [rabbitMqCredential()],
		extraWorkflows: [{ workflow: consumers.template }, { workflow: consumers.bare }],
		env: { EXECUTIONS_DATA_PRUNE: 'false' },
	});
	const samples = [];
	const failures = [];
	try {
		process.stderr.write(
			`\nqueue level: ${ROUNDS} rounds × ${SHAPES.join('/')} × template/bare; ${MESSAGES} deliveries each\n`,
		);
		// Warm-up (not measured): JIT, pools, the task runner, the key table.
		for (const variant of VARIANTS)
			await measure(stack, channel, variant, 'distinct', `warm${RUN}`);
		for (let round = 1; round <= ROUNDS; round++) {
			const order = round % 2 ? VARIANTS : [...VARIANTS].reverse();
			for (const shape of SHAPES)
				for (const variant of order) {
					const sample = await measure(stack, channel, variant, shape, `r${round}${shape}${RUN}`);
					samples.push({ round, ...sample });
					process.stderr.write(
						`round ${round} ${shape.padEnd(8)} ${variant.padEnd(8)} ${sample.messagesPerSecond.toFixed(1)} msg/s, ` +
							`${sample.n8nCpuMsPerMessage.toFixed(1)} ms n8n CPU/msg, others ${(sample.othersShare * 100).toFixed(0)} %, ` +
							`${sample.nackedInFlight} nacked in flight\n`,
					);
				}
		}
		for (const sample of samples) {
			const rows = await rowsOf(stack, sample.variant, sample.tag);
			const expected =
				sample.variant === 'template'
					? { n: sample.distinctIds, keys: sample.distinctIds }
					: { n: sample.deliveries, keys: sample.distinctIds };
			if (rows.n !== expected.n || rows.keys !== expected.keys)
				failures.push({ sample: sample.tag, variant: sample.variant, rows, expected });
		}
	} finally {
		await stack.stop();
		for (const queue of Object.values(QUEUES)) await channel.deleteQueue(queue);
		await connection.close();
	}

	const summary = [];
	for (const shape of SHAPES)
		for (const variant of VARIANTS) {
			const of = samples.filter((s) => s.shape === shape && s.variant === variant);
			summary.push({
				shape,
				variant,
				messagesPerSecond: median(of.map((s) => s.messagesPerSecond)),
				n8nCpuMsPerMessage: median(of.map((s) => s.n8nCpuMsPerMessage)),
				othersShare: median(of.map((s) => s.othersShare)),
			});
		}
	const lines = ['shape     consumer  msg/s   n8n CPU ms/msg  others (machine share)'];
	for (const row of summary)
		lines.push(
			`${row.shape.padEnd(9)} ${row.variant.padEnd(9)} ${row.messagesPerSecond.toFixed(1).padStart(5)}   ${row.n8nCpuMsPerMessage.toFixed(1).padStart(6)}          ${(row.othersShare * 100).toFixed(0)} %`,
		);
	// Ratios round by round (both variants ran back to back), then their median and range: the
	// machine drifts over minutes, a ratio within one round does not.
	const ratios = {};
	for (const shape of SHAPES) {
		const perRound = (field) =>
			samples
				.filter((s) => s.shape === shape && s.variant === 'template')
				.map((t) => {
					const b = samples.find(
						(s) => s.shape === shape && s.variant === 'bare' && s.round === t.round,
					);
					return t[field] / b[field];
				});
		const describe = (values) =>
			`${median(values).toFixed(2)}× (rounds ${Math.min(...values).toFixed(2)}…${Math.max(...values).toFixed(2)})`;
		const cpu = perRound('n8nCpuMsPerMessage');
		const rate = perRound('messagesPerSecond');
		ratios[shape] = { cpu, rate };
		lines.push(
			`${shape}: template / bare = ${describe(cpu)} n8n CPU per message, ${describe(rate)} messages/s`,
		);
	}
	process.stderr.write(`\n${lines.join('\n')}\n`);
	const file = saveResults('queue-level', {
		config: { rounds: ROUNDS, messages: MESSAGES, shapes: SHAPES },
		samples,
		summary,
		ratios,
		failures,
	});
	process.stderr.write(`results: ${file}\n`);
	if (failures.length > 0) {
		process.stderr.write(`row checks failed: ${JSON.stringify(failures, null, 2)}\n`);
		process.exitCode = 1;
	}
}

main().catch((error) => {
	process.stderr.write(`${error.stack ?? error}\n`);
	process.exit(1);
});
