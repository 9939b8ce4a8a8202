/**
 * The body as the signature covers it. n8n's Webhook node picks its parser from the Content-Type
 * header, which no sender signs: the same signed bytes sent as `text/plain`, as a form or without a
 * Content-Type become another `$json.body` (a string, a form whose field an attacker chose, nothing).
 * Once a signature holds, the route must come from the signed bytes alone, so a delivery is taken
 * only when
 * - its media type is one its sender uses (the provider table's `contentTypes`, where JSON also
 *   takes any structured-syntax `+json` type, RFC 6839: `application/cloudevents+json`), with no
 *   charset but UTF-8; for a sender of JSON and forms, bytes that are JSON must say JSON, so one
 *   delivery parses one way whatever the header claims, and
 * - n8n's `$json.body` is exactly the parse of the signed bytes in that media type; n8n parses no
 *   `+json` type, so there an empty `$json.body` is filled from the signed bytes (fillsBody).
 * Everything downstream (the key, the fingerprint, `{{ $json.body.id }}`, the business step) then
 * reads the signed content.
 * Pure, without n8n's types or Node.js APIs: the key planner page bundles it.
 */

export const JSON_MEDIA_TYPE = 'application/json';
export const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';

/** Plain text: n8n's `$json.body` is the text itself (Generic HMAC, when the user lists it). */
export const TEXT_MEDIA_TYPE = 'text/plain';
/**
 * Any structured-syntax JSON media type (RFC 6839 `+json`: `application/cloudevents+json`,
 * `application/vnd.api+json`), in a list of media types: read as JSON.
 */
export const STRUCTURED_JSON = '*/*+json';

/** The media types this check can parse as the sender meant them. */
export const PARSEABLE_MEDIA_TYPES = [
	JSON_MEDIA_TYPE,
	STRUCTURED_JSON,
	FORM_MEDIA_TYPE,
	TEXT_MEDIA_TYPE,
] as const;

/** `type/subtype+json` (RFC 6838 restricted names), never `application/json` itself. */
const STRUCTURED_JSON_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*\+json$/;

/** Whether a declared media type is JSON: `application/json` or a `+json` one. */
export function isJsonMediaType(mediaType: string): boolean {
	return mediaType === JSON_MEDIA_TYPE || STRUCTURED_JSON_TYPE.test(mediaType);
}

/**
 * A sender's media types as the check takes them: a sender of JSON (the provider table's entry)
 * also sends its JSON under a `+json` type, which is JSON by RFC 6839.
 */
export function withStructuredJson(contentTypes: readonly string[]): readonly string[] {
	if (!contentTypes.includes(JSON_MEDIA_TYPE) || contentTypes.includes(STRUCTURED_JSON))
		return contentTypes;
	const json = contentTypes.indexOf(JSON_MEDIA_TYPE) + 1;
	return [...contentTypes.slice(0, json), STRUCTURED_JSON, ...contentTypes.slice(json)];
}

/** Whether `mediaType` is one of `contentTypes` (STRUCTURED_JSON: any `+json` type). */
function isListed(mediaType: string, contentTypes: readonly string[]): boolean {
	if (contentTypes.includes(mediaType)) return true;
	return contentTypes.includes(STRUCTURED_JSON) && STRUCTURED_JSON_TYPE.test(mediaType);
}

/** The list of media types as a sentence names them. */
export function mediaTypesText(contentTypes: readonly string[]): string {
	return contentTypes
		.map((type) => (type === STRUCTURED_JSON ? 'any +json media type (RFC 6839)' : type))
		.join(' or ');
}

/** Why a verified delivery is not taken: said on the item error, never to decide a route. */
export type ParseRefusal =
	| { refused: 'media-type'; declared: string | undefined; expected: readonly string[] }
	| { refused: 'charset'; charset: string }
	| { refused: 'unparsable'; mediaType: string }
	| { refused: 'parse-differs'; mediaType: string };

export interface SignedParse {
	mediaType: string;
	/** The signed bytes parsed as `mediaType`: a JSON value, or a form's fields (a repeated name: an array). */
	body: unknown;
}

/** Every Content-Type value of the headers, whatever the case of the name. */
function contentTypeValues(headers: unknown): string[] {
	if (headers === null || typeof headers !== 'object') return [];
	const values: string[] = [];
	for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
		if (name.toLowerCase() !== 'content-type') continue;
		for (const one of Array.isArray(value) ? (value as unknown[]) : [value])
			values.push(typeof one === 'string' ? one : String(one));
	}
	return values;
}

