import { readAmqpMessage } from './amqpMessage';
import { readEmailItem } from './emailMessage';
import { headerIdText, readHeader } from './headerValue';
import { clientKeyFromHeader, IDEMPOTENCY_KEY_HEADER } from './idempotencyKeyHeader';
import { idValue, numberIdText, type IdValue } from './idText';
import type { WebhookItemJson } from '../webhook/requestBody';
import { KeyError } from './KeyError';
import { keySourceDefinition, type KeySource } from './keySourceTable';
import { EMAIL_SCOPE } from './prefixes';

export type { KeySource } from './keySourceTable';
export { BODY_HASH_PREFIX, EVENT_ID_PREFIX } from './prefixes';
export { readHeader } from './headerValue';
export { normalizeId } from './idText';
export type { WebhookItemJson } from '../webhook/requestBody';

/** The key before the namespace: an event id, a custom key, or "hash the raw body". */
export type KeyIdentity =
	/** `scope`: the provider of a preset (its key space), undefined for `evt:`. */
	| { kind: 'eventId'; id: string; scope?: string }
	/** The SHA-256 of a verified delivery's retry-stable content when it is not the raw body's. */
	| { kind: 'signedContent'; sha256Hex: string }
	| { kind: 'custom'; key: string }
	| { kind: 'clientKey'; key: string }
	| { kind: 'bodyHash' };

/**
 * An id that is a JSON number: its text is settled by settleNumericId, which may need the raw body
 * (idText.ts says why), so the caller reads the raw body only for these.
 */
export interface NumericId {
	kind: 'number';
	value: number;
	/** What the number becomes: an event id (`evt:` prefix) or the whole custom key. */
	as: 'eventId' | 'custom';
	/** For messages: "event id (body.id)". */
	what: string;
	/** Where the number sits in the JSON body, when it was read from a plain body path. */
	bodyPath: readonly string[] | undefined;
	/** The provider of a preset, as in KeyIdentity. */
	scope?: string;
}

/**
 * A message without an id: its key is the hash of its content (amqpMessage.ts messageContentText),
 * which the caller computes, reading the binary content when the item holds none.
 */
export interface MessageContentHash {
	kind: 'messageContent';
	content: unknown;
}

export type KeyResolution = KeyIdentity | NumericId | MessageContentHash;

const ARRAY_INDEX = /^(?:0|[1-9]\d*)$/;

/**
 * Follows own properties of objects, and indexes of arrays for digit steps (HubSpot's body is an
 * array of events), as `$json.body[0].eventId` does for a JSON body.
 */
function readBodyPath(body: unknown, path: readonly string[]): unknown {
	let value = body;
	for (const name of path) {
		if (Array.isArray(value) && !ARRAY_INDEX.test(name)) return undefined;
		if (value === null || typeof value !== 'object') return undefined;
		if (!Object.prototype.hasOwnProperty.call(value, name)) return undefined;
		value = (value as Record<string, unknown>)[name];
	}
	return value;
}

/** A number found where the raw body cannot help is settled at once, so only body paths wait for the raw body. */
function numericResolution(numeric: NumericId): KeyResolution {
	return numeric.bodyPath === undefined ? settleNumericId(numeric, undefined) : numeric;
}

function identityFromId(
	id: IdValue,
	what: string,
	bodyPath: readonly string[] | undefined,
	scope?: string,
): KeyResolution {
	if (id === undefined) return { kind: 'bodyHash' };
	if (typeof id === 'number')
		return numericResolution({ kind: 'number', value: id, as: 'eventId', what, bodyPath, scope });
	return { kind: 'eventId', id, ...(scope === undefined ? {} : { scope }) };
}

function customIdentity(value: unknown, bodyPath: readonly string[] | undefined): KeyResolution {
	const key = idValue(value, 'custom key');
	if (key === undefined) {
		throw new KeyError(
			'The custom key is empty',
			'Make the Custom Key expression return a non-empty text or number for every item.',
			'invalid-key',
		);
	}
	if (typeof key === 'number')
		return numericResolution({
			kind: 'number',
			value: key,
			as: 'custom',
			what: 'custom key',
			bodyPath,
		});
	return { kind: 'custom', key };
}

/** The first of a preset's headers that carries an id, else the body hash. */
function identityFromHeaders(
	headers: unknown,
	names: readonly string[],
	scope: string | undefined,
): KeyResolution {
	for (const name of names) {
		const id = headerIdText(readHeader(headers, name.toLowerCase()), name);
		if (id !== undefined) return { kind: 'eventId', id, ...(scope === undefined ? {} : { scope }) };
	}
	return { kind: 'bodyHash' };
}

/**
 * Decides what the key is made of. `parameterValue` is the evaluated Event ID or Custom Key
 * parameter (for those sources), and `parameterBodyPath` its path inside `$json.body` when the
 * parameter is a plain path such as `{{ $json.body.id }}` (where a number's exact text can be found).
 */
export function resolveKeyIdentity(
	source: KeySource,
	item: WebhookItemJson,
	parameterValue?: unknown,
	parameterBodyPath?: readonly string[],
): KeyResolution {
	const definition = keySourceDefinition(source);
	if (definition === undefined) {
		throw new KeyError(
			`Unknown key source "${String(source)}"`,
			'Pick a key source from the list.',
		);
	}
	const { location, scope } = definition;
	switch (location.kind) {
		case 'none':
			return { kind: 'bodyHash' };
		case 'customKey':
			return customIdentity(parameterValue, parameterBodyPath);
		case 'eventIdParameter':
			return identityFromId(idValue(parameterValue, 'event id'), 'event id', parameterBodyPath);
		case 'body': {
			const what = `event id (body.${location.path.join('.')})`;
			return identityFromId(
				idValue(readBodyPath(item.body, location.path), what),
				what,
				location.path,
				scope,
			);
		}
		case 'headers':
			return identityFromHeaders(item.headers, location.names, scope);
		case 'amqpMessage': {
			const { messageId, content } = readAmqpMessage(item);
			if (messageId !== undefined) return { kind: 'eventId', id: messageId };
			return { kind: 'messageContent', content };
		}
		case 'emailMessage': {
			const email = readEmailItem(item, location.trigger);
			if (email.messageId !== undefined)
				return { kind: 'eventId', id: email.messageId, scope: EMAIL_SCOPE };
			// A text that is not a JSON object or array: hashed as it is (amqpMessage.ts).
			return { kind: 'messageContent', content: email.digestText };
		}
		case 'idempotencyKeyHeader':
			return {
				kind: 'clientKey',
				key: clientKeyFromHeader(readHeader(item.headers, IDEMPOTENCY_KEY_HEADER.toLowerCase())),
			};
	}
}

/** Turns a numeric id into text (the raw body's exact text, else only a safe integer), or throws KeyError. */
export function settleNumericId(numeric: NumericId, rawBody: Uint8Array | undefined): KeyIdentity {
	const text = numberIdText(numeric.value, numeric.what, { bodyPath: numeric.bodyPath, rawBody });
	if (numeric.as === 'custom') return { kind: 'custom', key: text };
	return {
		kind: 'eventId',
		id: text,
		...(numeric.scope === undefined ? {} : { scope: numeric.scope }),
	};
}
