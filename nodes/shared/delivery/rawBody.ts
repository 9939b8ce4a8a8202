import { createHash } from 'crypto';
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { bodyBytesWithoutRawBody, type WebhookItemJson } from '../webhook/requestBody';

/** Synchronous where the bytes are at hand, a promise where they must be read. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * The exact bytes the sender posted: the Webhook node's raw-body binary property (option "Raw Body").
 * Signatures and body hashes are computed over these bytes, never over a re-serialised body.
 * Undefined when the item has no such binary (Raw Body off, or the item did not come from a webhook).
 * Kept in memory (n8n's default binary mode), the bytes are decoded right here, synchronously, as
 * n8n's helper would decode them: no promise per item, which thousands of items would feel.
 */
export function readRawBody(
	context: IExecuteFunctions,
	item: INodeExecutionData,
	itemIndex: number,
	rawBodyProperty: string,
): MaybePromise<Uint8Array | undefined> {
	const binary = item.binary?.[rawBodyProperty];
	if (binary === undefined) return undefined;
	if (binary.id === undefined) return Buffer.from(binary.data, 'base64');
	// Binary data may live outside memory (filesystem or S3 mode): the helper reads it wherever it is.
	return context.helpers.getBinaryDataBuffer(itemIndex, rawBodyProperty);
}

/**
 * The bytes that stand for the request: the raw body, else the body as text or JSON (what the
 * hand-built pattern hashed). Undefined when the item has neither.
 */
export function readRequestBytes(
	context: IExecuteFunctions,
	item: INodeExecutionData,
	itemIndex: number,
	rawBodyProperty: string,
): MaybePromise<Uint8Array | undefined> {
	const withoutRawBody = () => bodyBytesWithoutRawBody((item.json as WebhookItemJson).body);
	const raw = readRawBody(context, item, itemIndex, rawBodyProperty);
	if (raw instanceof Promise) return raw.then((bytes) => bytes ?? withoutRawBody());
	return raw ?? withoutRawBody();
}

/** The SHA-256 of bytes (or of text, as UTF-8) in lower-case hex, as body-hash keys and fingerprints hold it. */
export function sha256Hex(bytes: Uint8Array | string): string {
	return createHash('sha256').update(bytes).digest('hex');
}

/** What a user must do when a node needs the raw body and the item has none. */
export const RAW_BODY_HINT =
	'Turn on "Raw Body" in the Webhook node options, or check the Raw Body Property name.';