/** `type/subtype` in lower case and the charset parameter, if any (quotes and case dropped). */
export function declaredMediaType(
	headers: unknown,
): { mediaType: string; charset?: string } | undefined {
	const values = contentTypeValues(headers);
	// Sent twice (or under two spellings): no single media type was declared.
	if (values.length !== 1) return undefined;
	const [type, ...parameters] = values[0].split(';');
	const mediaType = type.trim().toLowerCase();
	if (mediaType === '') return undefined;
	let charset: string | undefined;
	for (const parameter of parameters) {
		const equals = parameter.indexOf('=');
		if (equals < 0) continue;
		if (parameter.slice(0, equals).trim().toLowerCase() !== 'charset') continue;
		charset = parameter
			.slice(equals + 1)
			.trim()
			.replace(/^"(.*)"$/, '$1')
			.toLowerCase();
	}
	return { mediaType, charset };
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A form's fields in order of first appearance; a name sent twice holds every value, in order. */
export function formFields(text: string): Record<string, string | string[]> {
	const fields: Record<string, string | string[]> = Object.create(null) as Record<
		string,
		string | string[]
	>;
	for (const [name, value] of new URLSearchParams(text)) {
		const before = fields[name];
		if (before === undefined) fields[name] = value;
		else fields[name] = Array.isArray(before) ? [...before, value] : [before, value];
	}
	return { ...fields };
}

/** The signed bytes parsed as the media type, or undefined when they are not that (bad UTF-8, bad JSON). */
function parseAs(bytes: Uint8Array, mediaType: string): { body: unknown } | undefined {
	let text: string;
	try {
		text = UTF8.decode(bytes);
	} catch {
		return undefined;
	}
	if (mediaType === FORM_MEDIA_TYPE) return { body: formFields(text) };
	if (mediaType === TEXT_MEDIA_TYPE) return { body: text };
	try {
		return { body: JSON.parse(text) as unknown };
	} catch {
		return undefined;
	}
}

/**
 * Whether two parsed bodies are the same value: JSON values compared by content (object keys in any
 * order, as a path reads them), a form's repeated field as the array n8n makes of it.
 */
export function sameValue(a: unknown, b: unknown): boolean {
	if (a === b) return true;
	if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
	if (Array.isArray(a) !== Array.isArray(b)) return false;
	if (Array.isArray(a)) {
		const other = b as unknown[];
		return a.length === other.length && a.every((value, index) => sameValue(value, other[index]));
	}
	const left = Object.keys(a);
	const right = b as Record<string, unknown>;
	if (left.length !== Object.keys(right).length) return false;
	return left.every(
		(name) =>
			Object.prototype.hasOwnProperty.call(right, name) &&
			sameValue((a as Record<string, unknown>)[name], right[name]),
	);
}

/**
 * The verified delivery's body as its sender signed it, or why it is not taken. `contentTypes`:
 * what the sender uses (the table's, or Generic HMAC's setting); `n8nBody`: the item's
 * `$json.body`, which must be the same parse.
 */
export function signedParse(
	bytes: Uint8Array,
	headers: unknown,
	n8nBody: unknown,
	contentTypes: readonly string[],
): SignedParse | ParseRefusal {
	const declared = declaredMediaType(headers);
	if (declared === undefined || !isListed(declared.mediaType, contentTypes))
		return { refused: 'media-type', declared: declared?.mediaType, expected: contentTypes };
	if (declared.charset !== undefined && declared.charset !== 'utf-8' && declared.charset !== 'utf8')
		return { refused: 'charset', charset: declared.charset };
	const { mediaType } = declared;
	const json = isJsonMediaType(mediaType);
	// A sender of JSON and forms (GitHub, Slack): JSON bytes claimed as a form (or as text) would be
	// keyed on fields the attacker placed in a string. The bytes decide which of its types they are.
	if (!json && contentTypes.some((type) => type === JSON_MEDIA_TYPE || type === STRUCTURED_JSON)) {
		if (parseAs(bytes, JSON_MEDIA_TYPE) !== undefined)
			return {
				refused: 'media-type',
				declared: mediaType,
				expected: contentTypes.filter(
					(type) => type === JSON_MEDIA_TYPE || type === STRUCTURED_JSON,
				),
			};
	}
	const parsed = parseAs(bytes, json ? JSON_MEDIA_TYPE : mediaType);
	if (parsed === undefined) return { refused: 'unparsable', mediaType };
	if (!sameValue(parsed.body, n8nBody) && !fillsBody(mediaType, n8nBody))
		return { refused: 'parse-differs', mediaType };
	return { mediaType, body: parsed.body };
}

/**
 * Whether n8n left `$json.body` empty for a media type it does not parse (any `+json` type: n8n
 * parses `application/json` only), so the node fills it from the signed bytes: nothing unsigned
 * was read, and the workflow reads `{{ $json.body.id }}` as for JSON.
 */
export function fillsBody(mediaType: string, n8nBody: unknown): boolean {
	if (mediaType === JSON_MEDIA_TYPE || !STRUCTURED_JSON_TYPE.test(mediaType)) return false;
	if (n8nBody === undefined || n8nBody === null) return true;
	return (
		typeof n8nBody === 'object' && !Array.isArray(n8nBody) && Object.keys(n8nBody).length === 0
	);
}

export function isParseRefusal(value: SignedParse | ParseRefusal): value is ParseRefusal {
	return 'refused' in value;
}

/** One sentence for the item error: what was sent, and what the sender uses. */
export function parseRefusalMessage(refusal: ParseRefusal, sender: string): string {
	switch (refusal.refused) {
		case 'media-type':
			return `${sender} sends ${mediaTypesText(refusal.expected)}; this delivery's Content-Type is ${refusal.declared === undefined ? 'missing or sent twice' : `"${refusal.declared}"`}. The signature covers the bytes, not the Content-Type, so the body is not read under another media type`;
		case 'charset':
			return `The Content-Type declares charset "${refusal.charset}"; ${sender} signs UTF-8, and another charset would make n8n read other text from the same signed bytes`;
		case 'unparsable':
			return `The signed bytes are not valid ${refusal.mediaType} in UTF-8`;
		case 'parse-differs':
			return `n8n read this ${refusal.mediaType} body differently from the signed bytes (a form field name with brackets or dots, for example), so the workflow would not act on what ${sender} signed`;
	}
}
