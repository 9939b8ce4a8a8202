/**
 * The "built-in nodes only" workflow: the package's main guarantees made of n8n-nodes-base nodes
 * alone, for n8n Cloud (which installs only verified community nodes, and this package, opening a
 * TCP connection, can never be verified) and for n8n 3 instances that keep unverified packages off.
 * The signature is checked with the Crypto node before anything is reserved; the key is the
 * package's `evt:` / `sha256:` key; the reservation, completion and release are the very statements
 * the package runs (planStatements, from nodes/shared/store/sql), one Postgres node each, their
 * values passed as the Postgres node's query parameters. No Code node. Pure: no DOM, no n8n import,
 * so the page (planner/main.ts) and the CLI (scripts/planner.mjs) build the same JSON.
 */
import { clientErrorDetails } from '../nodes/shared/errors/clientErrors';
import { tableRef } from '../nodes/shared/store/identifiers';
import { BuiltInError } from './builtInError';
import { checkBuiltInInputs, type BuiltInOptions } from './builtInInputs';
import { KEY_PROBLEM_FIELD, keyAssignments } from './builtInKey';
import {
	builtInSignatureOf,
	BUILT_IN_SIGNATURES,
	WEBHOOK_NODE,
	type BuiltInSignature,
} from './builtInSignature';
import { planStatements, type PlannerSettings } from './plan';

export { BUILT_IN_SIGNATURES, BuiltInError };
export { DEFAULT_WEBHOOK_PATH, REPLAY_GUARDS } from './builtInInputs';
export type { BuiltInOptions, ReplayGuard } from './builtInInputs';
export { DEFAULT_SETTINGS, KEY_SOURCES } from './plan';

/** Seconds a signed timestamp may be from now, as the package's default and the providers' libraries. */
export const TOLERANCE_SECONDS = 300;

/** Where the node types come from: n8n's own nodes, on every n8n including Cloud. */
export const BUILT_IN_PREFIX = 'n8n-nodes-base.';

/** What this path cannot promise next to the package; shown on the page, in the sticky note, in docs/cloud.md. */
export const BUILT_IN_NOTES: readonly string[] = [
	'Signatures are compared by an If node as text, not in constant time (the package uses crypto.timingSafeEqual).',
	"One signing secret (in a Crypto credential; with --n8n 1, from an environment variable): no previous secret during a rotation (Stripe's several v1 signatures in one header are accepted).",
	"Stripe and Slack sign a text made of the body: Extract From File decodes the raw body as UTF-8, so a body that is not valid UTF-8 fails the check (401). The body hash of the sha256: key is taken of that text too: the same as the package's for any UTF-8 body.",
	'No stored answers: a duplicate is answered {"status":"duplicate"}, not with the first delivery\'s answer (Complete Key\'s stored response).',
	'No fingerprints: a key reused with another payload is a plain duplicate.',
	'No Exactly-Once SQL and no Idempotency Step: the business step and the completion are two statements, so a crash between them runs the business step again once the lease ends.',
	"A JSON number as event id is used only as a safe integer (below 2^53), other numbers are answered 400; the package reads any number's exact digits from the raw body.",
	'The key table is not created for you: run the CREATE TABLE statement (in this note, and on the planner page) once.',
	"No Purge: delete old keys with the planner's purge statements on a Schedule Trigger and a Postgres node.",
	'No lock-timeout diagnosis and no hints: a failing Postgres node ends the execution and n8n answers 500, so the sender retries. An event id that cannot be a key (an object or array, NUL, half a surrogate pair, over 1,000 bytes) is answered 400 problem+json before anything is reserved, as by the package.',
	"Multipart bodies (multipart/*) are refused with 401: n8n's Webhook node hands their fields and files instead of the raw bytes, so their signature cannot be checked. JSON, text and form-urlencoded bodies (Slack's slash commands) are checked as usual.",
	'GitHub and Shopify do not sign their delivery id header, so the replay guard keys them on the SHA-256 of the signed body: a captured delivery resent under a new id is a duplicate, and two deliveries with identical bodies are one event (--replay-guard off keys on the header instead).',
	'The Postgres node writes the query parameters into the SQL text itself (escaped by its driver, pg-promise) rather than sending them as bind parameters.',
	'GitHub does not retry a 409 (in flight) on its own: redeliver it from GitHub.',
];

