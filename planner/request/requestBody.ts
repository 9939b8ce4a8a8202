/**
 * The request's body as n8n's Webhook node hands it to the next node (`$json.body`), or n8n's
 * refusal before any workflow runs. Apart from the headers (requestHeaders.ts): the signature
 * debugger needs only those.
 */
import { decodeRawBody } from '../../nodes/shared/keys/rawJson';

export type ParsedBody =
	| { ok: true; body: unknown; note: string }
	/** n8n refuses the request before any workflow runs (422 "Failed to parse request body"). */
	| { ok: false; message: string };

/**
 * `$json.body` as n8n 2.41's webhook body parser makes it (packages/cli middlewares/body-parser):
 * an empty body or an unknown content type gives no body; application/json is JSON.parse of the
 * UTF-8 text after one byte order mark; text/plain the text; form fields parsed; XML is not read here.
 */
export function parseWebhookBody(bytes: Uint8Array, contentType: string): ParsedBody {
	const [type, ...parameters] = contentType.split(';');
	const mediaType = type.toLowerCase();
	const charset = parameters
		.map((p) => p.trim().toLowerCase())
		.find((p) => p.startsWith('charset='));
	const charsetNote =
		charset !== undefined && !/^charset="?utf-?8"?$/.test(charset)
			? ` The page reads it as UTF-8, not ${charset.slice(8)}.`
			: '';
	if (bytes.length === 0)
		return { ok: true, body: undefined, note: 'The body is empty: n8n gives no $json.body.' };
	const text = decodeRawBody(bytes);
	const withoutBom = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
	if (mediaType === 'application/json') {
		try {
			return {
				ok: true,
				body: JSON.parse(withoutBom),
				note: `$json.body is JSON.parse of the body's UTF-8 text, as n8n parses it.${charsetNote}`,
			};
		} catch (error) {
			return {
				ok: false,
				message: `n8n refuses this request before the workflow runs (HTTP 422 "Failed to parse request body": ${(error as Error).message}), so no key is reserved. Send valid JSON, or another Content-Type.`,
			};
		}
	}
	if (mediaType === 'text/plain')
		return {
			ok: true,
			body: text,
			note: `Content-Type text/plain: $json.body is the text.${charsetNote}`,
		};
	if (mediaType === 'application/x-www-form-urlencoded') {
		const body: Record<string, string | string[]> = {};
		for (const [name, value] of new URLSearchParams(withoutBom)) {
			const previous = body[name];
			body[name] =
				previous === undefined
					? value
					: Array.isArray(previous)
						? [...previous, value]
						: [previous, value];
		}
		return { ok: true, body, note: 'Form fields: $json.body holds them by name.' };
	}
	if (mediaType.endsWith('/xml') || mediaType.endsWith('+xml')) {
		return {
			ok: true,
			body: XML_BODY,
			note: 'n8n parses XML bodies; the page does not read their fields.',
		};
	}
	return {
		ok: true,
		body: undefined,
		note: `Content-Type ${mediaType}: n8n gives no $json.body, only the raw bytes.`,
	};
}

/** Stands for an XML body, whose parsed form the page does not compute. */
export const XML_BODY = Object.freeze({ '[XML body: parsed by n8n, not by this page]': true });
