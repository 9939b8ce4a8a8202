// The whole e2e stack, in order:
//   1. Node.js 24 + n8n 2.41.1 from the cache (installed on first use)
//   2. PostgreSQL (DATABASE_URL, else embedded) with two fresh databases: idem_e2e_<random> for the
//      keys and business_log, n8n_e2e_<random> for n8n's own data
//   3. npm run build, npm pack, tarball extracted into $N8N_USER_FOLDER/.n8n/nodes/node_modules
//   4. while n8n is stopped: import:credentials (Idempotency Postgres, Business Postgres),
//      import:workflow (the two templates of workflows/, each given an id in a temp copy),
//      publish:workflow (the webhook template)
//   5. n8n start, /healthz/readiness, then the webhook answering OPTIONS with 204
// stop() undoes all of it: n8n, databases (or the embedded server), temp folder.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

import { fakeStripeSignature, sendEvent } from './http.mjs';
import { ensureN8n } from './install.mjs';
import { elapsed, progress, waitFor } from './log.mjs';
import { runN8nCli, runN8nCliBesideServer, startN8nServer, waitForWebhook } from './n8n.mjs';
import { buildAndPack, installIntoUserFolder, REPO_DIR } from './package.mjs';
import { freePort } from './ports.mjs';
import { randomSuffix, startPostgres } from './postgres.mjs';
import { onCleanup } from './processes.mjs';
import { branchOf, executionReader } from './records.mjs';

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

function webhookPathOf(workflow) {
	const webhook = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.webhook');
	if (!webhook) throw new Error('The webhook template has no Webhook node');
	return webhook.parameters.path;
}

/**
 * Starts the stack. Registers its own clean-up, so a signal or an early exit still stops n8n.
 * @param {{ label?: string, ownerSetup?: boolean }} options
 */
export async function startStack({ label = 'e2e' } = {}) {
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
		undo.push(async () => {
			if (keepWorkDir) progress(`N8N_E2E_KEEP=1: leaving ${workDir}`);
			else rmSync(workDir, { recursive: true, force: true });
		});
		const userFolder = path.join(workDir, 'n8n-user');
		const logDir = path.join(workDir, 'logs');
		mkdirSync(userFolder, { recursive: true });
		mkdirSync(logDir, { recursive: true });
		progress(`work folder ${workDir}`);

		const server = await startPostgres({ workDir });
		undo.push(() => server.stop());

		const suffix = randomSuffix();
		const keysDatabase = `idem_${label}_${suffix}`.replace(/[^a-z0-9_]/g, '_');
		const n8nDatabase = `n8n_${label}_${suffix}`.replace(/[^a-z0-9_]/g, '_');
		for (const name of [keysDatabase, n8nDatabase]) {
			await server.createDatabase(name);
			undo.push(async () => {
				if (server.kind === 'url') await server.dropDatabase(name);
			});
		}
		progress(`PostgreSQL: created databases ${keysDatabase} (keys, business_log) and ${n8nDatabase} (n8n)`);

		const keysDb = new pg.Pool({ ...server.clientConfig(keysDatabase), max: 4 });
		keysDb.on('error', () => undefined);
		const n8nDb = new pg.Pool({ ...server.clientConfig(n8nDatabase), max: 2 });
		n8nDb.on('error', () => undefined);
		undo.push(async () => {
			await keysDb.end().catch(() => undefined);
			await n8nDb.end().catch(() => undefined);
		});
		await keysDb.query(BUSINESS_LOG_SQL);

		const tarball = await buildAndPack(path.join(workDir, 'pack'));
		await installIntoUserFolder(tarball, userFolder);

		const ctx = {
			paths,
			userFolder,
			logDir,
			port: await freePort(),
			brokerPort: await freePort(),
			db: { host: server.host, port: server.port, user: server.user, password: server.password, database: n8nDatabase },
		};

		// Credentials: plain data in the import file; n8n encrypts it with N8N_ENCRYPTION_KEY.
		const dbFields = { host: server.host, port: server.port, database: keysDatabase, user: server.user, password: server.password };
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
		const webhookWorkflow = importableCopy(WEBHOOK_TEMPLATE, WEBHOOK_WORKFLOW_ID);
		const purgeWorkflow = importableCopy(PURGE_TEMPLATE, PURGE_WORKFLOW_ID);
		writeFileSync(path.join(workflowsDir, 'idempotent-webhook.json'), JSON.stringify(webhookWorkflow, null, 2));
		writeFileSync(path.join(workflowsDir, 'purge-keys.json'), JSON.stringify(purgeWorkflow, null, 2));
		await runN8nCli(ctx, ['import:workflow', '--separate', `--input=${workflowsDir}`], { label: 'import-workflows' });
		await runN8nCli(ctx, ['publish:workflow', `--id=${WEBHOOK_WORKFLOW_ID}`], { label: 'publish-webhook' });
		const published = await publishedVersion(n8nDb, WEBHOOK_WORKFLOW_ID);
		progress(`n8n: workflow ${WEBHOOK_WORKFLOW_ID} published as version ${published ?? '(unknown)'}`);

		const n8n = await startN8nServer(ctx);
		undo.push(() => n8n.stop());
		const webhookUrl = await waitForWebhook(n8n, webhookPathOf(webhookWorkflow));
		progress(`n8n: webhook registered at ${webhookUrl} (stack up in ${elapsed(startedAt)})`);

		const executions = executionReader(n8nDb, paths);

		const stack = {
			label,
			paths,
			ctx,
			workDir,
			server,
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
			executions,
			stop,
			/** POSTs one delivery to the template's webhook. */
			send: (body, options) => sendEvent(webhookUrl, body, options),
			/** POSTs and waits until n8n recorded the execution; returns { response, execution, branch }. */
			async deliver(body, options = {}) {
				const response = await sendEvent(webhookUrl, body, options);
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
			/** Runs the unchanged purge template once with `n8n execute --id` beside the running server. */
			async runPurge() {
				const before = new Set((await executions.list({ workflowId: PURGE_WORKFLOW_ID })).map((e) => e.id));
				const output = await runN8nCliBesideServer(ctx, ['execute', `--id=${PURGE_WORKFLOW_ID}`], { label: 'execute-purge' });
				const execution = await waitFor(
					'the purge execution in n8n\'s database',
					async () => (await executions.list({ workflowId: PURGE_WORKFLOW_ID })).find((e) => !before.has(e.id)),
					{ timeoutMs: 30_000 },
				);
				return { output, execution };
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
		};
		return stack;
	} catch (error) {
		await stop();
		throw error;
	}
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
