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
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

import { importStackCredentials } from './credentials.mjs';
import { E2E_STRIPE_SECRET, fakeStripeSignature, sendEvent, stripeSignature } from './http.mjs';
import { ensureN8n } from './install.mjs';
import { createOwnerRole, startKeyStoreServer } from './keystore.mjs';
import { startPgBouncer } from './pgbouncer.mjs';
import { elapsed, progress, waitFor } from './log.mjs';
import { runN8nCli, startN8nServer, waitForWebhook } from './n8n.mjs';
import {
	publishedVersion,
	publishWorkflow,
	waitForPublishedTriggers,
	waitForWebhookRows,
} from './publication.mjs';
import { buildAndPack, installIntoUserFolder } from './package.mjs';
import { freePort } from './ports.mjs';
import { randomSuffix, startPostgres } from './postgres.mjs';
import { onCleanup, onExitSync } from './processes.mjs';
import { branchOf, executionReader, keyStoreReaders } from './records.mjs';
import { connectRedis, deleteKeysContaining } from './redis.mjs';
import {
	BUSINESS_LOG_SQL,
	extraWorkflowCopy,
	hasWebhook,
	importableCopy,
	PURGE_TEMPLATE,
	PURGE_WORKFLOW_ID,
	purgeCopyEvery,
	WEBHOOK_TEMPLATE,
	WEBHOOK_WORKFLOW_ID,
	webhookPathOf,
	withParameters,
} from './templates.mjs';
import { queueEnv, startN8nWorkers } from './workers.mjs';

export {
	BUSINESS_LOG_SQL,
	BUSINESS_STEP,
	PURGE_WORKFLOW_ID,
	WEBHOOK_WORKFLOW_ID,
} from './templates.mjs';

