// Reads what n8n itself recorded about executions, straight from its own PostgreSQL tables:
// execution_entity (one row per execution) and execution_data (the run data, in n8n's `flatted`
// format). `flatted` is loaded from the cached n8n install by absolute path: it is n8n's own
// dependency, not one of this package. Also what the keys database holds (keyStoreReaders).
import { createRequire } from 'node:module';
import path from 'node:path';

import { waitFor } from './log.mjs';

const FINISHED_STATUSES = ['success', 'error', 'crashed', 'canceled'];

/** The request id header every harness request carries, to match executions to requests. */
export const REQUEST_ID_HEADER = 'x-e2e-request';

export function loadFlatted(paths) {
	const requireFromN8n = createRequire(path.join(paths.n8nModules, 'n8n', 'package.json'));
	try {
		return requireFromN8n(path.join(paths.n8nModules, 'flatted'));
	} catch {
		// Not hoisted next to n8n: resolve it the way n8n does.
		return requireFromN8n('flatted');
	}
}

/**
 * @typedef {object} RecordedExecution
 * @property {string} id
 * @property {string} status
 * @property {string} mode
 * @property {string} startedAt   when n8n started the execution (ISO date)
 * @property {boolean} finished
 * @property {string|null} workflowVersionId
 * @property {string[]} nodesRun        names of the nodes that ran (runData keys), in execution order
 * @property {string|undefined} lastNodeExecuted
 * @property {string|undefined} error   the execution's error message, if it failed
 * @property {string|undefined} errorDescription  its description (the node's hint), if any
 * @property {object|undefined} trigger  the first item the first node output (the Webhook's headers/body)
 * @property {string|undefined} requestId  the x-e2e-request header of the triggering request
 * @property {(node: string, output?: number) => object[]} items  json of the items a node output
 * @property {(node: string) => number|undefined} startTime  when the node's first run started (epoch ms)
 * @property {(node: string) => number|undefined} endTime  when it ended (startTime + executionTime)
 */

function nodeItems(runData, node, output = 0) {
	const runs = runData?.[node] ?? [];
	const items = [];
	for (const run of runs)
		for (const item of run?.data?.main?.[output] ?? []) items.push(item?.json);
	return items;
}

/** The first item on any output of the trigger node. */
function triggerItem(runData, node) {
	const outputs = runData?.[node]?.[0]?.data?.main ?? [];
	return outputs.find((items) => items?.length)?.[0]?.json;
}

const RESERVE_NODE = 'Idempotency Reserve';

/**
 * Where Reserve sent its item, from the item itself (so whatever its outputs are): `new`,
 * `duplicate`, `in flight` or `invalid signature`. Reserve 2.3 answers the last three itself, so an
 * execution that ends at Reserve is told apart by this, not by the Respond node it reached.
 */
function reserveRoute(runData, node) {
	const outputs = runData?.[node]?.[0]?.data?.main ?? [];
	const item = outputs.find((items) => items?.length)?.[0]?.json;
	if (item === undefined) return undefined;
	if (item.signature?.valid === false) return 'invalid signature';
	const idempotency = item.idempotency ?? {};
	if (idempotency.isNew === true) return 'new';
	return idempotency.status === 'in_progress' && idempotency.mismatch === undefined
		? 'in flight'
		: 'duplicate';
}

function toRecord(row, flatted) {
	let data;
	try {
		data = row.data ? flatted.parse(row.data) : undefined;
	} catch (error) {
		data = { parseError: error.message };
	}
	const runData = data?.resultData?.runData ?? {};
	const nodesRun = Object.entries(runData)
		.map(([name, runs]) => ({
			name,
			order: runs?.[0]?.executionIndex ?? runs?.[0]?.startTime ?? 0,
		}))
		.sort((a, b) => a.order - b.order)
		.map(({ name }) => name);
	const triggerNode = nodesRun[0];
	// A Webhook that takes several methods has one output per method: the item is on the request's.
	const trigger = triggerNode ? triggerItem(runData, triggerNode) : undefined;
	const headers = trigger?.headers ?? {};
	return {
		id: String(row.id),
		status: row.status,
		mode: row.mode,
		finished: row.finished,
		workflowVersionId: row.workflowVersionId ?? null,
		startedAt: row.startedAt,
		stoppedAt: row.stoppedAt,
		nodesRun,
		lastNodeExecuted: data?.resultData?.lastNodeExecuted,
		error: data?.resultData?.error?.message,
		/** The failed node's description (its hint: what to change), if it failed. */
		errorDescription: data?.resultData?.error?.description ?? undefined,
		trigger,
		requestId: headers[REQUEST_ID_HEADER],
		items: (node, output = 0) => nodeItems(runData, node, output),
		/** Reserve's verdict on the item it routed (reserveRoute), undefined if it routed none. */
		reserveRoute: (node = RESERVE_NODE) => reserveRoute(runData, node),
		/** When the node's first run started (ms since the epoch, n8n's clock), undefined if it did not run. */
		startTime: (node) => runData?.[node]?.[0]?.startTime,
		/** When the node's first run ended (startTime + executionTime), undefined if it did not run. */
		endTime: (node) => {
			const run = runData?.[node]?.[0];
			return run?.startTime === undefined ? undefined : run.startTime + (run.executionTime ?? 0);
		},
	};
}

