import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { messageContentText } from '../../shared/keys/amqpMessage';
import { composeKey } from '../../shared/keys/composeKey';
import { KeyError } from '../../shared/keys/KeyError';
import {
	resolveKeyIdentity,
	settleNumericId,
	type KeyIdentity,
	type KeySource,
	type WebhookItemJson,
} from '../../shared/keys/keySources';
import { namespaceText } from '../../shared/keys/namespace';
import { BODY_HASH_PREFIX, SIGNED_CONTENT_PREFIX } from '../../shared/keys/prefixes';
import { bodyPathOfParameter, itemParameterReader } from '../../shared/parameters/itemParameter';
import {
	RAW_BODY_HINT,
	readRawBody,
	readRequestBytes,
	sha256Hex,
} from '../../shared/delivery/rawBody';

export interface KeySettings {
	source: KeySource;
	rawBodyProperty: string;
}

/**
 * What a verified delivery lends the key (signedKeys.ts): its digest of the signed content, used
 * where the key would otherwise come from an unsigned header, or from the raw body as a fallback.
 */
export interface SignedKeyParts {
	/** The replay guard's digest when it keys this item instead of its id (`sha256:…` or `signed:…`). */
	guardDigest?: string;
	/** The digest that stands for the body when the id is missing. */
	fallbackDigest?: string;
	/** The raw bytes the signature check read, so a numeric id's exact text needs no second read. */
	bytes?: Uint8Array;
}

/** The body hash of an item: of the exact bytes the sender posted, else of the body as text or JSON. */
function bodyHashOf(bytes: Uint8Array | undefined, rawBodyProperty: string): string {
	if (bytes === undefined) {
		throw new KeyError(
			`The item has no event id, no binary property "${rawBodyProperty}" and no body to hash`,
			RAW_BODY_HINT,
		);
	}
	return sha256Hex(bytes);
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The bytes as text, or undefined when they are not UTF-8 (then the bytes themselves are hashed). */
function utf8Text(bytes: Uint8Array): string | undefined {
	try {
		return UTF8.decode(bytes);
	} catch {
		return undefined;
	}
}

/**
 * A message's body hash: of its content, or of the binary content the trigger wrote ("Content Is
 * Binary"), read as UTF-8 text when it is text so it keys like the same message read as text.
 */
function messageHashOf(
	context: IExecuteFunctions,
	item: INodeExecutionData,
	itemIndex: number,
	content: unknown,
	rawBodyProperty: string,
): string | Promise<string> {
	if (content !== undefined || item.binary?.[rawBodyProperty] === undefined)
		return sha256Hex(messageContentText(content));
	const hashBytes = (bytes: Uint8Array | undefined) => {
		if (bytes === undefined) return sha256Hex(messageContentText(undefined));
		const text = utf8Text(bytes);
		return sha256Hex(text === undefined ? bytes : messageContentText(text));
	};
	const raw = readRawBody(context, item, itemIndex, rawBodyProperty);
	return raw instanceof Promise ? raw.then(hashBytes) : hashBytes(raw);
}

/** Synchronous unless the raw body must be read (binary data may live outside memory). */
export type ItemKeyDeriver = (
	item: INodeExecutionData,
	itemIndex: number,
	signed?: SignedKeyParts,
) => string | Promise<string>;

/** The hex SHA-256 of a verified delivery's digest (`sha256:<hex>` or `signed:<hex>`): its fingerprint too. */
export function digestHex(digest: string): string {
	return digest.slice(digest.indexOf(':') + 1);
}

/** A verified delivery's digest (`sha256:<hex>` or `signed:<hex>`) as the identity composeKey takes. */
function digestIdentity(digest: string): [KeyIdentity, string | undefined] {
	const hex = digestHex(digest);
	if (digest.startsWith(BODY_HASH_PREFIX)) return [{ kind: 'bodyHash' }, hex];
	if (digest.startsWith(SIGNED_CONTENT_PREFIX))
		return [{ kind: 'signedContent', sha256Hex: hex }, undefined];
	throw new KeyError(
		`Not a signed-content digest: "${digest}"`,
		'This is a bug: please report it.',
	);
}

/** The parameter a source reads per item: Event ID for the default source, Custom Key for Custom, none for presets. */
function sourceParameterName(source: KeySource): string | undefined {
	if (source === 'eventIdOrBodyHash') return 'eventId';
	if (source === 'custom') return 'customKey';
	return undefined;
}

/** Reads the node's settings once and returns the per-item key function. */
export function itemKeyDeriver(context: IExecuteFunctions, settings: KeySettings): ItemKeyDeriver {
	const { source, rawBodyProperty } = settings;
	const parameterName = sourceParameterName(source);
	const readSourceParameter =
		parameterName === undefined ? () => undefined : itemParameterReader(context, parameterName);
	const parameterBodyPath =
		parameterName === undefined ? undefined : bodyPathOfParameter(context, parameterName);
	const readNamespace = itemParameterReader(context, 'namespace');
	return (item, itemIndex, signed) => {
		const keyOf = (identity: KeyIdentity, bodySha256Hex?: string) =>
			composeKey(identity, namespaceText(readNamespace(item, itemIndex)), bodySha256Hex);
		if (signed?.guardDigest !== undefined) return keyOf(...digestIdentity(signed.guardDigest));
		// The id's own errors first, then the namespace's, as the key planner reports them.
		const json = item.json as WebhookItemJson;
		const resolution = resolveKeyIdentity(
			source,
			json,
			readSourceParameter(item, itemIndex),
			parameterBodyPath,
		);
		if (resolution.kind === 'number') {
			// A JSON number's exact text is in the raw body (see shared/keys/idText.ts).
			const raw = signed?.bytes ?? readRawBody(context, item, itemIndex, rawBodyProperty);
			return raw instanceof Promise
				? raw.then((bytes) => keyOf(settleNumericId(resolution, bytes)))
				: keyOf(settleNumericId(resolution, raw));
		}
		if (resolution.kind === 'messageContent') {
			const hash = messageHashOf(context, item, itemIndex, resolution.content, rawBodyProperty);
			const bodyHash: KeyIdentity = { kind: 'bodyHash' };
			return hash instanceof Promise
				? hash.then((hex) => keyOf(bodyHash, hex))
				: keyOf(bodyHash, hash);
		}
		if (resolution.kind !== 'bodyHash') return keyOf(resolution);
		if (signed?.fallbackDigest !== undefined)
			return keyOf(...digestIdentity(signed.fallbackDigest));
		const bytes = readRequestBytes(context, item, itemIndex, rawBodyProperty);
		return bytes instanceof Promise
			? bytes.then((read) => keyOf(resolution, bodyHashOf(read, rawBodyProperty)))
			: keyOf(resolution, bodyHashOf(bytes, rawBodyProperty));
	};
}
