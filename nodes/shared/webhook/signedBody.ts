/**
 * Whether the body a workflow acts on (`$json.body`) is parsed from the same bytes the signature
 * covers (the raw-body binary). For JSON, text and form-urlencoded requests n8n's Webhook node
 * parses `$json.body` from the raw bytes, so checking the bytes checks the body. For
 * multipart/form-data it does not: the form fields become `$json.body`, any file part becomes a
 * binary (one named like the raw-body property takes its place), and the Raw Body option is
 * ignored. A captured signed body sent as a file part, next to fields of the attacker's choosing,
 * would verify while the workflow acts on the fields. Such items are refused before any crypto.
 * Pure, without n8n's types: the key planner's signature debugger bundles it.
 */

/** Why the signed bytes are not the body: a multipart request, or a binary that came from an upload. */
export type UnsignedBodyCause = 'multipart' | 'upload';

/** The raw-body binary as far as this check needs it; n8n's own raw body has no file name. */
export interface RawBodyBinary {
	fileName?: unknown;
}

/** Every value the headers hold under this name, whatever its case (a string, or each string of an array). */
function headerValues(headers: unknown, name: string): string[] {
	if (headers === null || typeof headers !== 'object') return [];
	const values: string[] = [];
	for (const [key, value] of Object.entries(headers as Record<string, unknown>)) {
		if (key.toLowerCase() !== name) continue;
		for (const one of Array.isArray(value) ? (value as unknown[]) : [value])
			if (typeof one === 'string') values.push(one);
	}
	return values;
}

/** `multipart/<any subtype>`, with parameters, spaces and any case; `multipart` alone too. */
function isMultipart(contentType: string): boolean {
	const mediaType = contentType.split(';')[0].trim().toLowerCase();
	return mediaType === 'multipart' || mediaType.startsWith('multipart/');
}

/**
 * Undefined when the body is parsed from the signed bytes; else why not. `rawBodyBinary` is the item's
 * raw-body binary property, undefined when it has none (the debugger has only the pasted headers).
 * The Webhook node builds the raw body as `{ data, mimeType }`, without a file name; every upload
 * (a multipart file part, the Binary File option) has one.
 */
export function unsignedBodyCause(
	headers: unknown,
	rawBodyBinary: RawBodyBinary | undefined,
): UnsignedBodyCause | undefined {
	if (headerValues(headers, 'content-type').some(isMultipart)) return 'multipart';
	if (rawBodyBinary?.fileName !== undefined) return 'upload';
	return undefined;
}

/** The reason's one-line explanation, for the debugger and the docs' wording. */
export const UNSIGNED_BODY_HINTS: Readonly<Record<UnsignedBodyCause, string>> = {
	multipart:
		'The request is multipart: n8n reads its form fields as the body and ignores Raw Body, so the signed bytes are not what the workflow acts on. No supported sender signs multipart deliveries; this is refused as unsigned_body (a forgery built from a captured delivery looks like this).',
	upload:
		"The raw-body binary has a file name: it came from an upload (a multipart file part, or the Webhook node's Binary File option), not from the Webhook node's Raw Body option, so it is not the body the workflow reads. Refused as unsigned_body.",
};
