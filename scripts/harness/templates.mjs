// The workflows a stack imports: the repository's templates as import needs them (an id, inactive),
// the changes a test asks for (parameters, a faster purge schedule), and extra workflow files.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { REPO_DIR } from './package.mjs';

export const WEBHOOK_TEMPLATE = 'workflows/idempotent-webhook.json';
export const PURGE_TEMPLATE = 'workflows/purge-keys.json';
export const WEBHOOK_WORKFLOW_ID = 'IdemWebhookTmpl01';
export const PURGE_WORKFLOW_ID = 'IdemPurgeTmpl0001';
export const BUSINESS_STEP = 'Business Step (insert business_log)';
export const RESERVE = 'Idempotency Reserve';

/**
 * The webhook templates' Reserve (version 2, lease mode, verifying the Stripe signature) has these
 * outputs, in this order (nodes/shared/reserveRules/reserveOutputs.ts); in simple mode there is no
 * `in flight`, so `invalid signature` moves up to 2.
 */
export const RESERVE_OUTPUTS = Object.freeze({
	new: 0,
	duplicate: 1,
	inFlight: 2,
	invalidSignature: 3,
});

export const BUSINESS_LOG_SQL = `CREATE TABLE IF NOT EXISTS business_log (
  id bigserial PRIMARY KEY,
  event_key text NOT NULL,
  event_type text,
  created_at timestamptz NOT NULL DEFAULT now()
);`;

function readTemplate(relativePath, sourceDir) {
	return JSON.parse(readFileSync(path.join(sourceDir, relativePath), 'utf8'));
}

/**
 * The template as import needs it: the same JSON plus an id (and active: false; publishing activates
 * it). `sourceDir`: the checkout it is read from (another commit's for the A/B bench).
 */
export function importableCopy(relativePath, id, sourceDir = REPO_DIR) {
	return { ...readTemplate(relativePath, sourceDir), id, active: false };
}

/**
 * The webhook template switched to a provider as a user switches it (docs/signatures.md, "Switching
 * the provider"): Reserve verifies that provider's signature and keys on its preset, with the given
 * Webhook Signing Secret credential; the Webhook listens on `webhookPath`, under an id of its own.
 * @param {{ value: string, label: string }} provider an entry of the provider table
 * @param {{ id: string, webhookPath: string, credential: { id: string, name: string }, name?: string }} copy
 */
export function templateSwitchedTo(provider, { id, webhookPath, credential, name }) {
	const workflow = importableCopy(WEBHOOK_TEMPLATE, id);
	workflow.name = `${workflow.name} (${name ?? `${provider.label}, e2e`})`;
	for (const node of workflow.nodes) {
		if (node.type === 'n8n-nodes-base.webhook') {
			node.parameters = { ...node.parameters, path: webhookPath };
			node.webhookId = randomUUID();
		}
		if (node.name === RESERVE) {
			node.parameters = {
				...node.parameters,
				signature: provider.value,
				keySource: provider.value,
			};
			node.credentials = { ...node.credentials, webhookSigningSecretApi: credential };
		}
	}
	return workflow;
}

/**
 * `n8n execute --id` only starts at a Manual or Execute Workflow Trigger, so a template's Schedule
 * Trigger cannot be run that way. To run a scheduled template as it is meant to run (in the
 * server), the copy that gets published fires every few seconds instead of every 6 hours (purge) or
 * 15 minutes (stuck keys). That interval is the only change; the other nodes and the connections
 * stay as in the file.
 * @param {string} relativePath
 * @param {number} seconds
 * @param {string} id
 */
export function scheduledCopyEvery(relativePath, seconds, id) {
	const workflow = importableCopy(relativePath, id);
	const trigger = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.scheduleTrigger');
	if (!trigger) throw new Error(`${relativePath} has no Schedule Trigger`);
	trigger.parameters = {
		...trigger.parameters,
		rule: { interval: [{ field: 'seconds', secondsInterval: seconds }] },
	};
	return workflow;
}

/** The purge template, its Schedule Trigger firing every `seconds` (startStack's purgeEverySeconds). */
export function purgeCopyEvery(seconds, id) {
	return scheduledCopyEvery(PURGE_TEMPLATE, seconds, id);
}

export function withParameters(workflow, parametersByNode) {
	for (const [name, parameters] of Object.entries(parametersByNode)) {
		const node = workflow.nodes.find((candidate) => candidate.name === name);
		if (!node) throw new Error(`templateParameters: the webhook template has no node "${name}"`);
		node.parameters = { ...node.parameters, ...parameters };
	}
	return workflow;
}

export function webhookPathOf(workflow) {
	const webhook = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.webhook');
	if (!webhook) throw new Error('The webhook template has no Webhook node');
	return webhook.parameters.path;
}

/**
 * @typedef {string | { path: string, id?: string } | { workflow: { id: string, name: string, nodes: object[] } }} ExtraWorkflow
 *   a file (absolute, or relative to the repository) whose JSON carries its own stable `id`, or
 *   `{ path, id }`, or a workflow a test built (`{ workflow }`, with its `id`).
 */

/**
 * An extra workflow to import and publish (startStack's `extraWorkflows`). The copy that gets
 * imported is the JSON plus its id and `active: false`, nothing else changed.
 * @param {ExtraWorkflow} entry
 */
export function extraWorkflowCopy(entry) {
	if (typeof entry === 'object' && 'workflow' in entry) {
		const { workflow } = entry;
		if (!workflow?.id)
			throw new Error(`extraWorkflows: the workflow "${workflow?.name}" has no "id"`);
		return {
			file: `(built by the test: ${workflow.name})`,
			workflow: { ...workflow, active: false },
		};
	}
	const file = typeof entry === 'string' ? entry : entry?.path;
	if (!file)
		throw new Error(
			`extraWorkflows: ${JSON.stringify(entry)} is neither a path, { path, id } nor { workflow }`,
		);
	const json = JSON.parse(readFileSync(path.resolve(REPO_DIR, file), 'utf8'));
	const id = (typeof entry === 'string' ? undefined : entry.id) ?? json.id;
	if (!id)
		throw new Error(`extraWorkflows: ${file} has no "id" (give it one, or pass { path, id })`);
	return { file, workflow: { ...json, id, active: false } };
}

export function hasWebhook({ workflow }) {
	return workflow.nodes.some((node) => node.type === 'n8n-nodes-base.webhook');
}
