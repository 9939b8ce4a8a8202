// What startStack() hands a test: the running stack's parts (servers, databases, n8n, workers) and
// what a test does with them (deliver an event, read the key store and the executions, crash or
// restart n8n). A class, so each member is written down once and its type is known to the checker.
import { randomBytes } from 'node:crypto';

import { E2E_STRIPE_SECRET, fakeStripeSignature, sendEvent, stripeSignature } from './http.mjs';
import { progress, waitFor } from './log.mjs';
import { startN8nServer } from './n8n.mjs';
import { branchOf, executionReader, keyStoreReaders } from './records.mjs';
import { waitForStackWebhooks } from './stackWorkflows.mjs';
import { PURGE_WORKFLOW_ID, WEBHOOK_WORKFLOW_ID } from './templates.mjs';
import { startN8nWorkers } from './workers.mjs';

/** @typedef {Awaited<ReturnType<typeof startN8nServer>>} N8nServer */

export class RunningStack {
	webhookWorkflowId = WEBHOOK_WORKFLOW_ID;
	purgeWorkflowId = PURGE_WORKFLOW_ID;
	fakeStripeSignature = fakeStripeSignature;
	/** A genuine Stripe-Signature for these bytes with the stack's secret (options: timestamp, secret). */
	stripeSignature = stripeSignature;
	stripeSecret = E2E_STRIPE_SECRET;
	#workflows;
	#teardown;
	#purgeEverySeconds;
	#packageDir;
	#workerConcurrency;

	/**
	 * @param {object} parts
	 * @param {string} parts.label
	 * @param {import('./n8n.mjs').N8nContext} parts.ctx
	 * @param {string} parts.workDir
	 * @param {Awaited<ReturnType<typeof import('./stackDatabases.mjs').startStackDatabases>>} parts.databases
	 * @param {Awaited<ReturnType<typeof import('./stackWorkflows.mjs').importStackWorkflows>>} parts.workflows
	 * @param {N8nServer} parts.n8n
	 * @param {import('./workers.mjs').N8nWorker[]} parts.workers
	 * @param {string | undefined} parts.queueToken
	 * @param {string[]} parts.webhookUrls the template's first, then the extra workflows' with a Webhook node.
	 * @param {number | undefined} parts.purgeEverySeconds
	 * @param {import('./teardown.mjs').Teardown} parts.teardown
	 * @param {string | undefined} parts.packageDir the package in the main's user folder (a new worker copies it).
	 * @param {number | undefined} parts.workerConcurrency queue mode: each worker's --concurrency.
	 */
	constructor({
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
		workerConcurrency,
	}) {
		this.label = label;
		this.paths = ctx.paths;
		this.ctx = ctx;
		this.workDir = workDir;
		this.server = databases.server;
		/** The PostgreSQL of the keys database: `server`, or with keyStore.separate its own restartable one. */
		this.keyServer = databases.keyServer;
		/** What both credentials log in as. */
		this.keyLogin = databases.keyLogin;
		/** With the pooler option: PgBouncer, which both credentials go through (pgbouncer.mjs). */
		this.pooler = databases.pooler;
		/** Queue mode: the `n8n worker` processes (workers.mjs), and the token in this stack's Redis prefixes. */
		this.workers = workers;
		this.queueToken = queueToken;
		this.keysDatabase = databases.keysDatabase;
		this.n8nDatabase = databases.n8nDatabase;
		this.keysDb = databases.keysDb;
		this.n8nDb = databases.n8nDb;
		/** Where the webhook template's business_log is (keysDb unless businessOnN8nServer). */
		this.businessDb = databases.businessDb;
		/** The main n8n server; replaced by crashAndRestartN8n and restartN8n. */
		this.n8n = n8n;
		this.baseUrl = n8n.baseUrl;
		this.webhookUrl = webhookUrls[0];
		this.publishedVersionId = workflows.publishedVersionId;
		/** The extraWorkflows, published: [{ id, name, file, webhookUrl (undefined without a Webhook node) }]. */
		this.extraWorkflows = workflows.extras.map(({ file, workflow }) => {
			const index = workflows.webhooks.findIndex(({ id }) => id === workflow.id);
			const webhookUrl = index >= 0 ? webhookUrls[index] : undefined;
			return { id: workflow.id, name: workflow.name, file, webhookUrl };
		});
		this.executions = executionReader(databases.n8nDb, ctx.paths);
		const readers = keyStoreReaders(databases.keysDb, databases.businessDb);
		this.businessRows = readers.businessRows;
		this.keyRows = readers.keyRows;
		/** Stops everything the stack started, in reverse order, and removes its work folder. */
		this.stop = teardown.stop;
		this.#workflows = workflows;
		this.#teardown = teardown;
		this.#purgeEverySeconds = purgeEverySeconds;
		this.#packageDir = packageDir;
		this.#workerConcurrency = workerConcurrency;
	}

	/**
	 * Queue mode: starts one more `n8n worker` beside the main, numbered after the others (e.g. to
	 * have two running again after a test killed one); stack.workers lists it, stop() stops it.
	 */
	async addWorker() {
		if (this.workers.length === 0) throw new Error('addWorker: the stack is not in queue mode');
		const [worker] = await startN8nWorkers(this.ctx, {
			count: 1,
			firstIndex: this.workers.length + 1,
			packageDir: this.#packageDir,
			concurrency: this.#workerConcurrency,
		});
		this.#teardown.push(() => worker.stop());
		this.workers.push(worker);
		return worker;
	}

