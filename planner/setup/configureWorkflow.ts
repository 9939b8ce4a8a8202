/**
 * A template (workflows/idempotent-webhook.json or idempotent-api.json) with the page's settings on
 * its nodes, the workflow the page offers for download: parameters as the node stores them, and
 * Reserve's outputs rewired when the settings change which outputs it has.
 */
import { reserveOutputNames } from '../../nodes/shared/reserveRules/reserveOutputs';
import { headerMap, httpStatusOf } from '../../nodes/shared/answers/storedResponse';
import { webhookAnswerOf } from '../../nodes/shared/answers/webhookAnswer';
import { SIGNATURE_SCHEMES } from '../../nodes/shared/webhook/signatureSchemes';
import { asNodeParameter, parameterOfSource, type PlannerSettings } from '../settings';

interface WorkflowNode {
	name: string;
	type: string;
	parameters: Record<string, unknown>;
	[other: string]: unknown;
}
interface Connection {
	node: string;
	type: string;
	index: number;
}
interface Workflow {
	nodes: WorkflowNode[];
	connections: Record<string, { main: Connection[][] }>;
	[other: string]: unknown;
}

const PACKAGE = 'n8n-nodes-idempotency';

function outputsOf(workflow: Workflow, name: string): Connection[][] {
	return workflow.connections[name]?.main ?? [];
}

function removeNode(workflow: Workflow, name: string): void {
	workflow.nodes = workflow.nodes.filter((node) => node.name !== name);
	delete workflow.connections[name];
}

/**
 * The templates the page offers. `webhook` (workflows/idempotent-webhook.json) takes every setting.
 * `api` (workflows/idempotent-api.json) is built around the Idempotency-Key header and lease mode
 * (Complete Key stores the first answer): it keeps its key source and mode, and its per-caller
 * namespace expression unless the page sets a namespace.
 */
export type TemplateKind = 'webhook' | 'api';

/**
 * A template with these settings on its nodes. The webhook template in simple mode leaves out
 * Complete Key and the in-flight branch (nothing is ever in flight there): a Respond to Webhook node
 * with Complete Key's answer follows the business step, and every duplicate gets 200 "duplicate".
 */
export function configureWorkflow(
	template: unknown,
	settings: PlannerSettings,
	kind: TemplateKind = 'webhook',
): Workflow {
	const workflow = JSON.parse(JSON.stringify(template)) as Workflow;
	const reserve = workflow.nodes.find((node) => node.type === `${PACKAGE}.idempotencyReserve`);
	if (reserve === undefined) throw new Error('The template has no Idempotency Reserve node');
	const templateParameters = reserve.parameters;
	const parameters: Record<string, unknown> = { ...templateParameters };
	if (kind === 'webhook') {
		delete parameters.eventId;
		delete parameters.customKey;
		parameters.mode = settings.mode;
		parameters.keySource = settings.keySource;
		const parameter = parameterOfSource(settings.keySource);
		if (parameter !== undefined) parameters[parameter.name] = asNodeParameter(settings.eventIdPath);
	}
	if (parameters.mode === 'lease') parameters.leaseSeconds = settings.leaseSeconds;
	else delete parameters.leaseSeconds;
	parameters.fingerprint = settings.fingerprint;
	if (settings.fingerprint === 'expression')
		parameters.fingerprintExpression = asNodeParameter(settings.fingerprintExpression);
	else delete parameters.fingerprintExpression;
	if (kind === 'webhook' || settings.namespace !== '')
		parameters.namespace = asNodeParameter(settings.namespace);
	parameters.schema = settings.schema;
	parameters.table = settings.table;
	reserve.parameters = parameters;
	for (const node of workflow.nodes) {
		// Complete Key, Release Key: the nodes of the package that name the key table.
		if (node !== reserve && node.type.startsWith(`${PACKAGE}.`) && 'table' in node.parameters) {
			node.parameters = { ...node.parameters, schema: settings.schema, table: settings.table };
		}
	}
	// The signature and the key come from one sender (README, "Switching the provider"): a preset
	// that names a sender also sets the scheme Reserve verifies.
	if (kind === 'webhook' && settings.keySource in SIGNATURE_SCHEMES) {
		const verifies = typeof parameters.signature === 'string' && parameters.signature !== 'none';
		if (verifies) parameters.signature = settings.keySource;
	}
	if (kind === 'webhook' && settings.mode === 'simple') {
		const complete = workflow.nodes.find((node) => node.type === `${PACKAGE}.idempotencyComplete`);
		if (complete !== undefined) {
			const answering = respondNodeAnsweringAs(complete);
			if (answering !== undefined) workflow.nodes.push(answering);
			const after = answering
				? [{ node: answering.name, type: 'main', index: 0 }]
				: (outputsOf(workflow, complete.name)[0] ?? []);
			for (const outputs of Object.values(workflow.connections)) {
				for (const output of outputs.main) {
					const at = output.findIndex((c) => c.node === complete.name);
					if (at !== -1) output.splice(at, 1, ...after);
				}
			}
			removeNode(workflow, complete.name);
		}
	}
	// Simple mode has no in-flight output, and no fingerprint no reused-key output.
	followReserveOutputs(workflow, reserve, templateParameters);
	return workflow;
}

