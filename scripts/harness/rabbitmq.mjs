// This machine's RabbitMQ for the queue-consumer suite (test/e2e/rabbitmq.e2e.mjs): started if it
// is not running (as the suites start PostgreSQL), and reached with n8n's own amqplib, loaded from
// the cached n8n install by absolute path (like ioredis in redis.mjs): the client the RabbitMQ
// Trigger itself uses, and not a dependency of this package.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

import { progress, waitFor } from './log.mjs';
import { importableCopy } from './templates.mjs';

const run = promisify(execFile);

export const RABBITMQ = {
	host: '127.0.0.1',
	port: 5672,
	username: 'guest',
	password: 'guest',
	vhost: '/',
};

/** The `rabbitmq` credential of n8n's RabbitMQ nodes for this broker, as n8n's import file holds it. */
export function rabbitMqCredential(id = 'RabbitCredE2E0001', name = 'RabbitMQ') {
	return {
		id,
		name,
		type: 'rabbitmq',
		data: {
			hostname: RABBITMQ.host,
			port: RABBITMQ.port,
			username: RABBITMQ.username,
			password: RABBITMQ.password,
			vhost: RABBITMQ.vhost,
			ssl: false,
		},
	};
}

/** @param {{ n8nModules: string }} paths see install.mjs cachePaths */
export function loadAmqplib(paths) {
	const requireFromN8n = createRequire(path.join(paths.n8nModules, 'n8n', 'package.json'));
	try {
		return requireFromN8n(path.join(paths.n8nModules, 'amqplib'));
	} catch {
		return requireFromN8n('amqplib');
	}
}

async function portOpen(host, port) {
	return await new Promise((resolve) => {
		const socket = net.connect({ host, port });
		socket.setTimeout(2000);
		socket.once('connect', () => {
			socket.destroy();
			resolve(true);
		});
		for (const event of ['error', 'timeout'])
			socket.once(event, () => {
				socket.destroy();
				resolve(false);
			});
	});
}

/**
 * Connects to the broker; when nothing listens on 5672, starts it with `rabbitmq-server -detached`
 * (left running afterwards, like a service) and waits up to 90 s for it.
 * @param {{ n8nModules: string }} paths
 */
export async function connectRabbitMq(paths) {
	const amqp = loadAmqplib(paths);
	if (!(await portOpen(RABBITMQ.host, RABBITMQ.port))) {
		progress('RabbitMQ: not running, starting it (rabbitmq-server -detached)');
		try {
			await run('rabbitmq-server', ['-detached'], { timeout: 30_000 });
		} catch (error) {
			throw new Error(
				`RabbitMQ is not reachable at ${RABBITMQ.host}:${RABBITMQ.port} and could not be started (${error.message}). Install it (apt-get install -y rabbitmq-server) or start it: rabbitmq-server -detached`,
			);
		}
		await waitFor(
			'RabbitMQ accepting connections',
			async () => ((await portOpen(RABBITMQ.host, RABBITMQ.port)) ? true : undefined),
			{ timeoutMs: 90_000, intervalMs: 1000 },
		);
	}
	const { host, port, username, password } = RABBITMQ;
	return await amqp.connect(`amqp://${username}:${password}@${host}:${port}`);
}

/**
 * A queue's messages as the broker counts them: ready (waiting for a consumer) and unacknowledged
 * (delivered, not yet acked or nacked), from `rabbitmqctl list_queues`.
 * @param {string} queue
 */
export async function queueCounts(queue) {
	const { stdout } = await run(
		'rabbitmqctl',
		['-q', 'list_queues', 'name', 'messages_ready', 'messages_unacknowledged', 'consumers'],
		{ timeout: 60_000 },
	);
	for (const line of stdout.split('\n')) {
		const [name, ready, unacked, consumers] = line.trim().split(/\s+/);
		if (name === queue)
			return { ready: Number(ready), unacked: Number(unacked), consumers: Number(consumers) };
	}
	throw new Error(`rabbitmqctl lists no queue ${queue}`);
}

export const CONSUMER_TEMPLATE = 'workflows/rabbitmq-consumer.json';
const TRIGGER = 'RabbitMQ Trigger';

/**
 * The two consumers the queue suite and benchmark publish: the template (only its queue changed)
 * and the same trigger (same options) straight into an insert with n8n's Postgres node, the
 * consumer built without Reserve. Both write business_log with the routing key (the queue) as
 * event_type; the Reserve-less one keys rows by message-id, else the content.
 * @param {{ queues: { template: string, bare: string }, ids: { template: string, bare: string } }} options
 */
export function consumerWorkflows({ queues, ids }) {
	const template = importableCopy(CONSUMER_TEMPLATE, ids.template);
	const templateTrigger = template.nodes.find((node) => node.name === TRIGGER);
	templateTrigger.parameters = { ...templateTrigger.parameters, queue: queues.template };
	const reserve = template.nodes.find((node) => node.name === 'Idempotency Reserve');

	const source = importableCopy(CONSUMER_TEMPLATE, ids.bare);
	const trigger = { ...source.nodes.find((node) => node.name === TRIGGER), id: randomUUID() };
	trigger.parameters = { ...trigger.parameters, queue: queues.bare };
	const insert = {
		parameters: {
			operation: 'executeQuery',
			query: 'INSERT INTO business_log (event_key, event_type) VALUES ($1, $2)',
			options: {
				queryReplacement:
					'={{ [$json.properties.messageId ?? $json.content, $json.fields.routingKey] }}',
			},
		},
		id: randomUUID(),
		name: 'Insert business_log',
		type: 'n8n-nodes-base.postgres',
		typeVersion: 2.6,
		position: [240, 300],
		credentials: { postgres: { name: 'Business Postgres' } },
	};
	const bare = {
		...source,
		name: 'RabbitMQ consumer without Reserve (comparison)',
		nodes: [trigger, insert],
		connections: { [TRIGGER]: { main: [[{ node: insert.name, type: 'main', index: 0 }]] } },
	};
	return {
		template,
		bare,
		leaseSeconds: reserve.parameters.leaseSeconds,
		waitSeconds: reserve.parameters.options.waitInFlightSeconds,
	};
}
