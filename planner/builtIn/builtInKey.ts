/**
 * The built-in workflow's key (planner/builtIn/builtIn.ts): the Key node's two fields, as n8n expressions.
 * `key` is the package's key (nodes/shared/keys/composeKey.ts): `[namespace:]evt:<id>`, or without
 * an id `[namespace:]sha256:<hex of the body>`, or a Custom key as it is. `keyProblem` is '' for a
 * key that can be stored, else the reason it cannot (the package's rules: an id that is not text or a
 * safe integer, NUL, half a surrogate pair, over MAX_KEY_BYTES): the Key Storable? If answers those
 * 400 problem+json before anything is reserved, instead of an expression error n8n answers 500.
 * Settings enter the expressions only as JSON string literals, after builtInInputs.ts checked them.
 * keyNodes: Body SHA-256 → Owner Token (lease mode) → Key → Key Storable? (else Respond 400).
 */
import { clientErrorDetails } from '../../nodes/shared/keys/clientErrors';
import { MAX_KEY_BYTES } from '../../nodes/shared/keys/composeKey';
import { KEY_SOURCES, keySourceDefinition } from '../../nodes/shared/keys/keySourceTable';
import {
	BODY_HASH_PREFIX,
	eventIdPrefix,
	SIGNED_CONTENT_PREFIX,
} from '../../nodes/shared/keys/prefixes';
import { BuiltInError } from './builtInError';
import type { CheckedInputs } from './builtInInputs';
import { id, isTrue, NODES, RAW_TEXT_FIELD, respond, type WorkflowNode } from './builtInNodes';
import type { BuiltInSignature } from './builtInSignature';
import type { PlannerSettings } from '../settings';

/**
 * The replay guard's digest of a verified delivery, as the package makes it (verifiedDelivery.ts):
 * `sha256:` + the raw body's SHA-256 where the signed content is the body alone, else `signed:` +
 * the SHA-256 of the retry-stable signed content (Linear: the body without webhookTimestamp).
 */
export function digestOf(signature: BuiltInSignature): {
	node: string;
	field: string;
	prefix: string;
	value: string;
} {
	return signature.digest.kind === 'rawBody'
		? {
				node: NODES.bodyHash,
				field: 'bodySha256',
				prefix: BODY_HASH_PREFIX,
				value: `={{ $json.${RAW_TEXT_FIELD} }}`,
			}
		: {
				node: NODES.signedHash,
				field: 'signedSha256',
				prefix: SIGNED_CONTENT_PREFIX,
				value: `={{ ${signature.digest.expression} }}`,
			};
}

/**
 * Whether the key source's id is a header the scheme does not sign, so that the replay guard keys
 * on the digest instead (IdempotencyReserve/helpers/signedKeys.ts, keyIdIsUnsigned).
 */
export function keysOnDigest(
	settings: PlannerSettings,
	signature: BuiltInSignature,
	guardOn: boolean,
): boolean {
	const location = keySourceDefinition(settings.keySource)?.location;
	if (!guardOn || location?.kind !== 'headers') return false;
	return location.names.some((name) => !signature.signedHeaders.includes(name.toLowerCase()));
}

/**
 * Text as a JavaScript string literal for an n8n expression: JSON, with U+2028 and U+2029 escaped
 * too. JavaScript allows them raw in a string since ES2019, but the parser of n8n's expressions
 * (@n8n/tournament) reads them as line breaks and rejects the expression ("invalid syntax").
 */
export function jsString(text: string): string {
	return JSON.stringify(text)
		.replace(/\u2028/g, '\\u2028')
		.replace(/\u2029/g, '\\u2029');
}

/** The Key node's fields: the key, and why it cannot be one ('' when it can). */
export const KEY_FIELD = 'key';
export const KEY_PROBLEM_FIELD = 'keyProblem';

/**
 * What the replay guard decides for this workflow. `idUnsigned`: the guard is on and the sender does
 * not sign its event id (an Event ID expression reading headers is refused). `keyOnDigest`: the
 * key source's id header is not signed, so the key is the digest of the signed content.
 */
