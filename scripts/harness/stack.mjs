// The whole e2e stack, in order:
//   1. Node.js 24 + n8n 2.41.1 from the cache (installed on first use)
//   2. PostgreSQL (DATABASE_URL, else embedded) with two fresh databases: idem_e2e_<random> for the
//      keys and business_log, n8n_e2e_<random> for n8n's own data
//   3. npm run build, npm pack, tarball extracted into $N8N_USER_FOLDER/.n8n/nodes/node_modules
//   4. while n8n is stopped: import:credentials (Idempotency Postgres, Webhook Signing Secret, Business Postgres),
//      import:workflow (the two templates of workflows/, each given an id in a temp copy),
//      publish:workflow (the webhook template)
//   5. n8n start, /healthz/readiness, then the webhook answering OPTIONS with 204
// stop() undoes all of it: n8n, databases (or the embedded server), temp folder.
import path from 'node:path';

import { importStackCredentials } from './credentials.mjs';
import { ensureN8n } from './install.mjs';
import { elapsed, progress } from './log.mjs';
import { startN8nServer } from './n8n.mjs';
import { buildAndPack, installIntoUserFolder } from './package.mjs';
import { freePort } from './ports.mjs';
import { randomSuffix } from './postgres.mjs';
import { connectRedis, deleteKeysContaining } from './redis.mjs';
import { RunningStack } from './runningStack.mjs';
import { startStackDatabases } from './stackDatabases.mjs';
import { importStackWorkflows, waitForStackWebhooks } from './stackWorkflows.mjs';
import { createTeardown, createWorkFolder } from './teardown.mjs';
import { queueEnv, startN8nWorkers } from './workers.mjs';

export {
	BUSINESS_LOG_SQL,
	BUSINESS_STEP,
	PURGE_WORKFLOW_ID,
	RESERVE,
	RESERVE_OUTPUTS,
	WEBHOOK_WORKFLOW_ID,
} from './templates.mjs';

/**
 * Starts the stack. Registers its own clean-up, so a signal or an early exit still stops n8n.
 * @param {object} [options]
 * @param {string} [options.label] names the stack's work folder and log lines.
 * @param {number} [options.purgeEverySeconds] also publish the purge template, its Schedule Trigger
 *   firing every N seconds (1-59); without it the purge template is imported but not published.
 * @param {number} [options.port] n8n's port on 127.0.0.1 (default: a free one).
 * @param {Array<import('./templates.mjs').ExtraWorkflow>} [options.extraWorkflows]
 *   more workflow JSON files to import and publish alongside the template (see extraWorkflowCopy);
 *   each one's webhooks are waited for like the template's. stack.extraWorkflows lists them.
 * @param {Record<string, string>} [options.env] extra environment for every n8n process of the
 *   stack (e.g. { NODE_FUNCTION_ALLOW_BUILTIN: 'crypto' }, or NODE_OPTIONS for profiling).
 * @param {{ workers?: number, concurrency?: number, redisHost?: string, redisPort?: number }} [options.queue]
 *   queue mode (workers.mjs): EXECUTIONS_MODE=queue for the main and every worker, the Redis at
 *   127.0.0.1:6379 with key prefixes unique to this stack (removed at the end), and `workers`
 *   (default 2) `n8n worker` processes, each with its own user folder, broker and health port.
 *   stack.workers lists them.
 * @param {{ separate?: boolean, role?: string, replicated?: { synchronous?: boolean } }} [options.keyStore]
 *   separate: the keys database (processed_events, business_log; both credentials) lives on a second
 *   embedded PostgreSQL that stack.restartableKeyServer.stopServer() / startServer() restart while n8n's own
 *   database stays up (keystore.mjs). role: both credentials log in as this non-superuser role,
 *   which owns the keys database (so a test can REVOKE from it); needs separate. replicated: the keys
 *   database on a PostgreSQL 15 primary with a streaming hot standby (replication.mjs;
 *   stack.replicatedKeyStore kills, promotes, adds standbys), synchronous or not.
 * @param {Record<string, Record<string, unknown>>} [options.templateParameters]
 *   parameters to change in the published copy of the webhook template, by node name (e.g. a short
 *   lease for a crash test: { 'Idempotency Reserve': { leaseSeconds: 60 } }); the file is unchanged.
 * @param {{ defaultPoolSize?: number, maxClientConn?: number, serverLoginRetry?: number }} [options.pooler]
 *   both credentials reach the keys database through PgBouncer in transaction mode (pgbouncer.mjs),
 *   started in front of its server; stack.pooler is it (port, admin console, SHOW STATS, pointAt).
 * @param {boolean} [options.businessOnN8nServer] the Business Postgres credential (the webhook
 *   template's business step) on a database of its own on n8n's server, not on the keys database,
 *   so a key-store fault leaves the business rows alone; stack.businessDb reads them.
 * @param {object} [options.builtInWorkflow] n8n as n8n Cloud has it: the package is neither built
 *   nor installed, community packages are off (N8N_COMMUNITY_PACKAGES_ENABLED=false), and this
 *   workflow (the planner's built-in-nodes workflow) takes the webhook template's place (same id,
 *   so stack.deliver and stack.executions read it); the purge template is not imported, and the
 *   credentials are n8n's own (credentials.mjs, builtInCredentials).
 * @param {Array<{ id: string, name: string, type: string, data: object }>} [options.extraCredentials]
 *   more credentials imported beside the stack's own, referenced by name in extra workflows (the
 *   RabbitMQ consumer's `rabbitmq` credential: rabbitmq.mjs rabbitMqCredential).
 * @param {Record<string, string>} [options.serverSettings] settings of the embedded PostgreSQL server
 *   (n8n's database and the keys database), e.g. { shared_preload_libraries: 'pg_stat_statements' }
 *   for a bench that counts statements; not applied to a DATABASE_URL server.
 * @param {string} [options.sourceDir] another checkout of the package (another commit's worktree:
 *   bench/webhook-ab.mjs): its build is installed and its templates imported instead of this one's;
 *   extra workflows are still read relative to this repository.
 * @returns {Promise<RunningStack>}
 */
