/**
 * A sender's endpoint handshake (nodes/shared/webhook/handshakeTypes.ts) in the built-in-nodes
 * workflow (planner/builtIn/builtIn.ts): recognised by a Switch once the signature holds and the body is
 * read as signed ("Sent as Signed?"), so every condition reads signed content (GitHub's event
 * header aside, as in the package: a real event's body has no `zen`); answered by Respond to
 * Webhook nodes with the bytes the package's nodes send (webhook/handshakes.ts), nothing reserved.
 * A handshake the built-in nodes cannot answer is said, with the reason, in the sticky note and
 * docs/cloud.md. Written from the table: no provider is named here.
 */
import type { ProviderDefinition } from '../../nodes/shared/webhook/providers';
import { FORM_MEDIA_TYPE } from '../../nodes/shared/webhook/signedParse';
import type {
	HandshakeDefinition,
	HandshakeMatch,
} from '../../nodes/shared/webhook/handshakeTypes';
import {
	BUILT_IN_CREDENTIALS,
	id,
	switchNode,
	respond,
	SECRET_ENV,
	type BuiltInWorkflow,
	type WorkflowNode,
} from './builtInNodes';

export const HANDSHAKE_NODES = {
	switch: 'Handshake?',
	hmac: 'Handshake HMAC',
	answer: 'Respond handshake',
	unanswerable: 'Respond 400 handshake',
} as const;

const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';
/** Where the Crypto node writes the handshake's HMAC. */
const HMAC_FIELD = 'handshakeHmac';

export type BuiltInHandshake =
	| { answered: true; name: string; handshake: HandshakeDefinition }
	| { answered: false; name: string; reason: string };

/** What the built-in path does with a provider's handshake; undefined when it has none. */
export function builtInHandshake(provider: ProviderDefinition): BuiltInHandshake | undefined {
	const { handshake } = provider;
	if (handshake === undefined) return undefined;
	if (!handshake.signed) {
		const query = handshake.match.find((one) => one.on === 'query');
		const method = query?.on === 'query' ? query.method : 'GET';
		const how =
			method === 'GET'
				? "as a GET, which the workflow's POST-only Webhook does not take"
				: 'without a body, which the workflow refuses before anything is read (no raw body to check)';
		const proof =
			handshake.answer.kind === 'echoQueryWithVerifyToken'
				? ', and the built-in path has no credential to hold the verify token an If node would compare'
				: handshake.authenticated === 'sharedSecret'
					? ', and the built-in path has no credential to hold the shared secret an If node would compare'
					: '';
		return {
			answered: false,
			name: handshake.name,
			reason: `${provider.label}'s ${handshake.name} is not answered by this workflow: it comes unsigned ${how}${proof}. Answer it from a Webhook node of its own set to ${method}, or use the package on a self-hosted n8n, whose Reserve answers it.`,
		};
	}
	return { answered: true, name: handshake.name, handshake };
}

/**
 * The signed body as an n8n expression: `$json.body`, or for a sender that posts its JSON in a form
 * field (`formJsonField`, GitHub's `payload`) and a form delivery, that field's JSON (undefined when
 * it is not JSON), as the package reads it (webhook/handshakes.ts signedHandshakeBody).
 */
function bodyOf(handshake: HandshakeDefinition): string {
	const field = handshake.formJsonField;
	if (field === undefined) return '$json.body';
	const form = `String($json.headers?.["content-type"] ?? '').toLowerCase().startsWith(${JSON.stringify(FORM_MEDIA_TYPE)})`;
	const parsed = `((text) => { try { return JSON.parse(text) } catch (e) { return undefined } })($json.body?.[${JSON.stringify(field)}])`;
	return `(${form} ? ${parsed} : $json.body)`;
}

/** A body field as an n8n expression; undefined (never an error) where the path leads nowhere. */
function bodyField(handshake: HandshakeDefinition, path: readonly string[]): string {
	return `${bodyOf(handshake)}${path.map((step) => `?.[${JSON.stringify(step)}]`).join('')}`;
}

function matchExpression(handshake: HandshakeDefinition, match: HandshakeMatch): string {
	if (match.on === 'bodyField') {
		const field = bodyField(handshake, match.path);
		if (match.absent) return `(${field}) === undefined`;
		return match.equals === undefined
			? `(${field}) != null`
			: `(${field}) === ${JSON.stringify(match.equals)}`;
	}
	if (match.on === 'header') {
		const header = `$json.headers?.[${JSON.stringify(match.name.toLowerCase())}]`;
		return match.equals === undefined
			? `typeof ${header} === 'string' && ${header} !== ''`
			: `${header} === ${JSON.stringify(match.equals)}`;
	}
	// builtInHandshake answers only signed handshakes: a bodiless GET never reaches the Switch.
	throw new Error(`a ${match.on} handshake condition has no built-in form`);
}

/** The body field the answer echoes (or signs), when the answer needs one. */
function echoedPath(handshake: HandshakeDefinition): readonly string[] | undefined {
	const { answer } = handshake;
	return answer.kind === 'echoBodyField' || answer.kind === 'hmacBodyField'
		? answer.path
		: undefined;
}

