/**
 * What a webhook item carries of its request, and the bytes that stand for its body when the raw
 * body is missing. Pure (no n8n, no Node.js APIs): the keys below this folder and the planner use it.
 */

/** What a webhook item offers to key on: the Webhook node's `$json.headers` and `$json.body`. */
export interface WebhookItemJson {
	headers?: unknown;
	body?: unknown;
}

const utf8 = new TextEncoder();

/** What gets hashed when the item has no raw body: the body text as sent, or the body's JSON serialisation. */
export function bodyBytesWithoutRawBody(body: unknown): Uint8Array | undefined {
	if (body === undefined) return undefined;
	return utf8.encode(typeof body === 'string' ? body : JSON.stringify(body));
}
