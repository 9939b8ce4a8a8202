// Runs the cached n8n 2.41.1 with the Node.js 24 binary: its CLI commands (import, publish,
// execute) while the server is stopped or on their own, and the server itself (`n8n start`), which
// only listens on 127.0.0.1 and never calls out (diagnostics, version checks, templates off).
import path from 'node:path';

import { progress, sleep, waitFor } from './log.mjs';
import { freePort } from './ports.mjs';
import { runTracked, spawnTracked, stopTracked, tailOf } from './processes.mjs';

/** A fixed key: the credentials in the throw-away database are encrypted with it. Never use it for real data. */
const E2E_ENCRYPTION_KEY = 'n8n-nodes-idempotency-e2e-not-a-secret-0001';

/**
 * @typedef {object} N8nContext
 * @property {ReturnType<import('./install.mjs').cachePaths>} paths
 * @property {string} userFolder    N8N_USER_FOLDER (n8n keeps its files in <userFolder>/.n8n)
 * @property {string} logDir
 * @property {number} port
 * @property {number} brokerPort
 * @property {{ host: string, port: number, user: string, password: string, database: string }} db
 * @property {Record<string, string>} [extraEnv]
 */

/** The environment of every n8n process of one stack. */
export function n8nEnv(ctx, overrides = {}) {
	const base = {};
	// Keep the caller's basics (PATH, HOME, locale, proxy settings) but nothing of npm's or the test runner's.
	for (const [name, value] of Object.entries(process.env)) {
		if (
			/^(npm_|NODE_|N8N_|DB_|EXECUTIONS_|WEBHOOK_URL$|GENERIC_TIMEZONE$|QUEUE_|DATABASE_URL$)/i.test(
				name,
			)
		)
			continue;
		base[name] = value;
	}
	const nodeBinDir = path.dirname(ctx.paths.nodeBin);
	return {
		...base,
		// n8n starts helpers (the task runner) with the same Node.js.
		PATH: `${nodeBinDir}${path.delimiter}${process.env.PATH ?? ''}`,
		NODE_ENV: 'production',
		N8N_USER_FOLDER: ctx.userFolder,
		N8N_ENCRYPTION_KEY: E2E_ENCRYPTION_KEY,
		DB_TYPE: 'postgresdb',
		DB_POSTGRESDB_HOST: ctx.db.host,
		DB_POSTGRESDB_PORT: String(ctx.db.port),
		DB_POSTGRESDB_DATABASE: ctx.db.database,
		DB_POSTGRESDB_USER: ctx.db.user,
		DB_POSTGRESDB_PASSWORD: ctx.db.password,
		DB_POSTGRESDB_SCHEMA: 'public',
		N8N_HOST: '127.0.0.1',
		N8N_PORT: String(ctx.port),
		N8N_LISTEN_ADDRESS: '127.0.0.1',
		N8N_PROTOCOL: 'http',
		N8N_WEBHOOK_URL: `http://127.0.0.1:${ctx.port}/`,
		N8N_EDITOR_BASE_URL: `http://127.0.0.1:${ctx.port}/`,
		N8N_SECURE_COOKIE: 'false',
		N8N_RUNNERS_BROKER_PORT: String(ctx.brokerPort),
		N8N_RUNNERS_BROKER_LISTEN_ADDRESS: '127.0.0.1',
		// No outbound network.
		// 2.x fetches an MCP server registry at start-up (no network here); 1.x has no such module and refuses the name.
		...(ctx.paths.line === 1 ? {} : { N8N_DISABLED_MODULES: 'mcp-registry' }),
		N8N_DIAGNOSTICS_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
		N8N_PERSONALIZATION_ENABLED: 'false',
		N8N_TEMPLATES_ENABLED: 'false',
		N8N_HIRING_BANNER_ENABLED: 'false',
		N8N_COMMUNITY_PACKAGES_ENABLED: 'true',
		N8N_COMMUNITY_PACKAGES_PREVENT_LOADING: 'false',
		N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'true',
		// What the suite reads back: every execution, successful or not, with its data.
		EXECUTIONS_MODE: 'regular',
		EXECUTIONS_DATA_SAVE_ON_SUCCESS: 'all',
		EXECUTIONS_DATA_SAVE_ON_ERROR: 'all',
		EXECUTIONS_DATA_SAVE_MANUAL_EXECUTIONS: 'true',
		GENERIC_TIMEZONE: 'UTC',
		N8N_LOG_LEVEL: 'warn',
		N8N_LOG_OUTPUT: 'console',
		...(ctx.extraEnv ?? {}),
		...overrides,
	};
}