	/** The keys database's own server, which a test may stop and start again (keyStore.separate). */
	get restartableKeyServer() {
		const keyServer = this.keyServer;
		if (!('stopServer' in keyServer))
			throw new Error(
				"The keys database shares n8n's server: start the stack with keyStore.separate",
			);
		return keyServer;
	}

	/** The keys database's primary and standby, which a test may kill and promote (keyStore.replicated). */
	get replicatedKeyStore() {
		const keyServer = this.keyServer;
		if (!('promote' in keyServer))
			throw new Error(
				'The keys database is not replicated: start the stack with keyStore.replicated',
			);
		return keyServer;
	}

	/** The main n8n again on the same port and database, once every published webhook answers. */
	async #startAgain() {
		const restarted = await startN8nServer(this.ctx);
		this.#teardown.push(() => restarted.stop({ graceMs: 5_000 }));
		this.n8n = restarted;
		await waitForStackWebhooks(this.n8nDb, this.#workflows, restarted, this.paths.line);
		return restarted;
	}

	/**
	 * kill -9 the main n8n process, as a crash or an OOM kill would (no shutdown, in-flight
	 * executions left as they were), then start it again on the same port and database and
	 * wait until the published webhooks answer. stack.n8n is the new server afterwards.
	 */
	async crashAndRestartN8n() {
		const crashed = this.n8n;
		progress(`n8n: kill -9 the server (pid ${crashed.pid})`);
		try {
			process.kill(-crashed.pid, 'SIGKILL');
		} catch {
			// already gone
		}
		await crashed.process.exited;
		return await this.#startAgain();
	}

	/**
	 * Stops the main n8n server (SIGTERM, as a deploy would) and starts it again on the same port
	 * and database, with `env` merged over the stack's extra environment from now on (e.g.
	 * NODE_OPTIONS with a preload); waits until the published webhooks answer. Regular mode only.
	 * @param {{ env?: Record<string, string | undefined> }} [options]
	 */
	async restartN8n({ env: changes = {} } = {}) {
		if (this.workers.length > 0) throw new Error('restartN8n: regular mode only');
		await this.n8n.stop();
		const extraEnv = { ...(this.ctx.extraEnv ?? {}) };
		for (const [name, value] of Object.entries(changes)) {
			if (value === undefined) delete extraEnv[name];
			else extraEnv[name] = value;
		}
		this.ctx.extraEnv = extraEnv;
		return await this.#startAgain();
	}

	/** How many business INSERTs run in the keys database right now (a slow business step under way). */
	async businessInsertsRunning() {
		const { rows } = await this.keysDb.query(
			`SELECT count(*)::int AS running FROM pg_stat_activity
			 WHERE datname = $1 AND query ILIKE 'INSERT INTO business_log%' AND state = 'active'`,
			[this.keysDatabase],
		);
		return rows[0].running;
	}

	/** POSTs one delivery to the template's webhook. */
	send(body, options) {
		return sendEvent(this.webhookUrl, body, options);
	}

	/**
	 * POSTs and waits until n8n recorded the execution; returns { response, execution, branch }.
	 * `to`: one of stack.extraWorkflows instead of the template (its webhook and its executions).
	 * @param {Buffer|string|object} body
	 * @param {Parameters<typeof sendEvent>[2] & { to?: { id: string, webhookUrl?: string } }} [options]
	 */
	async deliver(body, { to, ...options } = {}) {
		const url = to ? to.webhookUrl : this.webhookUrl;
		if (!url) throw new Error(`deliver: the extra workflow ${to?.id} has no Webhook node`);
		const response = await sendEvent(url, body, options);
		if (response.status === 404)
			throw new Error(`The webhook answered 404 (not registered?): ${response.text.slice(0, 300)}`);
		const workflowId = to ? to.id : WEBHOOK_WORKFLOW_ID;
		const execution = await this.executions.waitForRequest(workflowId, response.requestId);
		return { response, execution, branch: branchOf(execution) };
	}

	/**
	 * Waits (bounded) for a run of the published purge workflow that started after `since`
	 * (a Date); needs startStack({ purgeEverySeconds }).
	 * @param {Date} since
	 */
	async waitForPurgeRunAfter(since, { timeoutMs = 60_000 } = {}) {
		if (!this.#purgeEverySeconds)
			throw new Error(
				'The purge workflow is not published: start the stack with purgeEverySeconds',
			);
		return await waitFor(
			`a purge run that started after ${since.toISOString()}`,
			async () =>
				(await this.executions.list({ workflowId: PURGE_WORKFLOW_ID })).find(
					(e) =>
						new Date(e.startedAt).getTime() > since.getTime() && e.nodesRun.includes('Purge Keys'),
				),
			{ timeoutMs, intervalMs: 500 },
		);
	}

	/** Makes the editor usable: sets up the owner account (n8n starts with a placeholder owner). */
	async setupOwner({
		email = 'demo@example.com',
		password = `Demo-${randomBytes(4).toString('hex')}-1A`,
	} = {}) {
		const response = await fetch(`${this.n8n.baseUrl}/rest/owner/setup`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ email, firstName: 'Demo', lastName: 'Owner', password }),
			signal: AbortSignal.timeout(30_000),
		});
		const text = await response.text();
		if (response.status !== 200)
			throw new Error(`owner setup answered ${response.status}: ${text.slice(0, 300)}`);
		return { email, password };
	}
}
