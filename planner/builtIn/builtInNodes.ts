/**
 * What every part of the built-in workflow is made of (planner/builtIn/builtIn.ts): the node names later
 * expressions read by, the credential names, stable ids, and builders for the node kinds used more
 * than once (If and Switch conditions, Respond to Webhook, Postgres). Pure data and functions.
 */
import { WEBHOOK_NODE } from './builtInSignature';

/** Node names, which the expressions of later nodes read by. */
export const NODES = {
	webhook: WEBHOOK_NODE,
	rawOnly: 'Raw Body Only?',
	rawText: 'Raw Body as Text',
	hmac: 'Signature HMAC',
	valid: 'Signature Valid?',
	invalid: 'Respond 401 invalid signature',
	sentAsSigned: 'Sent as Signed?',
	unsupportedMediaType: 'Respond 415 unsupported media type',
	bodyHash: 'Body SHA-256',
	signedHash: 'Signed Content SHA-256',
	token: 'Owner Token',
	key: 'Key',
	storable: 'Key Storable?',
	invalidKey: 'Respond 400 invalid key',
	reserve: 'Reserve Key',
	verdict: 'New, Duplicate or In Flight?',
	business: 'Business Step (insert business_log)',
	complete: 'Complete Key',
	processed: 'Respond 200 processed',
	release: 'Release Key',
	failed: 'Respond 500',
	duplicate: 'Respond 200 duplicate',
	inFlight: 'Respond 409 in flight',
	note: 'What this workflow cannot promise',
} as const;

/** The field Extract From File writes the body text to. */
export const RAW_TEXT_FIELD = 'rawBody';

/** Credential names the imported workflow asks for (n8n matches them by name on import). */
export const BUILT_IN_CREDENTIALS = {
	postgres: 'Idempotency Postgres (built-in)',
	business: 'Business Postgres',
	crypto: 'Webhook Signing Secret (Crypto)',
} as const;

/** Where the n8n 1.x variant's HMAC node reads the signing secret from ($env). */
export const SECRET_ENV = 'WEBHOOK_SIGNING_SECRET';

export interface WorkflowNode {
	id: string;
	name: string;
	type: string;
	typeVersion: number;
	position: [number, number];
	parameters: Record<string, unknown>;
	[other: string]: unknown;
}

export interface BuiltInWorkflow {
	name: string;
	nodes: WorkflowNode[];
	connections: Record<
		string,
		{ main: Array<Array<{ node: string; type: 'main'; index: number }>> }
	>;
	settings: { executionOrder: 'v1' };
	pinData: Record<string, never>;
	meta: { templateCredsSetupCompleted: boolean };
}

/** The Key node's key and owner token, as a later node reads them. */
export const KEY_OF_KEY_NODE = `$('${NODES.key}').first().json.key`;
export const TOKEN_OF_KEY_NODE = `$('${NODES.key}').first().json.ownerToken`;

/** One condition "this expression is true", as the If (v2.2) and Switch (v3.2) nodes store it. */
export function isTrue(expression: string, id: string) {
	return {
		options: { caseSensitive: true, leftValue: '', typeValidation: 'strict', version: 2 },
		conditions: [
			{
				id,
				leftValue: `={{ ${expression} }}`,
				rightValue: '',
				operator: { type: 'boolean', operation: 'true', singleValue: true },
			},
		],
		combinator: 'and',
	};
}

/** A PostgreSQL text[] literal of one value: the Postgres node sends arrays as JSON, so this is how $1::text[] gets one. */
export function textArray(value: string): string {
	return `'{"' + ${value}.replaceAll('\\\\', '\\\\\\\\').replaceAll('"', '\\\\"') + '"}'`;
}

export function respond(
	id: string,
	name: string,
	status: number,
	body: string,
	position: [number, number],
	headers?: Array<{ name: string; value: string }>,
	respondWith: 'json' | 'text' | 'noData' = 'json',
): WorkflowNode {
	return {
		id,
		name,
		type: 'n8n-nodes-base.respondToWebhook',
		typeVersion: 1.5,
		position,
		parameters: {
			respondWith,
			responseBody: body,
			options: {
				responseCode: status,
				...(headers ? { responseHeaders: { entries: headers } } : {}),
			},
		},
	};
}

export function postgres(
	id: string,
	name: string,
	sql: string,
	values: string,
	position: [number, number],
	credential: string,
	extra: Record<string, unknown> = {},
): WorkflowNode {
	return {
		id,
		name,
		type: 'n8n-nodes-base.postgres',
		typeVersion: 2.6,
		position,
		parameters: { operation: 'executeQuery', query: sql, options: { queryReplacement: values } },
		credentials: { postgres: { name: credential } },
		...extra,
	};
}

/** A Switch (v3.2) in rules mode: one renamed output per [output, expression] rule, in order. */
export function switchNode(
	id: string,
	name: string,
	rules: ReadonlyArray<readonly [string, string]>,
	position: [number, number],
	options: Record<string, unknown> = {},
): WorkflowNode {
	return {
		id,
		name,
		type: 'n8n-nodes-base.switch',
		typeVersion: 3.2,
		position,
		parameters: {
			mode: 'rules',
			rules: {
				values: rules.map(([output, expression]) => ({
					conditions: isTrue(expression, output.replaceAll(' ', '-')),
					renameOutput: true,
					outputKey: output,
				})),
			},
			options,
		},
	};
}

/** Stable node ids, so two downloads with the same settings are the same file. */
export function id(index: number): string {
	return `b1a7c0de-0000-4000-8000-${String(index).padStart(12, '0')}`;
}
