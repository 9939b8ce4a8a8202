import { createHash, createHmac, timingSafeEqual } from 'crypto';

import type { WebhookAnswer } from './webhookAnswerType';
import {
	ECHO_MAX_LENGTH,
	type HandshakeAnswer,
	type HandshakeDefinition,
	type HandshakeMatch,
} from './handshakeTypes';
import { readSignatureHeader } from './headers';
import { FORM_MEDIA_TYPE, type SignedParse } from './signedParse';

/**
 * Recognising and answering a provider's handshake (handshakeTypes.ts): what a sender sends before
 * it delivers, answered by the node itself. Pure functions of the request and the credential; the
 * nodes' side (when, and what the execution shows) is signatureNode/answerHandshakes.ts.
 */

/** What a handshake is recognised from. */
export interface HandshakeRequest {
	headers: unknown;
	query: unknown;
	/**
	 * The body: the signed parse for a signed handshake (so a real event whose signed body says
	 * otherwise is never taken for one), n8n's `$json.body` for an unsigned one.
	 */
	body: unknown;
	/** Whether the request came without a body (no raw bytes): how a GET is told apart. */
	bodiless: boolean;
}

/** What proves the sender, from the credential. */
export interface HandshakeSecrets {
	/** The current secret as its key bytes (a text secret's UTF-8): HMAC answers use it. */
	secret?: Uint8Array;
	/** The credential's Verify Token, for the handshakes that send one. */
	verifyToken?: string;
}