/** Reads n8n's executions from its database (a pg Pool on n8n's own database). */
export function executionReader(n8nDb, paths) {
	const flatted = loadFlatted(paths);
	let versionColumn;

	async function hasVersionColumn() {
		if (versionColumn === undefined) {
			const { rows } = await n8nDb.query(
				`SELECT 1 FROM information_schema.columns WHERE table_name = 'execution_entity' AND column_name = 'workflowVersionId'`,
			);
			versionColumn = rows.length > 0;
		}
		return versionColumn;
	}

	/**
	 * @param {{ workflowId?: string, finishedOnly?: boolean }} filter
	 * @returns {Promise<RecordedExecution[]>}
	 */
	async function list({ workflowId, finishedOnly = true } = {}) {
		const version = (await hasVersionColumn()) ? `, e."workflowVersionId"` : '';
		const conditions = [];
		const params = [];
		if (workflowId) {
			params.push(workflowId);
			conditions.push(`e."workflowId" = $${params.length}`);
		}
		if (finishedOnly) {
			params.push(FINISHED_STATUSES);
			conditions.push(`e.status = ANY($${params.length}::text[])`);
		}
		const where = conditions.length ? `WHERE ${conditions.join(' AND ')}` : '';
		const { rows } = await n8nDb.query(
			`SELECT e.id, e.status, e.mode, e.finished, e."startedAt", e."stoppedAt"${version}, d.data
			 FROM execution_entity e LEFT JOIN execution_data d ON d."executionId" = e.id
			 ${where} ORDER BY e.id`,
			params,
		);
		return rows.map((row) => toRecord(row, flatted));
	}

	/** Waits (bounded) until `count` finished executions of the workflow are recorded with their data. */
	async function waitForCount(workflowId, count, { timeoutMs = 60_000 } = {}) {
		return await waitFor(
			`${count} finished executions of workflow ${workflowId} in n8n's database`,
			async () => {
				const executions = await list({ workflowId });
				return executions.length >= count && executions.every((e) => e.nodesRun.length > 0)
					? executions
					: undefined;
			},
			{ timeoutMs, intervalMs: 250 },
		);
	}

	/** Waits (bounded) until the execution triggered by the request with this id is recorded. */
	async function waitForRequest(workflowId, requestId, { timeoutMs = 60_000 } = {}) {
		return await waitFor(
			`the execution of request ${requestId} in n8n's database`,
			async () => (await list({ workflowId })).find((e) => e.requestId === requestId),
			{ timeoutMs, intervalMs: 200 },
		);
	}

	return { list, waitForCount, waitForRequest };
}

/** Which way a template execution went, from the nodes n8n recorded as run. */
export function branchOf(execution) {
	const ran = new Set(execution.nodesRun);
	// The package's templates: Reserve's verdict (2.3 answers repeats itself); the built-in-nodes
	// workflows (Cloud): the Respond node each repeat reaches.
	const route =
		execution.reserveRoute() ??
		(ran.has('Respond 200 duplicate')
			? 'duplicate'
			: ran.has('Respond 409 in flight')
				? 'in flight'
				: undefined);
	if (route === 'duplicate' || route === 'in flight')
		return ran.has('Business Step (insert business_log)') ? 'both?!' : route;
	if (ran.has('Release Key') || ran.has('Respond 500')) return 'failed, key released';
	if (ran.has('Business Step (insert business_log)')) return 'processed';
	return `other (${execution.nodesRun.join(' → ')})`;
}

/** What the keys database holds: the business step's rows (in businessDb if apart) and the reserved keys, all or one. */
export function keyStoreReaders(keysDb, businessDb = keysDb) {
	return {
		async businessRows(eventKey) {
			const { rows } = eventKey
				? await businessDb.query('SELECT * FROM business_log WHERE event_key = $1 ORDER BY id', [
						eventKey,
					])
				: await businessDb.query('SELECT * FROM business_log ORDER BY id');
			return rows;
		},
		async keyRows(key) {
			const exists = await keysDb.query(
				`SELECT to_regclass('public.processed_events') IS NOT NULL AS ok`,
			);
			if (!exists.rows[0].ok) return [];
			const { rows } = key
				? await keysDb.query('SELECT key, first_seen FROM processed_events WHERE key = $1', [key])
				: await keysDb.query('SELECT key, first_seen FROM processed_events ORDER BY key');
			return rows;
		},
	};
}