/** Node names, which the expressions of later nodes read by. */
const NODES = {
	webhook: WEBHOOK_NODE,
	rawOnly: 'Raw Body Only?',
	rawText: 'Raw Body as Text',
	hmac: 'Signature HMAC',
	valid: 'Signature Valid?',
	invalid: 'Respond 401 invalid signature',
	bodyHash: 'Body SHA-256',
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
const RAW_TEXT_FIELD = 'rawBody';

/** Credential names the imported workflow asks for (n8n matches them by name on import). */
export const BUILT_IN_CREDENTIALS = {
	postgres: 'Idempotency Postgres (built-in)',
	business: 'Business Postgres',
	crypto: 'Webhook Signing Secret (Crypto)',
} as const;

/** Where the n8n 1.x variant's HMAC node reads the signing secret from ($env). */
export const SECRET_ENV = 'WEBHOOK_SIGNING_SECRET';

interface WorkflowNode {
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

/** The SQL the workflow runs, taken from the planner's own statements (so from the package's). */
export interface BuiltInStatements {
	createTable: string;
	reserve: string;
	/** Lease mode only. */
	complete?: string;
	release: string;
}

/** The statements of planStatements the workflow runs, for these settings (no fingerprints). */
export function builtInStatements(settings: PlannerSettings): BuiltInStatements {
	const statements = planStatements({ ...settings, fingerprint: 'none' }, undefined, null);
	const find = (start: string): string | undefined =>
		statements.find((statement) => statement.title.startsWith(start))?.sql;
	const reserve = find('Reserve');
	const release = find('Release');
	const createTable = find('Create the table');
	if (reserve === undefined || release === undefined || createTable === undefined)
		throw new Error('builtInStatements: the planner has no Reserve, Release or Create statement');
	return { createTable, reserve, release, complete: find('Complete') };
}

// ---- the workflow ------------------------------------------------------------------------------

/** One condition "this expression is true", as the If (v2.2) and Switch (v3.2) nodes store it. */
function isTrue(expression: string, id: string) {
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
function textArray(value: string): string {
	return `'{"' + ${value}.replaceAll('\\\\', '\\\\\\\\').replaceAll('"', '\\\\"') + '"}'`;
}

function respond(
	id: string,
	name: string,
	status: number,
	body: string,
	position: [number, number],
	headers?: Array<{ name: string; value: string }>,
	respondWith: 'json' | 'text' = 'json',
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

function postgres(
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

function signatureNodes(signature: BuiltInSignature, line: 1 | 2): WorkflowNode[] {
	const hmacInput =
		signature.input.kind === 'binary'
			? { binaryData: true, binaryPropertyName: 'data' }
			: { binaryData: false, value: `={{ ${signature.input.expression} }}` };
	const conditions = isTrue(
		`${signature.signatures}.includes($json.expectedSignature)`,
		'signature-matches',
	);
	if (signature.timestamp !== undefined) {
		const t = signature.timestamp;
		conditions.conditions.push(
			isTrue(
				`((t) => t !== '' && Number.isSafeInteger(Number(t)) && Math.abs($now.toSeconds() - Number(t)) <= ${TOLERANCE_SECONDS})(${t})`,
				'timestamp-within-tolerance',
			).conditions[0],
		);
	}
	return [
		{
			id: id(2),
			name: NODES.hmac,
			type: 'n8n-nodes-base.crypto',
			typeVersion: line,
			position: [660, 300],
			parameters: {
				action: 'hmac',
				...hmacInput,
				type: 'SHA256',
				dataPropertyName: 'expectedSignature',
				encoding: signature.encoding,
				...(line === 1 ? { secret: `={{ $env.${SECRET_ENV} }}` } : {}),
			},
			...(line === 2 ? { credentials: { crypto: { name: BUILT_IN_CREDENTIALS.crypto } } } : {}),
		},
		{
			id: id(3),
			name: NODES.valid,
			type: 'n8n-nodes-base.if',
			typeVersion: 2.2,
			position: [880, 300],
			parameters: { conditions, options: {} },
		},
	];
}

/** The problem+json of an event id that cannot be a key: the package's own kind (nodes/shared/errors/clientErrors.ts). */
const INVALID_KEY = clientErrorDetails('invalid-key');

/** Stable node ids, so two downloads with the same settings are the same file. */
function id(index: number): string {
	return `b1a7c0de-0000-4000-8000-${String(index).padStart(12, '0')}`;
}

/**
 * The workflow for these settings and provider. Throws BuiltInError for a provider or setting the
 * built-in nodes cannot express (the message says why).
 */
export function builtInWorkflow(
	settings: PlannerSettings,
	options: BuiltInOptions,
): BuiltInWorkflow {
	// First, so nothing of a refused input reaches a node (builtInInputs.ts).
	const inputs = checkBuiltInInputs(settings, options);
	const support = builtInSignatureOf(options.provider);
	if (support === undefined)
		throw new BuiltInError(
			`Unknown provider "${options.provider}"`,
			`Use one of ${BUILT_IN_SIGNATURES.filter((s) => s.supported)
				.map((s) => (s.supported ? s.signature.provider : ''))
				.join(', ')}.`,
		);
	if (!support.supported)
		throw new BuiltInError(
			support.reason,
			'Choose another provider, or use the package on a self-hosted n8n.',
		);
	const signature = support.signature;
	const line = inputs.line;
	// The one decision of the replay guard: a sender that does not sign its id is keyed on its body.
	const keyOnBody = inputs.replayGuard === 'on' && !signature.signsEventId;
	const lease = settings.mode === 'lease';
	const sql = builtInStatements(settings);
	const leaseSeconds = settings.leaseSeconds;
	const key = `$('${NODES.key}').first().json.key`;
	const token = `$('${NODES.key}').first().json.ownerToken`;

	const nodes: WorkflowNode[] = [
		{
			id: id(0),
			name: NODES.webhook,
			type: 'n8n-nodes-base.webhook',
			typeVersion: 2.1,
			position: [0, 300],
			webhookId: id(99),
			parameters: {
				httpMethod: 'POST',
				path: inputs.webhookPath,
				responseMode: 'responseNode',
				options: { rawBody: true },
			},
		},
		{
			// For multipart/form-data the Webhook ignores Raw Body: fields become $json.body and a file
			// part named "data" becomes binary.data, which the HMAC would check while the key and the
			// business step read the fields. Such a request (or any with a file name on binary.data, which
			// the raw body never has) is refused before anything else runs.
			id: id(18),
			name: NODES.rawOnly,
			type: 'n8n-nodes-base.if',
			typeVersion: 2.2,
			position: [220, 300],
			parameters: {
				conditions: isTrue(
					`!String($json.headers["content-type"] ?? '').trim().toLowerCase().startsWith('multipart/') && $binary.data !== undefined && ($binary.data.fileName ?? '') === ''`,
					'raw-body-only',
				),
				options: {},
			},
		},
		{
			// The exact bytes as text for the signed string and the body hash: UTF-8 named (not guessed),
			// a byte order mark kept (it is part of what was signed), the item and its bytes kept.
			id: id(1),
			name: NODES.rawText,
			type: 'n8n-nodes-base.extractFromFile',
			typeVersion: 1,
			position: [440, 300],
			parameters: {
				operation: 'text',
				binaryPropertyName: 'data',
				destinationKey: RAW_TEXT_FIELD,
				options: { encoding: 'utf8', stripBOM: false, keepSource: 'both' },
			},
		},
		...signatureNodes(signature, line),
		respond(id(4), NODES.invalid, 401, '={{ { "status": "invalid signature" } }}', [1100, 560]),
		{
			id: id(5),
			name: NODES.bodyHash,
			type: 'n8n-nodes-base.crypto',
			typeVersion: line,
			position: [1100, 200],
			parameters: {
				action: 'hash',
				binaryData: false,
				type: 'SHA256',
				value: `={{ $json.${RAW_TEXT_FIELD} }}`,
				dataPropertyName: 'bodySha256',
				encoding: 'hex',
			},
		},
		...(lease
			? [
					{
						// The reservation's owner: only this execution may complete or release the key.
						id: id(6),
						name: NODES.token,
						type: 'n8n-nodes-base.crypto',
						typeVersion: line,
						position: [1320, 200] as [number, number],
						parameters: {
							action: 'generate',
							encodingType: 'uuid',
							dataPropertyName: 'ownerToken',
						},
					},
				]
			: []),
		{
			id: id(7),
			name: NODES.key,
			type: 'n8n-nodes-base.set',
			typeVersion: 3.4,
			position: [1540, 200],
			parameters: {
				mode: 'manual',
				includeOtherFields: true,
				assignments: { assignments: keyAssignments(settings, inputs, keyOnBody) },
				options: {},
			},
		},
		{
			id: id(19),
			name: NODES.storable,
			type: 'n8n-nodes-base.if',
			typeVersion: 2.2,
			position: [1760, 200],
			parameters: {
				conditions: isTrue(`$json.${KEY_PROBLEM_FIELD} === ''`, 'key-storable'),
				options: {},
			},
		},
		respond(
			id(20),
			NODES.invalidKey,
			INVALID_KEY.status,
			`={{ JSON.stringify({ type: ${JSON.stringify(INVALID_KEY.type)}, title: ${JSON.stringify(INVALID_KEY.title)}, status: ${INVALID_KEY.status}, detail: $json.${KEY_PROBLEM_FIELD} }) }}`,
			[1980, 460],
			[{ name: 'Content-Type', value: 'application/problem+json' }],
			'text',
		),
		postgres(
			id(8),
			NODES.reserve,
			sql.reserve,
			lease
				? `={{ [${textArray('$json.key')}, $json.ownerToken, ${leaseSeconds}] }}`
				: `={{ [${textArray('$json.key')}] }}`,
			[1980, 200],
			BUILT_IN_CREDENTIALS.postgres,
			// No row comes back for a key another execution reserved after this statement's snapshot:
			// an empty item still reaches the verdict, which counts it as in flight (duplicate in simple mode).
			{ alwaysOutputData: true },
		),
		{
			id: id(9),
			name: NODES.verdict,
			type: 'n8n-nodes-base.switch',
			typeVersion: 3.2,
			position: [2200, 200],
			parameters: {
				mode: 'rules',
				rules: {
					values: (lease
						? [
								['new', `$json.state === 'reserved'`],
								[
									'duplicate',
									`$json.key !== undefined && $json.state !== 'reserved' && $json.state !== 'in_progress'`,
								],
								['in flight', `$json.key === undefined || $json.state === 'in_progress'`],
							]
						: [
								['new', `$json.key !== undefined && $json.first_seen_epoch === null`],
								['duplicate', `$json.key === undefined || $json.first_seen_epoch !== null`],
							]
					).map(([output, expression]) => ({
						conditions: isTrue(expression, output.replace(' ', '-')),
						renameOutput: true,
						outputKey: output,
					})),
				},
				options: {},
			},
		},
		postgres(
			id(10),
			NODES.business,
			'INSERT INTO business_log (event_key, event_type) VALUES ($1, $2)',
			`={{ [${key}, $('${NODES.webhook}').first().json.body?.type ?? null] }}`,
			[2440, 0],
			BUILT_IN_CREDENTIALS.business,
			{ onError: 'continueErrorOutput' },
		),
		...(lease && sql.complete !== undefined
			? [
					postgres(
						id(11),
						NODES.complete,
						sql.complete,
						`={{ [${textArray(key)}, ${textArray(token)}] }}`,
						[2680, -100],
						BUILT_IN_CREDENTIALS.postgres,
					),
				]
			: []),
		respond(id(12), NODES.processed, 200, '={{ { "status": "processed" } }}', [2920, -100]),
		postgres(
			id(13),
			NODES.release,
			sql.release,
			lease ? `={{ [${textArray(key)}, ${textArray(token)}] }}` : `={{ [${textArray(key)}] }}`,
			[2680, 120],
			BUILT_IN_CREDENTIALS.postgres,
		),
		respond(id(14), NODES.failed, 500, `={{ { "status": "failed", "key": ${key} } }}`, [2920, 120]),
		respond(
			id(15),
			NODES.duplicate,
			200,
			`={{ { "status": "duplicate", "key": ${key} } }}`,
			[2440, 260],
		),
		...(lease
			? [
					respond(
						id(16),
						NODES.inFlight,
						409,
						`={{ { "status": "in_progress", "key": ${key}, "retryAfterSeconds": $json.int4 ?? ${Math.ceil(leaseSeconds)} } }}`,
						[2440, 460],
						[{ name: 'Retry-After', value: `={{ $json.int4 ?? ${Math.ceil(leaseSeconds)} }}` }],
					),
				]
			: []),
		{
			id: id(17),
			name: NODES.note,
			type: 'n8n-nodes-base.stickyNote',
			typeVersion: 1,
			position: [0, -420],
			parameters: {
				content: stickyNote(settings, signature, sql, line, keyOnBody),
				height: 900,
				width: 900,
			},
		},
	];

	const to = (node: string) => [{ node, type: 'main' as const, index: 0 }];
	const connections: BuiltInWorkflow['connections'] = {
		[NODES.webhook]: { main: [to(NODES.rawOnly)] },
		[NODES.rawOnly]: { main: [to(NODES.rawText), to(NODES.invalid)] },
		[NODES.rawText]: { main: [to(NODES.hmac)] },
		[NODES.hmac]: { main: [to(NODES.valid)] },
		[NODES.valid]: { main: [to(NODES.bodyHash), to(NODES.invalid)] },
		[NODES.bodyHash]: { main: [to(lease ? NODES.token : NODES.key)] },
		...(lease ? { [NODES.token]: { main: [to(NODES.key)] } } : {}),
		[NODES.key]: { main: [to(NODES.storable)] },
		[NODES.storable]: { main: [to(NODES.reserve), to(NODES.invalidKey)] },
		[NODES.reserve]: { main: [to(NODES.verdict)] },
		[NODES.verdict]: {
			main: lease
				? [to(NODES.business), to(NODES.duplicate), to(NODES.inFlight)]
				: [to(NODES.business), to(NODES.duplicate)],
		},
		[NODES.business]: { main: [to(lease ? NODES.complete : NODES.processed), to(NODES.release)] },
		...(lease ? { [NODES.complete]: { main: [to(NODES.processed)] } } : {}),
		[NODES.release]: { main: [to(NODES.failed)] },
	};
	return {
		name: `Idempotent webhook, built-in nodes only (${signature.label}, ${settings.mode} mode${line === 1 ? ', n8n 1.x' : ''})`,
		nodes,
		connections,
		settings: { executionOrder: 'v1' },
		pinData: {},
		meta: { templateCredsSetupCompleted: false },
	};
}

function stickyNote(
	settings: PlannerSettings,
	signature: BuiltInSignature,
	sql: BuiltInStatements,
	line: 1 | 2,
	keyOnBody: boolean,
): string {
	const secret =
		line === 2
			? `a **Crypto** credential "${BUILT_IN_CREDENTIALS.crypto}" with the ${signature.label} signing secret as HMAC Secret`
			: `n8n 1.x has no Crypto credential: Signature HMAC reads the ${signature.label} signing secret from the environment variable ${SECRET_ENV} (allowed unless N8N_BLOCK_ENV_ACCESS_IN_NODE=true)`;
	return [
		`## Idempotent webhook with built-in nodes only (${signature.label})`,
		'Made by the n8n-nodes-idempotency key planner for n8n Cloud and for instances without community packages. Every node is an n8n-nodes-base node; no Code node.',
		`Credentials: ${secret}; **Postgres** credentials "${BUILT_IN_CREDENTIALS.postgres}" (the key table) and "${BUILT_IN_CREDENTIALS.business}" (your business step).`,
		`Key table ${tableRef(settings.schema, settings.table).qualified}, ${settings.mode} mode${settings.mode === 'lease' ? `, lease ${settings.leaseSeconds} s` : ''}${settings.namespace ? `, namespace ${JSON.stringify(settings.namespace)}` : ''}. Create it once:`,
		'```sql',
		sql.createTable,
		'```',
		'### What it refuses, before anything is reserved',
		`- A multipart body, a signature that does not match${signature.timestamp === undefined ? '' : `, or a timestamp more than ${TOLERANCE_SECONDS} s from now`}: 401 {"status":"invalid signature"}.`,
		`- An event id that cannot be a key: 400 application/problem+json (type ${INVALID_KEY.type}), the reason in detail.`,
		signature.signsEventId
			? `- A delivery resent under another id: ${signature.label} signs its event id, so it cannot be changed without failing the signature.`
			: keyOnBody
				? `- A delivery resent under a fresh id header: ${signature.label} does not sign that header, so the key is the SHA-256 of the signed body (replay guard), and the resent delivery is a duplicate.`
				: `- Replay guard off: the key is ${signature.label}'s unsigned id header, so a captured delivery resent under a new id header is processed again.`,
		'- Not a refusal: the key store failing is answered 500, so the sender retries.',
		'### What this path cannot promise next to the package',
		...BUILT_IN_NOTES.map((note) => `- ${note}`),
	].join('\n');
}