function answerBody(handshake: HandshakeDefinition): { body: string; type?: string } {
	const { answer } = handshake;
	switch (answer.kind) {
		case 'noContent':
			return { body: '' };
		case 'fixedJson':
			return { body: JSON.stringify(answer.body), type: JSON_TYPE };
		case 'echoBodyField': {
			const value = bodyField(handshake, answer.path);
			if (answer.as === 'text') return { body: `={{ ${value} }}`, type: TEXT_TYPE };
			const name = answer.name ?? answer.path[answer.path.length - 1];
			return {
				body: `={{ JSON.stringify({ ${JSON.stringify(name)}: ${value} }) }}`,
				type: JSON_TYPE,
			};
		}
		case 'hmacBodyField':
			return {
				body: `={{ JSON.stringify({ ${JSON.stringify(answer.plainName)}: ${bodyField(handshake, answer.path)}, ${JSON.stringify(answer.hmacName)}: $json.${HMAC_FIELD} }) }}`,
				type: JSON_TYPE,
			};
		case 'echoQueryWithVerifyToken':
		case 'echoQuery':
		case 'echoHeader':
			throw new Error('an unsigned handshake has no built-in answer');
	}
}

/**
 * The nodes that recognise and answer the handshake, and their connections. The Switch's outputs:
 * 0 the handshake it can answer, 1 (when the answer echoes a field) the handshake without that
 * field (400, as the package), the last one everything else, which goes on to `eventNode`.
 */
export function handshakeNodes(
	handshake: HandshakeDefinition,
	line: 1 | 2,
	eventNode: string,
): { nodes: WorkflowNode[]; connections: BuiltInWorkflow['connections'] } {
	const path = echoedPath(handshake);
	const switchNode = handshakeSwitch(handshake, path);
	const { body, type } = answerBody(handshake);
	const answerNode = respond(
		id(31),
		HANDSHAKE_NODES.answer,
		handshake.statusCode ?? 200,
		body,
		[1650, -100],
		type === undefined
			? undefined
			: [
					{ name: 'Content-Type', value: type },
					// An echoed value is answered nosniff, as the package's nodes answer it.
					...(path === undefined ? [] : [{ name: 'X-Content-Type-Options', value: 'nosniff' }]),
				],
		// No body (a 204): Respond to Webhook's "No Data" sends no content type either.
		type === undefined ? 'noData' : 'text',
	);
	const unanswerable =
		path === undefined
			? []
			: [
					respond(
						id(32),
						HANDSHAKE_NODES.unanswerable,
						400,
						`${handshake.name} carries no body ${path.join('.')}`,
						[1430, 100],
						[{ name: 'Content-Type', value: TEXT_TYPE }],
						'text',
					),
				];
	const to = (node: string) => [{ node, type: 'main' as const, index: 0 }];
	const wired = (answerFrom: string) => ({
		[HANDSHAKE_NODES.switch]: {
			main: [to(answerFrom), ...unanswerable.map(({ name }) => to(name)), to(eventNode)],
		},
	});
	if (handshake.answer.kind !== 'hmacBodyField')
		return {
			nodes: [switchNode, answerNode, ...unanswerable],
			connections: wired(HANDSHAKE_NODES.answer),
		};
	const hmacNode = hmacAnswerNode(handshake, handshake.answer.path, line);
	return {
		nodes: [switchNode, hmacNode, answerNode, ...unanswerable],
		connections: {
			...wired(HANDSHAKE_NODES.hmac),
			[HANDSHAKE_NODES.hmac]: { main: [to(HANDSHAKE_NODES.answer)] },
		},
	};
}

/**
 * The Switch that recognises the handshake: its outputs are the handshake it can answer, (when the
 * answer echoes a field) the handshake without that field, and `event` for everything else.
 */
function handshakeSwitch(
	handshake: HandshakeDefinition,
	path: readonly string[] | undefined,
): WorkflowNode {
	const recognised = handshake.match.map((match) => matchExpression(handshake, match)).join(' && ');
	const echoable =
		path === undefined
			? undefined
			: `typeof (${bodyField(handshake, path)}) === 'string' && (${bodyField(handshake, path)}) !== ''`;
	const rules: Array<[string, string]> =
		echoable === undefined
			? [['handshake', recognised]]
			: [
					['handshake', `${recognised} && ${echoable}`],
					['handshake without its value', `${recognised} && !(${echoable})`],
				];
	return switchNode(id(30), HANDSHAKE_NODES.switch, rules, [1210, 100], {
		fallbackOutput: 'extra',
		renameFallbackOutput: 'event',
	});
}

/** Zoom's encryptedToken: HMAC-SHA256 hex of the plain token with the same secret. */
function hmacAnswerNode(
	handshake: HandshakeDefinition,
	path: readonly string[],
	line: 1 | 2,
): WorkflowNode {
	return {
		id: id(33),
		name: HANDSHAKE_NODES.hmac,
		type: 'n8n-nodes-base.crypto',
		typeVersion: line,
		position: [1430, -100],
		parameters: {
			action: 'hmac',
			binaryData: false,
			value: `={{ ${bodyField(handshake, path)} }}`,
			type: 'SHA256',
			dataPropertyName: HMAC_FIELD,
			encoding: 'hex',
			...(line === 1 ? { secret: `={{ $env.${SECRET_ENV} }}` } : {}),
		},
		...(line === 2 ? { credentials: { crypto: { name: BUILT_IN_CREDENTIALS.crypto } } } : {}),
	};
}
