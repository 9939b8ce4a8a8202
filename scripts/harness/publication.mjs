// Publishing workflows and waiting until n8n really serves them: the CLI call per n8n line, 2.x's
// publication outbox, 1.x's webhook_entity rows, and the version id n8n serves.
import { progress, waitFor } from './log.mjs';
import { runN8nCli } from './n8n.mjs';

/** 2.x publishes a workflow; 1.x, which has no publish:workflow, activates it. */
export async function publishWorkflow(ctx, id) {
	const args =
		ctx.paths.line === 1
			? ['update:workflow', `--id=${id}`, '--active=true']
			: ['publish:workflow', `--id=${id}`];
	await runN8nCli(ctx, args, { label: `publish-${id}` });
}

/**
 * Publishes `ids`, in order, of the workflows the stack imported (`imported`), n8n stopped. Every n8n
 * CLI call boots n8n (2–4 s), and the signature and built-in suites publish 25 workflows each: about
 * a minute per start. 2.x: the one UPDATE n8n's publish:workflow makes (WorkflowRepository.
 * publishVersion: active, and the current version as the active one, for a workflow that is not
 * archived and has that version in its history), for all of them at once; any it did not publish
 * goes through the CLI. 1.x: `update:workflow --all --active=true` (the same update as `--id`, on
 * every row), then the imported ones not to publish deactivated.
 * @param {import('./n8n.mjs').N8nContext} ctx
 * @param {string[]} ids
 * @param {string[]} imported
 * @param {import('pg').Pool} n8nDb
 */
export async function publishWorkflows(ctx, ids, imported, n8nDb) {
	if (ids.length < 2) {
		for (const id of ids) await publishWorkflow(ctx, id);
		return;
	}
	if (ctx.paths.line !== 1) {
		const published = await publishInDatabase(n8nDb, ids);
		progress(`n8n: published ${published.size} workflows as publish:workflow does, in one UPDATE`);
		for (const id of ids.filter((candidate) => !published.has(candidate)))
			await publishWorkflow(ctx, id);
		return;
	}
	await runN8nCli(ctx, ['update:workflow', '--all', '--active=true'], { label: 'publish-all' });
	for (const id of imported.filter((candidate) => !ids.includes(candidate)))
		await runN8nCli(ctx, ['update:workflow', `--id=${id}`, '--active=false'], {
			label: `unpublish-${id}`,
		});
}

/** publish:workflow's update for every id at once; the ids it published (none where the schema differs). */
async function publishInDatabase(n8nDb, ids) {
	try {
		const { rows } = await n8nDb.query(
			`UPDATE workflow_entity w SET active = true, "activeVersionId" = w."versionId"
			 WHERE w.id = ANY($1) AND NOT w."isArchived"
			   AND EXISTS (SELECT 1 FROM workflow_history h WHERE h."workflowId" = w.id AND h."versionId" = w."versionId")
			 RETURNING w.id`,
			[ids],
		);
		return new Set(rows.map((row) => row.id));
	} catch (error) {
		progress(`n8n: publishing in the database failed (${error.message}); using the CLI`);
		return new Set();
	}
}

/**
 * n8n 2.x applies publications through an outbox: right after start-up it (re)applies every
 * published workflow (reason "startup"), and while that runs the webhook can be briefly
 * unregistered even though OPTIONS already answered 204 a moment before (seen here: OPTIONS 204,
 * then the first POST "not registered"). Wait until no publication of these workflows is pending or
 * in progress and each one's triggers are reported activated for its active version.
 */
export async function waitForPublishedTriggers(
	n8nDb,
	workflowIds,
	server,
	{ timeoutMs = 120_000 } = {},
) {
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
				return (
					rows.length > 0 &&
					rows.every((t) => t.status === 'activated' && t.versionId === t.activeVersionId)
				);
			});
			state = `${open.length} publications open, triggers ${JSON.stringify(triggers.map((t) => [t.id, t.status, t.errorMessage ?? undefined]))}`;
			return open.length === 0 && ready;
		},
		{ timeoutMs, intervalMs: 250 },
	);
	progress(`n8n: publications applied (${state})`);
}

/**
 * n8n 1.x answers the OPTIONS probe before it has activated the workflows at start-up, and a POST in
 * that gap is refused as "not registered". It records each activated webhook in webhook_entity: wait
 * for those rows.
 */
export async function waitForWebhookRows(n8nDb, workflowIds, server, { timeoutMs = 120_000 } = {}) {
	await waitFor(
		`n8n 1.x to activate the webhooks of ${workflowIds.join(', ')}`,
		async () => {
			if (server.process.exitStatus) throw new Error(`n8n exited:\n${server.logTail(40)}`);
			const { rows } = await n8nDb.query(
				`SELECT DISTINCT "workflowId" FROM webhook_entity WHERE "workflowId" = ANY($1)`,
				[workflowIds],
			);
			return rows.length === workflowIds.length;
		},
		{ timeoutMs, intervalMs: 250 },
	);
}

/** The version id n8n serves for a published workflow, where this n8n version records it. */
export async function publishedVersion(n8nDb, workflowId) {
	const { rows: columns } = await n8nDb.query(
		`SELECT column_name FROM information_schema.columns WHERE table_name = 'workflow_entity' AND column_name IN ('activeVersionId', 'versionId')`,
	);
	const names = columns.map((c) => c.column_name);
	const column = names.includes('activeVersionId')
		? 'activeVersionId'
		: names.includes('versionId')
			? 'versionId'
			: undefined;
	if (!column) return undefined;
	const { rows } = await n8nDb.query(
		`SELECT "${column}" AS version FROM workflow_entity WHERE id = $1`,
		[workflowId],
	);
	return rows[0]?.version ?? undefined;
}
