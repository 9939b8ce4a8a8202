import { MAX_RECORD_BYTES, oversizedRecord } from '../store/recordSize';
import { toStorableJson } from '../store/storableJson';
import { isSecretHeader, withoutSecretFields, withoutSecretQuery } from './secretParts';

export { NEVER_STORED_HEADERS } from './secretParts';

/**
 * Answer first: what Reserve stores with a new key so the Redrive Trigger can run the event again
 * after the sender was answered (nodes/shared/store/sql/redrive.ts), and the item it runs it as.
 * The workflow reads the delivery as n8n's Webhook item: `$json.body` (as n8n parsed it, once the
 * signature held), the query, and the headers named below. Never a secret (secretParts.ts): no
 * credential or signature header, whatever the node is told, no shared secret or token in the body,
 * no credential in the query.
 */

/** Stored with every delivery: how the body was sent. */
export const ALWAYS_STORED_HEADERS = ['content-type'] as const;

/** What a stored delivery holds (version 1). */
export interface StoredDelivery {
	v: 1;
	headers: Record<string, unknown>;
	body: unknown;
	query: unknown;
	/** The workflow that stored it: only that workflow's Redrive Trigger runs it (sql/redrive.ts). */
	workflowId?: string;
	/**
	 * An email keyed by an email preset (emailMessage.ts): its item json as
	 * the trigger emitted it, which a redrive runs as it is (no headers, body or query then).
	 */
	message?: Record<string, unknown>;
}

/**
 * A header name this setting may not store, or undefined when every name may be stored.
 * `configured`: the signature headers the node is set to (Generic HMAC's).
 */
export function forbiddenStoredHeader(
	names: readonly string[],
	configured: readonly string[],
): string | undefined {
	return names.find((name) => isSecretHeader(name, configured));
}

/** The headers to store: Content-Type, the sender's id and signed headers, the user's own, lower-cased. */
export function storedHeaderNames(...lists: ReadonlyArray<readonly string[]>): string[] {
	return [
		...new Set([...ALWAYS_STORED_HEADERS, ...lists.flat()].map((name) => name.toLowerCase())),
	];
}

export type StoredDeliveryOutcome =
	| { delivery: StoredDelivery }
	/** Over the record cap: not stored, so this event is answered last (as without Answer First). */
	| { tooLarge: { bytes: number; limit: number } };

/** The delivery of a Webhook item (its json: headers, body, query), within the record cap. */
export function storedDeliveryOf(
	json: Record<string, unknown>,
	headerNames: readonly string[],
	origin: Pick<StoredDelivery, 'workflowId'> = {},
	limit: number = MAX_RECORD_BYTES,
): StoredDeliveryOutcome {
	const sent =
		json.headers !== null && typeof json.headers === 'object'
			? (json.headers as Record<string, unknown>)
			: {};
	const headers: Record<string, unknown> = {};
	for (const [name, value] of Object.entries(sent)) {
		const lower = name.toLowerCase();
		// A secret is dropped even when named: the setting is refused earlier, this is the last word.
		if (headerNames.includes(lower) && !isSecretHeader(lower)) headers[lower] = value;
	}
	const delivery: StoredDelivery = {
		v: 1,
		headers,
		body: withoutSecretFields(json.body),
		query: withoutSecretQuery(json.query ?? {}),
		...origin,
	};
	const oversized = oversizedRecord(toStorableJson(delivery), limit);
	return oversized === undefined ? { delivery } : { tooLarge: oversized };
}

/**
 * The delivery of an email preset's item (emailMessage.ts): the item json as the trigger emitted
 * it, within the record cap. No secret filtering applies: a message carries no sender's credential,
 * only what was sent (its binary data, such as attachments, is not stored).
 */
export function storedMessageOf(
	json: Record<string, unknown>,
	origin: Pick<StoredDelivery, 'workflowId'> = {},
	limit: number = MAX_RECORD_BYTES,
): StoredDeliveryOutcome {
	const delivery: StoredDelivery = {
		v: 1,
		headers: {},
		body: null,
		query: {},
		message: json,
		...origin,
	};
	const oversized = oversizedRecord(toStorableJson(delivery), limit);
	return oversized === undefined ? { delivery } : { tooLarge: oversized };
}

/**
 * The item json a redrive runs: the delivery as the Webhook node would hand it, or a stored message
 * as its trigger emitted it, marked as a redrive by the caller.
 */
export function redrivenJson(stored: unknown): Record<string, unknown> {
	const delivery = (stored ?? {}) as Partial<StoredDelivery>;
	if (delivery.message !== null && typeof delivery.message === 'object')
		return { ...delivery.message };
	return {
		headers: delivery.headers ?? {},
		params: {},
		query: delivery.query ?? {},
		body: delivery.body,
	};
}