/**
 * Where Complete Key answers the webhook itself (Respond to Webhook), the Respond to Webhook node that
 * takes its place when simple mode leaves it out: the same status, body and headers.
 */
function respondNodeAnsweringAs(complete: WorkflowNode): WorkflowNode | undefined {
	const parameters = complete.parameters;
	if (parameters.respondToWebhook !== true) return undefined;
	const entries =
		(parameters.responseHeaders as { entries?: unknown[] } | undefined)?.entries ?? [];
	const headers = Object.fromEntries(
		(entries as Array<{ name: string; value: unknown }>).map(({ name, value }) => [name, value]),
	);
	const body = parameters.responseBody ?? '';
	const statusCode = httpStatusOf(parameters.responseStatusCode ?? 200);
	// An expression's value is known only when it runs: then only the user's headers go along.
	const isExpression = typeof body === 'string' && body.startsWith('=');
	const sentHeaders = isExpression
		? headerMap(headers)
		: webhookAnswerOf(statusCode, headers, body).headers;
	return {
		parameters: {
			respondWith: 'text',
			responseBody: body,
			options: {
				responseCode: statusCode,
				responseHeaders: {
					entries: Object.entries(sentHeaders).map(([name, value]) => ({ name, value })),
				},
			},
		},
		id: `${String(complete.id)}-respond`,
		name: `Respond ${statusCode}`,
		type: 'n8n-nodes-base.respondToWebhook',
		typeVersion: 1.5,
		position: complete.position,
	};
}

/**
 * Reserve's connections laid out again by output name once its settings changed which outputs it
 * has (n8n connects outputs by position): an output it no longer has loses its branch (the
 * templates' such branches are one Respond node each), and the error output stays last.
 */
function followReserveOutputs(
	workflow: Workflow,
	reserve: WorkflowNode,
	templateParameters: Record<string, unknown>,
): void {
	const version = Number(reserve.typeVersion);
	const before = reserveOutputNames(templateParameters, version);
	const after = reserveOutputNames(reserve.parameters, version);
	const connections = outputsOf(workflow, reserve.name);
	const branchOf = new Map(before.map((name, at) => [name, connections[at] ?? []]));
	for (const [name, branch] of branchOf) {
		if (!after.includes(name))
			for (const connection of branch) removeNode(workflow, connection.node);
	}
	const errorOutput = connections.slice(before.length);
	workflow.connections[reserve.name] = {
		main: [...after.map((name) => branchOf.get(name) ?? []), ...errorOutput],
	};
}