/**
 * Runs `n8n <args>` to completion; throws with the log's tail on a non-zero exit.
 * Output goes to <logDir>/<label>.log; returns it.
 */
export async function runN8nCli(
	ctx,
	args,
	{ label = args[0].replace(/[^a-z0-9]+/gi, '-'), timeoutMs = 180_000, env = {} } = {},
) {
	const logFile = path.join(ctx.logDir, `cli-${label}.log`);
	const started = Date.now();
	const status = await runTracked(ctx.paths.nodeBin, [ctx.paths.n8nBin, ...args], {
		name: `n8n ${args[0]}`,
		cwd: ctx.userFolder,
		env: n8nEnv(ctx, env),
		logFile,
		timeoutMs,
	});
	const output = tailOf(logFile, 400);
	if (status.code !== 0) {
		throw new Error(
			`n8n ${args.join(' ')} failed (exit ${status.code ?? status.signal}). Last lines of ${logFile}:\n${tailOf(logFile, 40)}`,
		);
	}
	progress(`n8n ${args.join(' ')}: done in ${((Date.now() - started) / 1000).toFixed(1)}s`);
	return output;
}

/**
 * A CLI command like `n8n execute` starts its own task runner: it needs a broker port of its own
 * while the server holds the stack's one.
 */
export async function runN8nCliBesideServer(ctx, args, options = {}) {
	const brokerPort = await freePort();
	return await runN8nCli(ctx, args, {
		...options,
		env: { ...(options.env ?? {}), N8N_RUNNERS_BROKER_PORT: String(brokerPort) },
	});
}

/**
 * Starts `n8n start` and waits for /healthz/readiness. Returns a handle with stop().
 */
export async function startN8nServer(ctx, { readinessTimeoutMs = 180_000 } = {}) {
	const logFile = path.join(ctx.logDir, 'n8n-server.log');
	const baseUrl = `http://127.0.0.1:${ctx.port}`;
	progress(`n8n: starting the server on ${baseUrl} (log: ${logFile})`);
	const started = Date.now();
	const server = spawnTracked(ctx.paths.nodeBin, [ctx.paths.n8nBin, 'start'], {
		name: 'n8n server',
		cwd: ctx.userFolder,
		env: n8nEnv(ctx),
		logFile,
	});
	const handle = {
		baseUrl,
		pid: server.pid,
		logFile,
		process: server,
		logTail: (lines = 60) => tailOf(logFile, lines),
		/** `graceMs`: how long n8n may take to finish its executions before it is killed. */
		stop: async ({ graceMs = 30_000 } = {}) => {
			if (server.exitStatus) return;
			progress(`n8n: stopping the server (pid ${server.pid})`);
			await stopTracked(server, { graceMs });
		},
	};
	try {
		await waitFor(
			`n8n's ${baseUrl}/healthz/readiness`,
			async () => {
				if (server.exitStatus) {
					throw new Error(
						`n8n exited early (${JSON.stringify(server.exitStatus)}). Last lines of ${logFile}:\n${tailOf(logFile, 40)}`,
					);
				}
				const response = await fetch(`${baseUrl}/healthz/readiness`, {
					signal: AbortSignal.timeout(5_000),
				});
				await response.arrayBuffer();
				return response.status === 200;
			},
			{ timeoutMs: readinessTimeoutMs, intervalMs: 500 },
		);
	} catch (error) {
		if (server.exitStatus) throw error;
		const message = `${error.message}\nLast lines of ${logFile}:\n${tailOf(logFile, 40)}`;
		await handle.stop();
		throw new Error(message);
	}
	progress(`n8n: ready after ${((Date.now() - started) / 1000).toFixed(1)}s`);
	return handle;
}

/**
 * /healthz/readiness turns green before published webhooks are registered. An OPTIONS request to
 * a registered production webhook answers 204 without running the workflow.
 */
export async function waitForWebhook(server, webhookPath, { timeoutMs = 120_000 } = {}) {
	const url = `${server.baseUrl}/webhook/${webhookPath}`;
	let consecutive = 0;
	await waitFor(
		`the webhook ${url} to be registered (OPTIONS → 204 three times in a row)`,
		async () => {
			if (server.process.exitStatus) throw new Error(`n8n exited:\n${server.logTail(40)}`);
			const response = await fetch(url, { method: 'OPTIONS', signal: AbortSignal.timeout(5_000) });
			await response.arrayBuffer();
			consecutive = response.status === 204 ? consecutive + 1 : 0;
			return consecutive >= 3;
		},
		{ timeoutMs, intervalMs: 300 },
	);
	return url;
}

export { sleep };
