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
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

import { E2E_STRIPE_SECRET, fakeStripeSignature, sendEvent, stripeSignature } from './http.mjs';
import { ensureN8n } from './install.mjs';
import { createOwnerRole, startKeyStoreServer } from './keystore.mjs';
import { startPgBouncer } from './pgbouncer.mjs';
import { elapsed, progress, waitFor } from './log.mjs';
import { runN8nCli, startN8nServer, waitForWebhook } from './n8n.mjs';
import { buildAndPack, installIntoUserFolder, REPO_DIR } from './package.mjs';
import { freePort } from './ports.mjs';
import { randomSuffix, startPostgres } from './postgres.mjs';
import { onCleanup, onExitSync } from './processes.mjs';
import { branchOf, executionReader } from './records.mjs';
import { connectRedis, deleteKeysContaining } from './redis.mjs';
import { queueEnv, startN8nWorkers } from './workers.mjs';

export const WEBHOOK_TEMPLATE = 'workflows/idempotent-webhook.json';
export const PURGE_TEMPLATE = 'workflows/purge-keys.json';
export const WEBHOOK_WORKFLOW_ID = 'IdemWebhookTmpl01';
export const PURGE_WORKFLOW_ID = 'IdemPurgeTmpl0001';
export const BUSINESS_STEP = 'Business Step (insert business_log)';

export const BUSINESS_LOG_SQL = `CREATE TABLE IF NOT EXISTS business_log (
  id bigserial PRIMARY KEY,
  event_key text NOT NULL,
  event_type text,
  created_at timestamptz NOT NULL DEFAULT now()
);`;

function readTemplate(relativePath) {
	return JSON.parse(readFileSync(path.join(REPO_DIR, relativePath), 'utf8'));
}

/** The template as import needs it: the same JSON plus an id (and active: false; publishing activates it). */
function importableCopy(relativePath, id) {
	return { ...readTemplate(relativePath), id, active: false };
}

/**
 * `n8n execute --id` only starts at a Manual or Execute Workflow Trigger, so the purge template's
 * Schedule Trigger cannot be run that way. To run the template as it is meant to run (scheduled, in
 * the server), the copy that gets published fires every few seconds instead of every 6 hours.
 * That interval is the only change; the Purge Keys node and the connections stay as in the file.
 */
function purgeCopyEvery(seconds, id) {
	const workflow = importableCopy(PURGE_TEMPLATE, id);
	const trigger = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.scheduleTrigger');
	if (!trigger) throw new Error(`${PURGE_TEMPLATE} has no Schedule Trigger`);
	trigger.parameters = { ...trigger.parameters, rule: { interval: [{ field: 'seconds', secondsInterval: seconds }] } };
	return workflow;
}

/** 2.x publishes a workflow; 1.x, which has no publish:workflow, activates it. */
async function publishWorkflow(ctx, id) {
	const args = ctx.paths.line === 1 ? ['update:workflow', `--id=${id}`, '--active=true'] : ['publish:workflow', `--id=${id}`];
	await runN8nCli(ctx, args, { label: `publish-${id}` });
}

function withParameters(workflow, parametersByNode) {
	for (const [name, parameters] of Object.entries(parametersByNode)) {
		const node = workflow.nodes.find((candidate) => candidate.name === name);
		if (!node) throw new Error(`templateParameters: the webhook template has no node "${name}"`);
		node.parameters = { ...node.parameters, ...parameters };
	}
	return workflow;
}

function webhookPathOf(workflow) {
	const webhook = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.webhook');
	if (!webhook) throw new Error('The webhook template has no Webhook node');
	return webhook.parameters.path;
}

/**
 * An extra workflow to import and publish (startStack's `extraWorkflows`): a path (absolute, or
 * relative to the repository) whose JSON carries its own stable `id`, or `{ path, id }`. The copy
 * that gets imported is the file plus that id and `active: false`, nothing else changed.
 */
