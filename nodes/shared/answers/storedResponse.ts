import { KeyError } from '../keys/KeyError';
import { MAX_RECORD_BYTES, oversizedRecord } from '../store/recordSize';
import type { StoredResponse } from '../store/keyStoreTypes';
import { toStorableJson } from '../store/storableJson';

/**
 * The answer an execution gave, stored with its completed key so every later duplicate can replay
 * it: status code, the headers the user chose, and the body as text (replayed byte for byte).
 */
export type { StoredResponse } from '../store/keyStoreTypes';

export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;

export interface ResponseSettings {
	maxBytes: number;
	/** Over the limit: an item error, or the marker (status and headers kept, no body). */
	whenTooLarge: 'error' | 'marker';
}

const utf8 = new TextEncoder();

/** Header names in lower case, values as text; the same for the stored and the sent answer. */
export function headerMap(headers: unknown): Record<string, string> {
	const map: Record<string, string> = {};
	if (headers === undefined || headers === null || headers === '') return map;
	if (typeof headers !== 'object' || Array.isArray(headers))
		throw new KeyError(
			'Response Headers must be name and value pairs',
			'Add each header to store as a Name and a Value.',
		);
	for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
		const lower = name.trim().toLowerCase();
		if (lower === '') continue;
		map[lower] = typeof value === 'string' ? value : JSON.stringify(value);
	}
	return map;
}

export function httpStatusOf(statusCode: unknown): number {
	const code = Number(statusCode);
	if (!Number.isInteger(code) || code < 100 || code > 599)
		throw new KeyError(
			`The response status code ${JSON.stringify(statusCode)} is not an HTTP status (100 to 599)`,
			'Set Response Status Code to the status the webhook is answered with, e.g. 201.',
		);
	return code;
}

/** The body as it is answered and stored: text as it is, anything else as its JSON. */
export function bodyText(body: unknown): string {
	return typeof body === 'string' ? body : body === undefined ? '' : JSON.stringify(body);
}

/**
 * The response to store for one item: the body as the Respond node will send it (text as it is,
 * anything else as its JSON), checked against the size limit; never truncated. Any text is stored
 * as it is, NUL and lone surrogates included (storableJson); the whole stored answer, headers
 * included, must also fit the one record cap (MAX_RECORD_BYTES).
 */
export function storedResponseOf(
	statusCode: unknown,
	headers: unknown,
	body: unknown,
	settings: ResponseSettings,
): StoredResponse {
	const code = httpStatusOf(statusCode);
	const text = bodyText(body);
	const bytes = utf8.encode(text).length;
	const stored = { statusCode: code, headers: headerMap(headers) };
	const whole = { ...stored, body: text };
	const overCap = bytes <= settings.maxBytes ? oversizedRecord(toStorableJson(whole)) : undefined;
	if (bytes <= settings.maxBytes && overCap === undefined) return whole;
	// Over the body's own limit, or (headers included, as stored) over the cap on every record.
	const tooLarge = overCap ?? { bytes, limit: settings.maxBytes };
	const problem =
		overCap === undefined
			? `The response body is ${bytes} bytes, over the limit of ${settings.maxBytes} bytes to store`
			: `The response to store is ${overCap.bytes} bytes with its headers, over the cap of ${overCap.limit} bytes on what a key keeps per record`;
	if (settings.whenTooLarge === 'marker') {
		const marker = { ...stored, body: null, tooLarge };
		if (oversizedRecord(toStorableJson(marker)) === undefined) return marker;
		throw new KeyError(
			`${problem}, and its headers alone are over that cap`,
			'Store fewer or shorter Response Headers.',
		);
	}
	throw new KeyError(
		problem,
		overCap === undefined
			? 'Raise Max Response Size, store a smaller body (for example only the ids), or set When Too Large to "Store a marker" so duplicates know there was an answer without its body.'
			: `Store a smaller body or fewer headers (for example only the ids): Max Response Size does not raise the cap of ${MAX_RECORD_BYTES} bytes, or set When Too Large to "Store a marker".`,
	);
}