export interface ReplayGuarding {
	idUnsigned: boolean;
	keyOnDigest: boolean;
}

/** Where the id is read, as an expression on the Webhook node's item (the Key node's $json). */
function idExpression(
	settings: PlannerSettings,
	inputs: CheckedInputs,
	guard: ReplayGuarding,
): string | undefined {
	const definition = keySourceDefinition(settings.keySource);
	if (definition === undefined)
		throw new BuiltInError(
			`Unknown key source "${settings.keySource}"`,
			`Use one of ${KEY_SOURCES.map(({ value }) => value).join(', ')}.`,
		);
	const location = definition.location;
	switch (location.kind) {
		case 'eventIdParameter':
		case 'customKey': {
			const field = inputs.idField;
			if (field === undefined) throw new Error('builtInKey: the id field was not checked');
			if (field.kind === 'fixed') return jsString(field.text);
			if (guard.idUnsigned && /headers/.test(field.code))
				throw new BuiltInError(
					`The ${location.kind === 'customKey' ? 'Custom Key' : 'Event ID'} reads a header, which this sender does not sign: a captured delivery resent with a new header would be processed again`,
					'Key on the body (--key-source bodyHash, or an expression of $json.body), or turn the replay guard off (--replay-guard off) if the sender sends identical bodies as different events.',
				);
			// The line break ends a // comment the expression may have.
			return `(${field.code}\n)`;
		}
		case 'none':
			return undefined;
		case 'body':
			return `$json.body${location.path.map((step) => `?.[${jsString(step)}]`).join('')}`;
		case 'headers':
			// The header is not signed: the replay guard keys such a sender on the signed content.
			if (guard.keyOnDigest) return undefined;
			return `(${location.names.map((name) => `$json.headers[${jsString(name.toLowerCase())}]`).join(' || ')} || undefined)`;
		case 'idempotencyKeyHeader':
			throw new BuiltInError(
				'The Idempotency-Key header source is not offered with built-in nodes',
				"It is the API template's source, whose promise is replaying the first answer (stored answers), which built-in nodes cannot keep. Use the package, or key on the request's event id.",
			);
		case 'emailMessage':
			throw new BuiltInError(
				'The email sources key an Email Trigger (IMAP) or Gmail Trigger item, and this workflow starts with a Webhook',
				'Use a webhook key source here; email workflows are the package template workflows/email-trigger.json (docs/email.md).',
			);
		case 'amqpMessage':
			throw new BuiltInError(
				'The RabbitMQ Message source keys a RabbitMQ Trigger item, and this workflow starts with a Webhook',
				'Use a webhook key source here; queue consumers are the package template workflows/rabbitmq-consumer.json (docs/queues.md).',
			);
	}
}

/** Why the id `id` cannot be used ('' when it can), as the package words it (nodes/shared/keys/idText.ts). */
function idProblem(what: string, custom: boolean): string {
	const absent = `id === undefined || id === null || id === ''`;
	const kind = `(Array.isArray(id) ? 'an array' : typeof id === 'object' ? 'an object' : 'a ' + typeof id)`;
	return [
		`${absent} ? ${custom ? JSON.stringify(`The ${what} is empty`) : `''`}`,
		`typeof id === 'string' ? ''`,
		// -0 is refused too: String(-0) is '0', the key of another id.
		`typeof id === 'number' ? (Number.isSafeInteger(id) && 1 / id !== -Infinity ? '' : ${JSON.stringify(`The ${what} is the number `)} + (1 / id === -Infinity ? '-0' : String(id)) + ', which is not a safe integer (below 2^53), so the text the sender wrote cannot be known: send it as text')`,
		`${JSON.stringify(`The ${what} is `)} + ${kind} + ', not a text or number'`,
	].join(' : ');
}