export async function startStack({
	label = 'e2e',
	purgeEverySeconds,
	port,
	extraWorkflows = [],
	env,
	queue,
	keyStore,
	templateParameters = {},
	pooler,
	businessOnN8nServer,
	builtInWorkflow,
	extraCredentials = [],
	serverSettings = undefined,
	sourceDir = undefined,
} = {}) {
	const startedAt = Date.now();
	const teardown = createTeardown(`stack stopped (${label})`);
	try {
		const paths = await ensureN8n();
		const { workDir, userFolder, logDir } = createWorkFolder(`n8n-idem-${label}-`, teardown);

		// Queue mode: Redis must be there before anything starts; this stack's keys go at the end.
		const queueToken = queue ? `idem${randomSuffix()}` : undefined;
		if (queue) {
			const redis = await connectRedis(paths, { host: queue.redisHost, port: queue.redisPort });
			teardown.push(async () => {
				try {
					await deleteKeysContaining(redis, queueToken);
				} finally {
					redis.disconnect();
				}
			});
		}

		const databases = await startStackDatabases({
			workDir,
			label,
			keyStore,
			pooler,
			businessOnN8nServer,
			serverSettings,
			teardown,
		});
		const packageDir = builtInWorkflow
			? undefined
			: await installIntoUserFolder(
					await buildAndPack(path.join(workDir, 'pack'), sourceDir),
					userFolder,
				);
		const withoutPackages = builtInWorkflow ? { N8N_COMMUNITY_PACKAGES_ENABLED: 'false' } : {};

		/** @type {import('./n8n.mjs').N8nContext} */
		const ctx = {
			paths,
			userFolder,
			logDir,
			port: port ?? (await freePort()),
			brokerPort: await freePort(),
			db: databases.n8nDbLogin,
			...(env || queue || builtInWorkflow
				? {
						extraEnv: {
							...(queue ? queueEnv({ token: queueToken, ...queue }) : {}),
							...withoutPackages,
							...(env ?? {}),
						},
					}
				: {}),
		};
		await importStackCredentials(ctx, workDir, databases.keysFields, databases.businessFields, {
			builtIn: Boolean(builtInWorkflow),
			extra: extraCredentials,
		});
		const workflows = await importStackWorkflows(ctx, {
			workDir,
			n8nDb: databases.n8nDb,
			purgeEverySeconds,
			extraWorkflows,
			templateParameters,
			builtInWorkflow,
			sourceDir,
		});

		const n8n = await startN8nServer(ctx);
		// Torn down, the stack is thrown away: a main still waiting for executions on a worker a test
		// killed (queue mode) need not be given n8n's whole 30 s to finish them.
		teardown.push(() => n8n.stop({ graceMs: 5_000 }));
		// Workers after the main: it ran the database migrations they expect.
		const workers = queue
			? await startN8nWorkers(ctx, {
					count: queue.workers ?? 2,
					packageDir,
					concurrency: queue.concurrency,
				})
			: [];
		for (const worker of workers) teardown.push(() => worker.stop());
		const webhookUrls = await waitForStackWebhooks(databases.n8nDb, workflows, n8n, paths.line);
		progress(`n8n: webhook registered at ${webhookUrls[0]} (stack up in ${elapsed(startedAt)})`);

		return new RunningStack({
			label,
			ctx,
			workDir,
			databases,
			workflows,
			n8n,
			workers,
			queueToken,
			webhookUrls,
			purgeEverySeconds,
			teardown,
			packageDir,
			workerConcurrency: queue?.concurrency,
		});
	} catch (error) {
		await teardown.stop();
		throw error;
	}
}