/** The answer, and why the handshake was refused where it was. */
export interface HandshakeOutcome {
	answer: WebhookAnswer;
	/** Set when the handshake was not answered as the sender hoped (wrong token, a missing value). */
	refused?: string;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';

/** A value of a JSON value by path (digits index arrays); undefined where the path leads nowhere. */
function valueAt(root: unknown, path: readonly string[]): unknown {
	let value = root;
	for (const step of path) {
		if (value === null || typeof value !== 'object') return undefined;
		if (Array.isArray(value)) {
			if (!/^\d+$/.test(step)) return undefined;
			value = value[Number(step)];
		} else {
			if (!Object.prototype.hasOwnProperty.call(value, step)) return undefined;
			value = (value as Record<string, unknown>)[step];
		}
	}
	return value;
}

/**
 * A query parameter's text as Express gave it: `hub.mode` flat (the default parser), or nested
 * (`{hub: {mode}}`, a parser with dots on). A repeated parameter (an array) is no one value.
 */
function queryParameter(query: unknown, name: string): string | undefined {
	if (query === null || typeof query !== 'object') return undefined;
	const flat = Object.prototype.hasOwnProperty.call(query, name)
		? (query as Record<string, unknown>)[name]
		: valueAt(query, name.split('.'));
	return typeof flat === 'string' ? flat : undefined;
}

function matches(condition: HandshakeMatch, request: HandshakeRequest): boolean {
	if (condition.on === 'bodyField') {
		const value = valueAt(request.body, condition.path);
		if (condition.absent) return value === undefined;
		if (condition.equals === undefined) return value !== undefined && value !== null;
		return value === condition.equals;
	}
	if (condition.on === 'header') {
		const header = readSignatureHeader(request.headers, condition.name);
		if (header.kind !== 'value') return false;
		return condition.equals === undefined ? header.value !== '' : header.value === condition.equals;
	}
	if (!request.bodiless) return false;
	const value = queryParameter(request.query, condition.parameter);
	return condition.equals === undefined
		? echoable(value) !== undefined
		: value === condition.equals;
}

/**
 * The body a signed handshake is recognised from: the signed parse, or, for a sender that posts its
 * JSON inside a form field (`formJsonField`), that field's JSON; undefined when it is not JSON.
 */
export function signedHandshakeBody(handshake: HandshakeDefinition, parse: SignedParse): unknown {
	const field = handshake.formJsonField;
	if (field === undefined || parse.mediaType !== FORM_MEDIA_TYPE) return parse.body;
	const text = valueAt(parse.body, [field]);
	if (typeof text !== 'string') return undefined;
	try {
		return JSON.parse(text) as unknown;
	} catch {
		return undefined;
	}
}

/**
 * Whether the request is this handshake: every condition holds. An unconditional echo answers only
 * a request without a body, whatever its conditions say: a delivery is never taken for one.
 */
export function isHandshake(handshake: HandshakeDefinition, request: HandshakeRequest): boolean {
	const bodilessOnly =
		handshake.answer.kind === 'echoQuery' || handshake.answer.kind === 'echoHeader';
	if (bodilessOnly && !request.bodiless) return false;
	return handshake.match.length > 0 && handshake.match.every((one) => matches(one, request));
}

const jsonAnswer = (statusCode: number, body: unknown): WebhookAnswer => ({
	statusCode,
	headers: { 'content-type': JSON_TYPE },
	body: JSON.stringify(body),
});

const textAnswer = (statusCode: number, body: string): WebhookAnswer => ({
	statusCode,
	headers: { 'content-type': TEXT_TYPE },
	body,
});

/** An answer a browser must not sniff into HTML: any that reflects the request's own value. */
const nosniff = ({ headers, ...rest }: WebhookAnswer): WebhookAnswer => ({
	...rest,
	headers: { ...headers, 'x-content-type-options': 'nosniff' },
});

/** A value the sender asks to have echoed: non-empty text only. */
function echoable(value: unknown): string | undefined {
	return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Equal texts, in time that does not depend on where they differ (digests of both: equal lengths). */
function sameText(a: string, b: string): boolean {
	const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
	return timingSafeEqual(digest(a), digest(b));
}

/** The refusal of a handshake whose sender's shared secret does not hold (`authenticated`). */
export function unauthenticated(handshake: HandshakeDefinition, why: string): HandshakeOutcome {
	return { answer: textAnswer(401, 'Unauthorized'), refused: `${handshake.name}: ${why}` };
}

/** A reflected value longer than a sender's challenge ever is: refused, never echoed. */
function tooLong(what: string): HandshakeOutcome {
	const refused = `${what} is longer than ${ECHO_MAX_LENGTH} characters`;
	return { answer: nosniff(textAnswer(400, refused)), refused };
}

function missing(handshake: HandshakeDefinition, what: string): HandshakeOutcome {
	const refused = `${handshake.name} carries no ${what}`;
	return { answer: textAnswer(400, refused), refused };
}

/**
 * The one rule for a value the request asks to have echoed (a challenge, a token): non-empty text of
 * at most ECHO_MAX_LENGTH characters (else 400, never reflected), answered with `nosniff` so a
 * browser never renders it, whatever the content type.
 */
function echoed(
	handshake: HandshakeDefinition,
	value: unknown,
	what: string,
	answer: (text: string) => WebhookAnswer,
): HandshakeOutcome {
	const text = echoable(value);
	if (text === undefined) return missing(handshake, what);
	if (text.length > ECHO_MAX_LENGTH) return tooLong(what);
	return { answer: nosniff(answer(text)) };
}

/** The answer to a recognised handshake (isHandshake): what the sender expects, or why not. */
export function answerHandshake(
	handshake: HandshakeDefinition,
	request: HandshakeRequest,
	secrets: HandshakeSecrets,
): HandshakeOutcome {
	const { answer } = handshake;
	const status = handshake.statusCode ?? 200;
	switch (answer.kind) {
		case 'fixedJson':
			return { answer: jsonAnswer(status, answer.body) };
		case 'noContent':
			return { answer: { statusCode: status, headers: {}, body: '' } };
		case 'echoBodyField': {
			const name = answer.name ?? answer.path.at(-1)!;
			return echoed(
				handshake,
				valueAt(request.body, answer.path),
				`body ${answer.path.join('.')}`,
				(value) =>
					answer.as === 'text' ? textAnswer(status, value) : jsonAnswer(status, { [name]: value }),
			);
		}
		case 'hmacBodyField': {
			const { secret } = secrets;
			if (secret === undefined) return missing(handshake, 'secret to answer with');
			return echoed(
				handshake,
				valueAt(request.body, answer.path),
				`body ${answer.path.join('.')}`,
				(value) => {
					const hmac = createHmac('sha256', secret).update(value, 'utf8').digest('hex');
					return jsonAnswer(status, { [answer.plainName]: value, [answer.hmacName]: hmac });
				},
			);
		}
		case 'echoQueryWithVerifyToken': {
			const sent = queryParameter(request.query, answer.tokenParameter);
			const expected = secrets.verifyToken ?? '';
			if (expected === '' || sent === undefined || !sameText(sent, expected)) {
				const refused =
					expected === ''
						? 'the credential has no Verify Token to compare with'
						: `${answer.tokenParameter} does not match the credential's Verify Token`;
				return { answer: textAnswer(403, 'Forbidden'), refused };
			}
			const challenge = queryParameter(request.query, answer.parameter);
			return echoed(handshake, challenge, answer.parameter, (value) => textAnswer(status, value));
		}
		case 'echoQuery': {
			const challenge = request.bodiless
				? queryParameter(request.query, answer.parameter)
				: undefined;
			return echoed(handshake, challenge, answer.parameter, (value) => textAnswer(status, value));
		}
		case 'echoHeader': {
			const header = readSignatureHeader(request.headers, answer.header);
			const challenge = request.bodiless && header.kind === 'value' ? header.value : undefined;
			return echoed(handshake, challenge, answer.header, (value) =>
				jsonAnswer(status, { [answer.name]: value }),
			);
		}
	}
}

const code = (text: string) => `\`${text}\``;

function conditionText(condition: HandshakeMatch): string {
	if (condition.on === 'bodyField') {
		const field = `body ${code(condition.path.join('.'))}`;
		if (condition.absent) return `no ${field}`;
		return condition.equals === undefined
			? `${field} present`
			: `${field} = ${code(JSON.stringify(condition.equals))}`;
	}
	if (condition.on === 'header')
		return condition.equals === undefined
			? `${code(condition.name)} present`
			: `${code(condition.name)}: ${code(condition.equals)}`;
	return condition.equals === undefined
		? `${condition.method} with ${code(condition.parameter)}`
		: `${condition.method} with ${code(`${condition.parameter}=${condition.equals}`)}`;
}

/** What `echoed` says of every echoed value, once. */
const ECHO_RULE = `; the echo up to ${ECHO_MAX_LENGTH} characters (else 400), nosniff`;

function answerText(answer: HandshakeAnswer, status: number): string {
	switch (answer.kind) {
		case 'fixedJson':
			return `${status} JSON ${code(JSON.stringify(answer.body))}`;
		case 'noContent':
			return `${status} with no body`;
		case 'echoBodyField':
			return answer.as === 'text'
				? `${status} text: body ${code(answer.path.join('.'))}${ECHO_RULE}`
				: `${status} JSON ${code(`{"${answer.name ?? answer.path.at(-1)}": …}`)} (body ${code(answer.path.join('.'))})${ECHO_RULE}`;
		case 'hmacBodyField':
			return `${status} JSON ${code(`{"${answer.plainName}": …, "${answer.hmacName}": …}`)}: body ${code(answer.path.join('.'))} and its HMAC-SHA256 hex with the secret${ECHO_RULE}`;
		case 'echoQueryWithVerifyToken':
			return `${status} text: ${code(answer.parameter)}, when ${code(answer.tokenParameter)} equals the credential's Verify Token (else 403)${ECHO_RULE}`;
		case 'echoQuery':
			return `${status} text: ${code(answer.parameter)}${ECHO_RULE}`;
		case 'echoHeader':
			return `${status} JSON ${code(`{"${answer.name}": …}`)}: header ${code(answer.header)}${ECHO_RULE}`;
	}
}

/** One line on how a provider's handshake is recognised and answered: docs/signatures.md's "Connecting". */
export function describeHandshake(handshake: HandshakeDefinition | undefined): string {
	if (handshake === undefined) return 'no handshake';
	const form = handshake.formJsonField;
	const when =
		handshake.match.map(conditionText).join(' and ') +
		(form === undefined ? '' : `, body fields read in the form's ${code(form)} JSON when a form`);
	const how = handshake.signed
		? 'signed'
		: handshake.authenticated === 'sharedSecret'
			? 'unsigned, shared secret checked first (else 401)'
			: 'unsigned';
	return `${code(handshake.name)} (${when}; ${how}) → ${answerText(handshake.answer, handshake.statusCode ?? 200)}`;
}
