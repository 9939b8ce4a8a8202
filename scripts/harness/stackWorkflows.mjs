// The stack's workflows: the two templates of workflows/ (and any extra workflow files), imported
// into n8n while it is stopped and published; then, once n8n runs, waiting until they answer.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { progress } from './log.mjs';
import { runN8nCli, waitForWebhook } from './n8n.mjs';
import {
	publishedVersion,
	publishWorkflows,
	waitForPublishedTriggers,
	waitForWebhookRows,
} from './publication.mjs';
import {
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

/**
 * Imports and publishes the stack's workflows with n8n's CLI (n8n must not be running).
 * @param {import('./n8n.mjs').N8nContext} ctx
 * @param {object} options see startStack for purgeEverySeconds, extraWorkflows, templateParameters.
 * @param {string} options.workDir
 * @param {import('pg').Pool} options.n8nDb
 * @param {number} [options.purgeEverySeconds]
 * @param {Array<import('./templates.mjs').ExtraWorkflow>} options.extraWorkflows
 * @param {Record<string, Record<string, unknown>>} options.templateParameters
 * @param {object} [options.builtInWorkflow] takes the webhook template's place; no purge template.
 * @param {string} [options.sourceDir] the checkout whose templates are imported (see startStack).
 */
export async function importStackWorkflows(
	ctx,
	{
		workDir,
		n8nDb,
		purgeEverySeconds,
		extraWorkflows,
		templateParameters,
		builtInWorkflow,
		sourceDir,
	},
) {
	const workflowsDir = path.join(workDir, 'workflows');
	mkdirSync(workflowsDir);
	const webhookWorkflow = withParameters(
		builtInWorkflow
			? { ...builtInWorkflow, id: WEBHOOK_WORKFLOW_ID, active: false }
			: importableCopy(WEBHOOK_TEMPLATE, WEBHOOK_WORKFLOW_ID, sourceDir),
		templateParameters,
	);
	const purgeWorkflow = purgeEverySeconds
		? purgeCopyEvery(purgeEverySeconds, PURGE_WORKFLOW_ID)
		: importableCopy(PURGE_TEMPLATE, PURGE_WORKFLOW_ID, sourceDir);
	const write = (name, workflow) =>
		writeFileSync(path.join(workflowsDir, name), JSON.stringify(workflow, null, 2));
	write('idempotent-webhook.json', webhookWorkflow);
	// The purge template is made of the package's nodes: without the package there is nothing to import.
	if (!builtInWorkflow) write('purge-keys.json', purgeWorkflow);
	const extras = extraWorkflows.map(extraWorkflowCopy);
	for (const [index, { workflow }] of extras.entries()) write(`extra-${index}.json`, workflow);
	await runN8nCli(ctx, ['import:workflow', '--separate', `--input=${workflowsDir}`], {
		label: 'import-workflows',
	});

	const extraIds = extras.map(({ workflow }) => workflow.id);
	await publishWorkflows(
		ctx,
		[...extraIds, WEBHOOK_WORKFLOW_ID, ...(purgeEverySeconds ? [PURGE_WORKFLOW_ID] : [])],
		[...extraIds, WEBHOOK_WORKFLOW_ID, ...(builtInWorkflow ? [] : [PURGE_WORKFLOW_ID])],
		n8nDb,
	);
	for (const { file, workflow } of extras)
		progress(`n8n: extra workflow ${workflow.id} (${file}) published`);
	const publishedVersionId = await publishedVersion(n8nDb, WEBHOOK_WORKFLOW_ID);
	progress(
		`n8n: workflow ${WEBHOOK_WORKFLOW_ID} published as version ${publishedVersionId ?? '(unknown)'}`,
	);
	if (purgeEverySeconds)
		progress(
			`n8n: purge workflow ${PURGE_WORKFLOW_ID} published, its Schedule Trigger set to every ${purgeEverySeconds} s`,
		);

	const withWebhook = [{ workflow: webhookWorkflow }, ...extras.filter(hasWebhook)];
	return {
		publishedVersionId,
		extras,
		/** Every published workflow, by id: n8n must have activated each one's trigger. */
		publishedIds: [
			WEBHOOK_WORKFLOW_ID,
			...(purgeEverySeconds ? [PURGE_WORKFLOW_ID] : []),
			...extras.map(({ workflow }) => workflow.id),
		],
		/** Every published workflow with a Webhook node: its id and the path it must answer on. */
		webhooks: withWebhook.map(({ workflow }) => ({
			id: workflow.id,
			path: webhookPathOf(workflow),
		})),
	};
}

/**
 * Waits until a (re)started main n8n has activated every published workflow and each webhook
 * answers; returns each webhook's URL, in the order of `workflows.webhooks`.
 * @param {import('pg').Pool} n8nDb
 * @param {Awaited<ReturnType<typeof importStackWorkflows>>} workflows
 * @param {Awaited<ReturnType<typeof import('./n8n.mjs').startN8nServer>>} server
 * @param {1 | 2} line n8n's major version: 1.x also needs its webhook_entity rows.
 */
export async function waitForStackWebhooks(n8nDb, workflows, server, line) {
	await waitForPublishedTriggers(n8nDb, workflows.publishedIds, server);
	if (line === 1)
		await waitForWebhookRows(
			n8nDb,
			workflows.webhooks.map(({ id }) => id),
			server,
		);
	const urls = [];
	for (const webhook of workflows.webhooks) urls.push(await waitForWebhook(server, webhook.path));
	return urls;
}