/**
 * Starts the stack. Registers its own clean-up, so a signal or an early exit still stops n8n.
 * @param {{ label?: string, purgeEverySeconds?: number, port?: number }} [options]
 *   purgeEverySeconds: also publish the purge template, its Schedule Trigger firing every N seconds
 *   (1-59); without it the purge template is imported but not published.
 *   port: n8n's port on 127.0.0.1 (default: a free one).
 * @param {Array<string | { path: string, id?: string }>} [options.extraWorkflows]
 *   more workflow JSON files to import and publish alongside the template (see extraWorkflowCopy);
 *   each one's webhooks are waited for like the template's. stack.extraWorkflows lists them.
 * @param {Record<string, string>} [options.env] extra environment for every n8n process of the
 *   stack (e.g. { NODE_FUNCTION_ALLOW_BUILTIN: 'crypto' }, or NODE_OPTIONS for profiling).
 * @param {{ workers?: number, concurrency?: number, redisHost?: string, redisPort?: number }} [options.queue]
 *   queue mode (workers.mjs): EXECUTIONS_MODE=queue for the main and every worker, the Redis at
 *   127.0.0.1:6379 with key prefixes unique to this stack (removed at the end), and `workers`
 *   (default 2) `n8n worker` processes, each with its own user folder, broker and health port.
 *   stack.workers lists them.
 * @param {{ separate?: boolean, role?: string }} [options.keyStore]
 *   separate: the keys database (processed_events, business_log; both credentials) lives on a second
 *   embedded PostgreSQL that stack.keyServer.stopServer() / startServer() restart while n8n's own
 *   database stays up (keystore.mjs). role: both credentials log in as this non-superuser role,
 *   which owns the keys database (so a test can REVOKE from it); needs separate.
 * @param {Record<string, Record<string, unknown>>} [options.templateParameters]
 *   parameters to change in the published copy of the webhook template, by node name (e.g. a short
 *   lease for a crash test: { 'Idempotency Reserve': { leaseSeconds: 60 } }); the file is unchanged.
 * @param {{ defaultPoolSize?: number, maxClientConn?: number }} [options.pooler]
 *   both credentials reach the keys database through PgBouncer in transaction mode (pgbouncer.mjs),
 *   started in front of its server; stack.pooler is it (port, admin console, SHOW STATS).
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
	pooler: poolerOptions,
} = {}) {
	const startedAt = Date.now();
	const undo = [];
	let stopped = false;
	const stop = async () => {
		if (stopped) return;
		stopped = true;
		for (const step of undo.reverse()) {
			try {
				await step();
			} catch (error) {
				progress(`stop: ${error?.message ?? error}`);
			}
		}
		progress(`stack stopped (${label})`);
	};
	const unregister = onCleanup(stop);
	undo.push(async () => unregister());

	try {
		const paths = await ensureN8n();

		const workDir = mkdtempSync(path.join(tmpdir(), `n8n-idem-${label}-`));
		const keepWorkDir = process.env.N8N_E2E_KEEP === '1';
		const removeWorkDir = () => rmSync(workDir, { recursive: true, force: true });
		// If the process ends before stop() (killed by a test runner), its exit hook still removes it.
		const unregisterExitRemoval = keepWorkDir ? () => undefined : onExitSync(removeWorkDir);
		undo.push(async () => {
			unregisterExitRemoval();
			if (keepWorkDir) progress(`N8N_E2E_KEEP=1: leaving ${workDir}`);
			else removeWorkDir();
		});
		const userFolder = path.join(workDir, 'n8n-user');
		const logDir = path.join(workDir, 'logs');
		mkdirSync(userFolder, { recursive: true });
		mkdirSync(logDir, { recursive: true });
		progress(`work folder ${workDir}`);

		// Queue mode: Redis must be there before anything starts; this stack's keys go at the end.
		const queueToken = queue ? `idem${randomSuffix()}` : undefined;
		if (queue) {
			const redis = await connectRedis(paths, { host: queue.redisHost, port: queue.redisPort });
			undo.push(async () => {
				try {
					await deleteKeysContaining(redis, queueToken);
				} finally {
					redis.disconnect();
				}
			});
		}

		const server = await startPostgres({ workDir });
		undo.push(() => server.stop());
		if (keyStore?.role && !keyStore.separate)
			throw new Error('keyStore.role needs keyStore.separate');
		const keyServer = keyStore?.separate ? await startKeyStoreServer({ workDir }) : server;
		if (keyServer !== server) undo.push(() => keyServer.stop());

		const suffix = randomSuffix();
		const keysDatabase = `idem_${label}_${suffix}`.replace(/[^a-z0-9_]/g, '_');
		const n8nDatabase = `n8n_${label}_${suffix}`.replace(/[^a-z0-9_]/g, '_');
		for (const [name, host] of [
			[keysDatabase, keyServer],
			[n8nDatabase, server],
		]) {
			await host.createDatabase(name);
			undo.push(async () => {
				if (host.kind === 'url') await host.dropDatabase(name);
			});
		}
		progress(
			`PostgreSQL: created databases ${keysDatabase} (keys, business_log) and ${n8nDatabase} (n8n)`,
		);
		const keyLogin = keyStore?.role
			? await createOwnerRole(keyServer, keysDatabase, keyStore.role)
			: { user: keyServer.user, password: keyServer.password };

		// The credentials' way to the keys database: the server itself, or PgBouncer in front of it.
		const pooler = poolerOptions
			? await startPgBouncer({ workDir, server: keyServer, login: keyLogin, ...poolerOptions })
			: undefined;
		if (pooler) undo.push(() => pooler.stop());
		const keysEndpoint = pooler
			? { host: pooler.host, port: pooler.port, ...pooler.login }
			: { host: keyServer.host, port: keyServer.port, ...keyLogin };

		const keysDb = new pg.Pool({ ...keyServer.clientConfig(keysDatabase), max: 4 });
		keysDb.on('error', () => undefined);
		const n8nDb = new pg.Pool({ ...server.clientConfig(n8nDatabase), max: 2 });
		n8nDb.on('error', () => undefined);
		undo.push(async () => {
			await keysDb.end().catch(() => undefined);
			await n8nDb.end().catch(() => undefined);
		});
		await keysDb.query(BUSINESS_LOG_SQL);
		if (keyStore?.role) await keysDb.query(`ALTER TABLE business_log OWNER TO "${keyLogin.user}"`);

		const tarball = await buildAndPack(path.join(workDir, 'pack'));
		const packageDir = await installIntoUserFolder(tarball, userFolder);

		const ctx = {
			paths,
			userFolder,
			logDir,
			port: port ?? (await freePort()),
			brokerPort: await freePort(),
			db: {
				host: server.host,
				port: server.port,
				user: server.user,
				password: server.password,
				database: n8nDatabase,
			},
			...(env || queue
				? {
						extraEnv: {
							...(queue ? queueEnv({ token: queueToken, ...queue }) : {}),
							...(env ?? {}),
						},
					}
				: {}),
		};

		const keysFields = {
			host: keysEndpoint.host,
			port: keysEndpoint.port,
			database: keysDatabase,
			user: keysEndpoint.user,
			password: keysEndpoint.password,
		};
		await importStackCredentials(ctx, workDir, keysFields);

		const workflowsDir = path.join(workDir, 'workflows');
		mkdirSync(workflowsDir);
		const webhookWorkflow = withParameters(
			importableCopy(WEBHOOK_TEMPLATE, WEBHOOK_WORKFLOW_ID),
			templateParameters,
		);
		const purgeWorkflow = purgeEverySeconds
			? purgeCopyEvery(purgeEverySeconds, PURGE_WORKFLOW_ID)
			: importableCopy(PURGE_TEMPLATE, PURGE_WORKFLOW_ID);
		writeFileSync(
			path.join(workflowsDir, 'idempotent-webhook.json'),
			JSON.stringify(webhookWorkflow, null, 2),
		);
		writeFileSync(
			path.join(workflowsDir, 'purge-keys.json'),
			JSON.stringify(purgeWorkflow, null, 2),
		);
		const extras = extraWorkflows.map(extraWorkflowCopy);
		for (const [index, { workflow }] of extras.entries()) {
			writeFileSync(
				path.join(workflowsDir, `extra-${index}.json`),
				JSON.stringify(workflow, null, 2),
			);
		}
		await runN8nCli(ctx, ['import:workflow', '--separate', `--input=${workflowsDir}`], {
			label: 'import-workflows',
		});
		for (const { file, workflow } of extras) {
			await publishWorkflow(ctx, workflow.id);
			progress(`n8n: extra workflow ${workflow.id} (${file}) published`);
		}
		await publishWorkflow(ctx, WEBHOOK_WORKFLOW_ID);
		const published = await publishedVersion(n8nDb, WEBHOOK_WORKFLOW_ID);
		progress(
			`n8n: workflow ${WEBHOOK_WORKFLOW_ID} published as version ${published ?? '(unknown)'}`,
		);
		if (purgeEverySeconds) {
			await publishWorkflow(ctx, PURGE_WORKFLOW_ID);
			progress(
				`n8n: purge workflow ${PURGE_WORKFLOW_ID} published, its Schedule Trigger set to every ${purgeEverySeconds} s`,
			);
		}

		const n8n = await startN8nServer(ctx);
		undo.push(() => n8n.stop());
		// Workers after the main: it ran the database migrations they expect.
		const workers = queue
			? await startN8nWorkers(ctx, {
					count: queue.workers ?? 2,
					packageDir,
					concurrency: queue.concurrency,
				})
			: [];
		for (const worker of workers) undo.push(() => worker.stop());
		const publishedIds = purgeEverySeconds
			? [WEBHOOK_WORKFLOW_ID, PURGE_WORKFLOW_ID]
			: [WEBHOOK_WORKFLOW_ID];
		publishedIds.push(...extras.map(({ workflow }) => workflow.id));
		await waitForPublishedTriggers(n8nDb, publishedIds, n8n);
		if (ctx.paths.line === 1)
			await waitForWebhookRows(
				n8nDb,
				[WEBHOOK_WORKFLOW_ID, ...extras.filter(hasWebhook).map(({ workflow }) => workflow.id)],
				n8n,
			);
		const webhookUrl = await waitForWebhook(n8n, webhookPathOf(webhookWorkflow));
		const extraPublished = [];
		for (const { file, workflow } of extras) {
			const webhook = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.webhook');
			const url = webhook ? await waitForWebhook(n8n, webhook.parameters.path) : undefined;
			extraPublished.push({ id: workflow.id, name: workflow.name, file, webhookUrl: url });
		}
		progress(`n8n: webhook registered at ${webhookUrl} (stack up in ${elapsed(startedAt)})`);

		const executions = executionReader(n8nDb, paths);
		const webhookPaths = [
			webhookPathOf(webhookWorkflow),
			...extras.filter(hasWebhook).map(({ workflow }) => webhookPathOf(workflow)),
		];

		/** The main n8n again on the same port and database, once every published webhook answers. */
		const startAgain = async () => {
			const restarted = await startN8nServer(ctx);
			undo.push(() => restarted.stop());
			stack.n8n = restarted;
			await waitForPublishedTriggers(n8nDb, publishedIds, restarted);
			for (const webhookPath of webhookPaths) await waitForWebhook(restarted, webhookPath);
			return restarted;
		};

		const stack = {
			label,
			paths,
			ctx,
			workDir,
			server,
			/** The PostgreSQL of the keys database: `server`, or with keyStore.separate its own restartable one. */
			keyServer,
			/** What both credentials log in as. */
			keyLogin,
			/** With the pooler option: PgBouncer, which both credentials go through (pgbouncer.mjs). */
			pooler,
			/** Queue mode: the `n8n worker` processes (workers.mjs), and the token in this stack's Redis prefixes. */
			workers,
			queueToken,
			keysDatabase,
			n8nDatabase,
			keysDb,
			n8nDb,
			n8n,
			baseUrl: n8n.baseUrl,
			webhookUrl,
			webhookWorkflowId: WEBHOOK_WORKFLOW_ID,
			purgeWorkflowId: PURGE_WORKFLOW_ID,
			publishedVersionId: published,
			/** The extraWorkflows, published: [{ id, name, file, webhookUrl (undefined without a Webhook node) }]. */
			extraWorkflows: extraPublished,
			executions,
			stop,
			/**
			 * kill -9 the main n8n process, as a crash or an OOM kill would (no shutdown, in-flight
			 * executions left as they were), then start it again on the same port and database and
			 * wait until the published webhooks answer. stack.n8n is the new server afterwards.
			 */
			async crashAndRestartN8n() {
				const crashed = stack.n8n;
				progress(`n8n: kill -9 the server (pid ${crashed.pid})`);
				try {
					process.kill(-crashed.pid, 'SIGKILL');
				} catch {
					// already gone
				}
				await crashed.process.exited;
				return await startAgain();
			},
			/**
			 * Stops the main n8n server (SIGTERM, as a deploy would) and starts it again on the same port
			 * and database, with `env` merged over the stack's extra environment from now on (e.g.
			 * NODE_OPTIONS with a preload); waits until the published webhooks answer. Regular mode only.
			 */
			async restartN8n({ env: changes = {} } = {}) {
				if (workers.length > 0) throw new Error('restartN8n: regular mode only');
				await stack.n8n.stop();
				ctx.extraEnv = { ...(ctx.extraEnv ?? {}), ...changes };
				for (const [name, value] of Object.entries(changes))
					if (value === undefined) delete ctx.extraEnv[name];
				return await startAgain();
			},
			/** POSTs one delivery to the template's webhook. */
			send: (body, options) => sendEvent(webhookUrl, body, options),
			/** POSTs and waits until n8n recorded the execution; returns { response, execution, branch }. */
			async deliver(body, options = {}) {
				const response = await sendEvent(webhookUrl, body, options);
				if (response.status === 404)
					throw new Error(
						`The webhook answered 404 (not registered?): ${response.text.slice(0, 300)}`,
					);
				const execution = await executions.waitForRequest(WEBHOOK_WORKFLOW_ID, response.requestId);
				return { response, execution, branch: branchOf(execution) };
			},
			...keyStoreReaders(keysDb),
			/**
			 * Waits (bounded) for a run of the published purge workflow that started after `since`
			 * (a Date); needs startStack({ purgeEverySeconds }).
			 */
			async waitForPurgeRunAfter(since, { timeoutMs = 60_000 } = {}) {
				if (!purgeEverySeconds)
					throw new Error(
						'The purge workflow is not published: start the stack with purgeEverySeconds',
					);
				return await waitFor(
					`a purge run that started after ${since.toISOString()}`,
					async () =>
						(await executions.list({ workflowId: PURGE_WORKFLOW_ID })).find(
							(e) =>
								new Date(e.startedAt).getTime() > since.getTime() &&
								e.nodesRun.includes('Purge Keys'),
						),
					{ timeoutMs, intervalMs: 500 },
				);
			},
			/** Makes the editor usable: sets up the owner account (n8n starts with a placeholder owner). */
			async setupOwner({
				email = 'demo@example.com',
				password = `Demo-${randomBytes(4).toString('hex')}-1A`,
			} = {}) {
				const response = await fetch(`${n8n.baseUrl}/rest/owner/setup`, {
					method: 'POST',
					headers: { 'content-type': 'application/json' },
					body: JSON.stringify({ email, firstName: 'Demo', lastName: 'Owner', password }),
					signal: AbortSignal.timeout(30_000),
				});
				const text = await response.text();
				if (response.status !== 200)
					throw new Error(`owner setup answered ${response.status}: ${text.slice(0, 300)}`);
				return { email, password };
			},
			fakeStripeSignature,
			/** A genuine Stripe-Signature for these bytes with the stack's secret (options: timestamp, secret). */
			stripeSignature,
			stripeSecret: E2E_STRIPE_SECRET,
		};
		return stack;
	} catch (error) {
		await stop();
		throw error;
	}
}