function extraWorkflowCopy(entry) {
	const file = typeof entry === 'string' ? entry : entry?.path;
	if (!file) throw new Error(`extraWorkflows: ${JSON.stringify(entry)} is neither a path nor { path, id }`);
	const json = JSON.parse(readFileSync(path.resolve(REPO_DIR, file), 'utf8'));
	const id = (typeof entry === 'string' ? undefined : entry.id) ?? json.id;
	if (!id) throw new Error(`extraWorkflows: ${file} has no "id" (give it one, or pass { path, id })`);
	return { file, workflow: { ...json, id, active: false } };
}

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
export async function startStack({ label = 'e2e', purgeEverySeconds, port, extraWorkflows = [], env, queue, keyStore, templateParameters = {}, pooler: poolerOptions } = {}) {
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
		if (keyStore?.role && !keyStore.separate) throw new Error('keyStore.role needs keyStore.separate');
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
		progress(`PostgreSQL: created databases ${keysDatabase} (keys, business_log) and ${n8nDatabase} (n8n)`);
		const keyLogin = keyStore?.role
			? await createOwnerRole(keyServer, keysDatabase, keyStore.role)
			: { user: keyServer.user, password: keyServer.password };

		// The credentials' way to the keys database: the server itself, or PgBouncer in front of it.
		const pooler = poolerOptions ? await startPgBouncer({ workDir, server: keyServer, login: keyLogin, ...poolerOptions }) : undefined;
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
			db: { host: server.host, port: server.port, user: server.user, password: server.password, database: n8nDatabase },
			...(env || queue ? { extraEnv: { ...(queue ? queueEnv({ token: queueToken, ...queue }) : {}), ...(env ?? {}) } } : {}),
		};

		// Credentials: plain data in the import file; n8n encrypts it with N8N_ENCRYPTION_KEY.
		const dbFields = { host: keysEndpoint.host, port: keysEndpoint.port, database: keysDatabase, user: keysEndpoint.user, password: keysEndpoint.password };
		const credentialsFile = path.join(workDir, 'credentials.json');
		writeFileSync(
			credentialsFile,
			JSON.stringify(
				[
					{
						id: 'IdemPgCredE2E0001',
						name: 'Idempotency Postgres',
						type: 'idempotencyPostgresApi',
						data: { ...dbFields, ssl: 'disable', maxConnections: 10 },
					},
					{
						// The template's Verify Webhook Signature node (Stripe); sendEvent signs with it.
						id: 'WhSigCredE2E00001',
						name: 'Webhook Signing Secret',
						type: 'webhookSigningSecretApi',
						data: { secret: E2E_STRIPE_SECRET, previousSecret: '' },
					},
					{
						id: 'BizPgCredE2E00001',
						name: 'Business Postgres',
						type: 'postgres',
						data: { ...dbFields, ssl: 'disable', allowUnauthorizedCerts: false, maxConnections: 20, sshTunnel: false },
					},
				],
				null,
				2,
			),
			{ mode: 0o600 },
		);
		await runN8nCli(ctx, ['import:credentials', `--input=${credentialsFile}`], { label: 'import-credentials' });

		const workflowsDir = path.join(workDir, 'workflows');
		mkdirSync(workflowsDir);
		const webhookWorkflow = withParameters(importableCopy(WEBHOOK_TEMPLATE, WEBHOOK_WORKFLOW_ID), templateParameters);
		const purgeWorkflow = purgeEverySeconds
			? purgeCopyEvery(purgeEverySeconds, PURGE_WORKFLOW_ID)
			: importableCopy(PURGE_TEMPLATE, PURGE_WORKFLOW_ID);
		writeFileSync(path.join(workflowsDir, 'idempotent-webhook.json'), JSON.stringify(webhookWorkflow, null, 2));
		writeFileSync(path.join(workflowsDir, 'purge-keys.json'), JSON.stringify(purgeWorkflow, null, 2));
		const extras = extraWorkflows.map(extraWorkflowCopy);
		for (const [index, { workflow }] of extras.entries()) {
			writeFileSync(path.join(workflowsDir, `extra-${index}.json`), JSON.stringify(workflow, null, 2));
		}
		await runN8nCli(ctx, ['import:workflow', '--separate', `--input=${workflowsDir}`], { label: 'import-workflows' });
		for (const { file, workflow } of extras) {
			await publishWorkflow(ctx, workflow.id);
			progress(`n8n: extra workflow ${workflow.id} (${file}) published`);
		}
		await publishWorkflow(ctx, WEBHOOK_WORKFLOW_ID);
		const published = await publishedVersion(n8nDb, WEBHOOK_WORKFLOW_ID);
		progress(`n8n: workflow ${WEBHOOK_WORKFLOW_ID} published as version ${published ?? '(unknown)'}`);
		if (purgeEverySeconds) {
			await publishWorkflow(ctx, PURGE_WORKFLOW_ID);
			progress(`n8n: purge workflow ${PURGE_WORKFLOW_ID} published, its Schedule Trigger set to every ${purgeEverySeconds} s`);
		}

		const n8n = await startN8nServer(ctx);
		undo.push(() => n8n.stop());
		// Workers after the main: it ran the database migrations they expect.
		const workers = queue ? await startN8nWorkers(ctx, { count: queue.workers ?? 2, packageDir, concurrency: queue.concurrency }) : [];
		for (const worker of workers) undo.push(() => worker.stop());
		const publishedIds = purgeEverySeconds ? [WEBHOOK_WORKFLOW_ID, PURGE_WORKFLOW_ID] : [WEBHOOK_WORKFLOW_ID];
		publishedIds.push(...extras.map(({ workflow }) => workflow.id));
		await waitForPublishedTriggers(n8nDb, publishedIds, n8n);
		if (ctx.paths.line === 1) await waitForWebhookRows(n8nDb, [WEBHOOK_WORKFLOW_ID, ...extras.filter(hasWebhook).map(({ workflow }) => workflow.id)], n8n);
		const webhookUrl = await waitForWebhook(n8n, webhookPathOf(webhookWorkflow));
		const extraPublished = [];
		for (const { file, workflow } of extras) {
			const webhook = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.webhook');
			const url = webhook ? await waitForWebhook(n8n, webhook.parameters.path) : undefined;
			extraPublished.push({ id: workflow.id, name: workflow.name, file, webhookUrl: url });
		}
		progress(`n8n: webhook registered at ${webhookUrl} (stack up in ${elapsed(startedAt)})`);

		const executions = executionReader(n8nDb, paths);

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
				const restarted = await startN8nServer(ctx);
				undo.push(() => restarted.stop());
				stack.n8n = restarted;
				await waitForPublishedTriggers(n8nDb, publishedIds, restarted);
				await waitForWebhook(restarted, webhookPathOf(webhookWorkflow));
				return restarted;
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
				for (const [name, value] of Object.entries(changes)) if (value === undefined) delete ctx.extraEnv[name];
				const restarted = await startN8nServer(ctx);
				undo.push(() => restarted.stop());
				stack.n8n = restarted;
				await waitForPublishedTriggers(n8nDb, publishedIds, restarted);
				await waitForWebhook(restarted, webhookPathOf(webhookWorkflow));
				for (const { workflow } of extras) {
					const webhook = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.webhook');
					if (webhook) await waitForWebhook(restarted, webhook.parameters.path);
				}
				return restarted;
			},
			/** POSTs one delivery to the template's webhook. */
			send: (body, options) => sendEvent(webhookUrl, body, options),
			/** POSTs and waits until n8n recorded the execution; returns { response, execution, branch }. */
			async deliver(body, options = {}) {
				const response = await sendEvent(webhookUrl, body, options);
				if (response.status === 404) throw new Error(`The webhook answered 404 (not registered?): ${response.text.slice(0, 300)}`);
				const execution = await executions.waitForRequest(WEBHOOK_WORKFLOW_ID, response.requestId);
				return { response, execution, branch: branchOf(execution) };
			},
			async businessRows(eventKey) {
				const { rows } = eventKey
					? await keysDb.query('SELECT * FROM business_log WHERE event_key = $1 ORDER BY id', [eventKey])
					: await keysDb.query('SELECT * FROM business_log ORDER BY id');
				return rows;
			},
			async keyRows(key) {
				const exists = await keysDb.query(`SELECT to_regclass('public.processed_events') IS NOT NULL AS ok`);
				if (!exists.rows[0].ok) return [];
				const { rows } = key
					? await keysDb.query('SELECT key, first_seen FROM processed_events WHERE key = $1', [key])
					: await keysDb.query('SELECT key, first_seen FROM processed_events ORDER BY key');
				return rows;
			},
			/**
			 * Waits (bounded) for a run of the published purge workflow that started after `since`
			 * (a Date); needs startStack({ purgeEverySeconds }).
			 */
			async waitForPurgeRunAfter(since, { timeoutMs = 60_000 } = {}) {
				if (!purgeEverySeconds) throw new Error('The purge workflow is not published: start the stack with purgeEverySeconds');
				return await waitFor(
					`a purge run that started after ${since.toISOString()}`,
					async () =>
						(await executions.list({ workflowId: PURGE_WORKFLOW_ID })).find(
							(e) => new Date(e.startedAt).getTime() > since.getTime() && e.nodesRun.includes('Purge Keys'),
						),
					{ timeoutMs, intervalMs: 500 },
				);
			},
			/** Makes the editor usable: sets up the owner account (n8n starts with a placeholder owner). */
			async setupOwner({ email = 'demo@example.com', password = `Demo-${randomBytes(4).toString('hex')}-1A` } = {}) {
				const response = await fetch(`${n8n.baseUrl}/rest/owner/setup`, {
					method: 'POST',
					headers: { 'content-type': 'application/json' },
					body: JSON.stringify({ email, firstName: 'Demo', lastName: 'Owner', password }),
					signal: AbortSignal.timeout(30_000),
				});
				const text = await response.text();
				if (response.status !== 200) throw new Error(`owner setup answered ${response.status}: ${text.slice(0, 300)}`);
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

/**
 * n8n 2.x applies publications through an outbox: right after start-up it (re)applies every
 * published workflow (reason "startup"), and while that runs the webhook can be briefly
 * unregistered even though OPTIONS already answered 204 a moment before (seen here: OPTIONS 204,
 * then the first POST "not registered"). Wait until no publication of these workflows is pending or
 * in progress and each one's triggers are reported activated for its active version.
 */
async function waitForPublishedTriggers(n8nDb, workflowIds, server, { timeoutMs = 120_000 } = {}) {
	const { rows: tables } = await n8nDb.query(
		`SELECT table_name FROM information_schema.tables WHERE table_name IN ('workflow_publication_outbox', 'workflow_publication_trigger_status')`,
	);
	if (tables.length < 2) {
		progress('n8n: no publication outbox tables in this n8n version; relying on the OPTIONS probe');
		return;
	}
	let state = 'not checked yet';
	await waitFor(
		() => `n8n to finish publishing ${workflowIds.join(', ')} (${state})`,
		async () => {
			if (server.process.exitStatus) throw new Error(`n8n exited:\n${server.logTail(40)}`);
			const { rows: open } = await n8nDb.query(
				`SELECT "workflowId", status FROM workflow_publication_outbox
				 WHERE "workflowId" = ANY($1) AND status IN ('pending', 'in_progress')`,
				[workflowIds],
			);
			const { rows: triggers } = await n8nDb.query(
				`SELECT w.id, w."activeVersionId", t.status, t."versionId", t."errorMessage"
				 FROM workflow_entity w LEFT JOIN workflow_publication_trigger_status t ON t."workflowId" = w.id
				 WHERE w.id = ANY($1)`,
				[workflowIds],
			);
			// A failed activation is not final: n8n's reconciler re-publishes such workflows every 10 s.
			const ready = workflowIds.every((id) => {
				const rows = triggers.filter((t) => t.id === id);
				return rows.length > 0 && rows.every((t) => t.status === 'activated' && t.versionId === t.activeVersionId);
			});
			state = `${open.length} publications open, triggers ${JSON.stringify(triggers.map((t) => [t.id, t.status, t.errorMessage ?? undefined]))}`;
			return open.length === 0 && ready;
		},
		{ timeoutMs, intervalMs: 250 },
	);
	progress(`n8n: publications applied (${state})`);
}

function hasWebhook({ workflow }) {
	return workflow.nodes.some((node) => node.type === 'n8n-nodes-base.webhook');
}

/**
 * n8n 1.x answers the OPTIONS probe before it has activated the workflows at start-up, and a POST in
 * that gap is refused as "not registered". It records each activated webhook in webhook_entity: wait
 * for those rows.
 */
async function waitForWebhookRows(n8nDb, workflowIds, server, { timeoutMs = 120_000 } = {}) {
	await waitFor(
		`n8n 1.x to activate the webhooks of ${workflowIds.join(', ')}`,
		async () => {
			if (server.process.exitStatus) throw new Error(`n8n exited:\n${server.logTail(40)}`);
			const { rows } = await n8nDb.query(`SELECT DISTINCT "workflowId" FROM webhook_entity WHERE "workflowId" = ANY($1)`, [workflowIds]);
			return rows.length === workflowIds.length;
		},
		{ timeoutMs, intervalMs: 250 },
	);
}

/** The version id n8n serves for a published workflow, where this n8n version records it. */
async function publishedVersion(n8nDb, workflowId) {
	const { rows: columns } = await n8nDb.query(
		`SELECT column_name FROM information_schema.columns WHERE table_name = 'workflow_entity' AND column_name IN ('activeVersionId', 'versionId')`,
	);
	const names = columns.map((c) => c.column_name);
	const column = names.includes('activeVersionId') ? 'activeVersionId' : names.includes('versionId') ? 'versionId' : undefined;
	if (!column) return undefined;
	const { rows } = await n8nDb.query(`SELECT "${column}" AS version FROM workflow_entity WHERE id = $1`, [workflowId]);
	return rows[0]?.version ?? undefined;
}
