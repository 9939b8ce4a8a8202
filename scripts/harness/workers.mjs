// n8n queue mode for the harness (startStack's `queue: { workers }`): the environment every n8n
// process of the stack shares (EXECUTIONS_MODE=queue, the Redis at 127.0.0.1:6379, key prefixes of
// its own so parallel runs never share a queue), and `n8n worker` processes. Each worker gets its
// own user folder (with the package installed, like the main's), task-runner broker port and health
// port, all on 127.0.0.1, and logs at info level, where n8n writes "Worker started execution <id>":
// n8n's execution records do not say which worker ran an execution, its logs do.
import { cpSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { progress, waitFor } from './log.mjs';
import { n8nEnv } from './n8n.mjs';
import { freePort } from './ports.mjs';
import { spawnTracked, stopTracked, tailOf } from './processes.mjs';

/** The environment for main and workers alike. `token` makes the Redis keys and channels this stack's own. */
export function queueEnv({ token, redisHost = '127.0.0.1', redisPort = 6379 }) {
	return {
		EXECUTIONS_MODE: 'queue',
		QUEUE_BULL_REDIS_HOST: redisHost,
		QUEUE_BULL_REDIS_PORT: String(redisPort),
		// Bull's keys (the queue) and n8n's own Redis keys and pub/sub channels (commands, worker
		// responses, leader key, cache) each have a prefix; both are unique per stack.
		QUEUE_BULL_PREFIX: `bull_${token}`,
		N8N_REDIS_KEY_PREFIX: `n8n_${token}`,
	};
}

const STARTED_LINE = /Worker started execution (\d+) \(job ([^)]+)\)/g;
const FINISHED_LINE = /Worker finished execution (\d+) \(job ([^)]+)\)/g;

function idsFrom(logFile, pattern) {
	let text = '';
	try {
		text = readFileSync(logFile, 'utf8');
	} catch {
		return [];
	}
	return [...text.matchAll(pattern)].map((match) => match[1]);
}

/**
 * @typedef {object} N8nWorker
 * @property {number} index
 * @property {string} name
 * @property {number} pid
 * @property {import('./processes.mjs').TrackedProcess} process
 * @property {string} logFile
 * @property {string} healthUrl
 * @property {(lines?: number) => string} logTail
 * @property {() => string[]} startedExecutions   execution ids this worker logged as started
 * @property {() => string[]} finishedExecutions   execution ids this worker logged as finished
 * @property {() => boolean} alive
 * @property {() => Promise<void>} stop
 */

/**
 * Starts `count` workers beside an already running main (it ran the database migrations) and waits
 * until each reports ready on its health endpoint. `packageDir` is the package installed in the
 * main's user folder; each worker gets a copy in its own. `firstIndex` numbers them after the ones
 * already started (their folders, ports and logs are their own).
 */
export async function startN8nWorkers(
	ctx,
	{ count, packageDir, concurrency = 10, readinessTimeoutMs = 180_000, firstIndex = 1 },
) {
	/** @type {N8nWorker[]} */
	const workers = [];
	try {
		for (let index = firstIndex; index < firstIndex + count; index++) {
			const userFolder = path.join(path.dirname(ctx.userFolder), `n8n-worker-${index}`);
			const target = path.join(userFolder, path.relative(ctx.userFolder, packageDir));
			mkdirSync(path.dirname(target), { recursive: true });
			cpSync(packageDir, target, { recursive: true });
			const healthPort = await freePort();
			const brokerPort = await freePort();
			const logFile = path.join(ctx.logDir, `n8n-worker-${index}.log`);
			const env = n8nEnv(ctx, {
				N8N_USER_FOLDER: userFolder,
				N8N_RUNNERS_BROKER_PORT: String(brokerPort),
				QUEUE_HEALTH_CHECK_ACTIVE: 'true',
				QUEUE_HEALTH_CHECK_PORT: String(healthPort),
				N8N_WORKER_SERVER_ADDRESS: '127.0.0.1',
				N8N_LOG_LEVEL: 'info',
			});
			if (env.EXECUTIONS_MODE !== 'queue')
				throw new Error('startN8nWorkers: the stack is not in queue mode (EXECUTIONS_MODE)');
			progress(`n8n: starting worker ${index} (health 127.0.0.1:${healthPort}, log: ${logFile})`);
			const child = spawnTracked(
				ctx.paths.nodeBin,
				[ctx.paths.n8nBin, 'worker', `--concurrency=${concurrency}`],
				{
					name: `n8n worker ${index}`,
					cwd: userFolder,
					env,
					logFile,
				},
			);
			workers.push({
				index,
				name: `worker-${index}`,
				pid: child.pid,
				process: child,
				logFile,
				healthUrl: `http://127.0.0.1:${healthPort}/healthz`,
				logTail: (lines = 60) => tailOf(logFile, lines),
				startedExecutions: () => idsFrom(logFile, STARTED_LINE),
				finishedExecutions: () => idsFrom(logFile, FINISHED_LINE),
				alive: () => !child.exitStatus,
				stop: async () => {
					if (child.exitStatus) return;
					progress(`n8n: stopping worker ${index} (pid ${child.pid})`);
					await stopTracked(child, { graceMs: 30_000 });
				},
			});
		}
		for (const worker of workers) {
			await waitFor(
				`n8n worker ${worker.index} to be ready (${worker.healthUrl}/readiness)`,
				async () => {
					if (worker.process.exitStatus)
						throw new Error(`worker ${worker.index} exited:\n${worker.logTail(40)}`);
					const response = await fetch(`${worker.healthUrl}/readiness`, {
						signal: AbortSignal.timeout(5_000),
					});
					await response.arrayBuffer();
					return response.status === 200;
				},
				{ timeoutMs: readinessTimeoutMs, intervalMs: 500 },
			);
			progress(`n8n: worker ${worker.index} ready (pid ${worker.pid})`);
		}
	} catch (error) {
		for (const worker of workers.reverse()) await worker.stop().catch(() => undefined);
		throw error;
	}
	return workers;
}