/** Why `key` cannot be stored ('' when it can): nodes/shared/keys/composeKey.ts assertStorableKey. */
const STORABLE_PROBLEM = [
	`key.includes(String.fromCharCode(0)) ? 'The key contains a NUL character, which PostgreSQL text cannot store'`,
	`!key.isWellFormed() ? 'The key contains half of a UTF-16 surrogate pair, which is not text: PostgreSQL would store it as U+FFFD and two different ids would share a key'`,
	// UTF-8 bytes: encodeURIComponent writes each byte past ASCII as %XX (the key is well-formed here).
	`((bytes) => bytes > ${MAX_KEY_BYTES} ? 'The key is ' + bytes + ' bytes long; at most ${MAX_KEY_BYTES} are allowed' : '')(((encoded) => encoded.length - 2 * (encoded.split('%').length - 1))(encodeURIComponent(key)))`,
].join(' : ');

/** The Key node's assignments (Edit Fields v3.4). */
export function keyAssignments(
	settings: PlannerSettings,
	inputs: CheckedInputs,
	guard: ReplayGuarding,
	signature: BuiltInSignature,
): Array<{ id: string; name: string; value: string; type: 'string' }> {
	const prefix = jsString(settings.namespace === '' ? '' : `${settings.namespace}:`);
	const digest = digestOf(signature);
	const hash = `'${digest.prefix}' + $json.${digest.field}`;
	// A provider's preset keys its ids `<provider>:<id>` (Stripe's keeps `evt:`), as the package does.
	const idPrefix = jsString(eventIdPrefix(keySourceDefinition(settings.keySource)?.scope));
	const id = idExpression(settings, inputs, guard);
	const assign = (name: string, value: string) => ({
		id: name,
		name,
		value,
		type: 'string' as const,
	});
	if (id === undefined)
		return [assign(KEY_FIELD, `={{ ${prefix} + ${hash} }}`), assign(KEY_PROBLEM_FIELD, '')];
	const custom = settings.keySource === 'custom';
	const what = custom ? 'custom key' : 'event id';
	const core = custom
		? 'String(id)'
		: `(${`id === undefined || id === null || id === ''`} ? ${hash} : ${idPrefix} + String(id))`;
	// One function for both fields: { key, problem }, the key '' when there is a problem.
	const check = `((id) => { const idProblem = ${idProblem(what, custom)}; const key = idProblem === '' ? ${prefix} + ${core} : ''; const problem = idProblem !== '' ? idProblem : ${STORABLE_PROBLEM}; return { key: problem === '' ? key : '', problem: problem }; })(${id})`;
	return [
		assign(KEY_FIELD, `={{ ${check}.key }}`),
		assign(KEY_PROBLEM_FIELD, `={{ ${check}.problem }}`),
	];
}

/** The problem+json of an event id that cannot be a key: the package's own kind (nodes/shared/keys/clientErrors.ts). */
export const INVALID_KEY = clientErrorDetails('invalid-key');

/** The nodes from the body hash to the key's verdict, in the workflow's order. */
export function keyNodes(
	settings: PlannerSettings,
	inputs: CheckedInputs,
	guard: ReplayGuarding,
	signature: BuiltInSignature,
): WorkflowNode[] {
	const line = inputs.line;
	const lease = settings.mode === 'lease';
	const digest = digestOf(signature);
	return [
		{
			id: id(5),
			name: digest.node,
			type: 'n8n-nodes-base.crypto',
			typeVersion: line,
			position: [1320, 200],
			parameters: {
				action: 'hash',
				binaryData: false,
				type: 'SHA256',
				value: digest.value,
				dataPropertyName: digest.field,
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
						position: [1540, 200] as [number, number],
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
			position: [1760, 200],
			parameters: {
				mode: 'manual',
				includeOtherFields: true,
				assignments: { assignments: keyAssignments(settings, inputs, guard, signature) },
				options: {},
			},
		},
		{
			id: id(19),
			name: NODES.storable,
			type: 'n8n-nodes-base.if',
			typeVersion: 2.2,
			position: [1980, 200],
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
			[2200, 460],
			[{ name: 'Content-Type', value: 'application/problem+json' }],
			'text',
		),
	];
}
