import {
	isSharedSecret,
	type HeaderLookup,
	type ReadResult,
	type RequestParts,
	type SecretLocation,
	type SharedSecretScheme,
	type SignatureFormat,
	type SignatureScheme,
	type SignedScheme,
	type SigningDescription,
	type VerificationDescription,
	type TimestampSource,
	type TimestampUnit,
} from './schemeTypes';

/**
 * The one reader of every signing description: it finds the signatures in their header, the
 * timestamp where the description says, and builds the signed content from the `signs` template.
 * Readers are generic over the description, so a provider of a known shape is data only. No crypto
 * here (verifySignature.ts), and no Node.js API: the key planner page bundles this file.
 */

export const MALFORMED = { invalid: 'malformed' } as const;
const MISSING = { invalid: 'missing_header' } as const;
type Problem = typeof MALFORMED | typeof MISSING;

/** One piece of the signed content. */
export type ContentPart =
	| { kind: 'literal'; text: string }
	| { kind: 'body' }
	| { kind: 'form' }
	| { kind: 'timestamp' }
	| { kind: 'url' }
	| { kind: 'header'; name: string };

const PLACEHOLDER = /\{(body|form|timestamp|url|header:[^{}]+)\}/g;

/** `'{timestamp}.{body}'` → its parts. Throws on a template a description must not hold. */
export function parseSigns(signs: string): ContentPart[] {
	const parts: ContentPart[] = [];
	let last = 0;
	for (const match of signs.matchAll(PLACEHOLDER)) {
		if (match.index > last) parts.push({ kind: 'literal', text: signs.slice(last, match.index) });
		const name = match[1];
		parts.push(
			name.startsWith('header:')
				? { kind: 'header', name: name.slice('header:'.length) }
				: ({ kind: name } as ContentPart),
		);
		last = match.index + match[0].length;
	}
	if (last < signs.length) parts.push({ kind: 'literal', text: signs.slice(last) });
	const bodies = parts.filter((part) => part.kind === 'body' || part.kind === 'form').length;
	if (bodies > 1 || parts.some((part) => part.kind === 'literal' && /[{}]/.test(part.text)))
		throw new Error(`Not a signed-content template: ${signs}`);
	return parts;
}

/**
 * parseSigns of a template, parsed once: the replay guard reads the template of every verified
 * delivery again (retryStableContent.ts), and the provider table's templates never change. A user's
 * Generic HMAC template is cached too; the cache is emptied when it gets large. Shared and frozen:
 * callers read the parts, never change them.
 */
const partsBySigns = new Map<string, readonly ContentPart[]>();
const MAX_CACHED_TEMPLATES = 256;

export function signedContentParts(signs: string): readonly ContentPart[] {
	let parts = partsBySigns.get(signs);
	if (parts === undefined) {
		parts = Object.freeze(parseSigns(signs).map((part) => Object.freeze(part)));
		if (partsBySigns.size >= MAX_CACHED_TEMPLATES) partsBySigns.clear();
		partsBySigns.set(signs, parts);
	}
	return parts;
}

/** Whole seconds as decimal digits; anything else (a joined header "1, 2", a fraction) is malformed. */
export function seconds(text: string): number | undefined {
	return /^\d{1,15}$/.test(text) ? Number(text) : undefined;
}

const ISO_8601 = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** A timestamp's text as seconds since the epoch, or undefined when it is not in its unit's form. */
export function timestampSeconds(text: string, unit: TimestampUnit): number | undefined {
	if (unit === 'seconds') return seconds(text);
	if (unit === 'milliseconds') return /^\d{1,18}$/.test(text) ? Number(text) / 1000 : undefined;
	const match = ISO_8601.exec(text);
	if (!match) return undefined;
	// RFC 3339 allows nanoseconds (Twitch sends them); Date.parse is only sure of milliseconds.
	const fraction = (match[2] ?? '').slice(0, 4);
	const parsed = Date.parse(`${match[1]}${fraction}${match[3]}`);
	return Number.isFinite(parsed) ? parsed / 1000 : undefined;
}

/** Reads one header: missing, ambiguous (sent twice) or its text. */
function headerText(header: HeaderLookup, name: string): string | Problem {
	const value = header(name);
	if (value.kind === 'missing') return MISSING;
	if (value.kind === 'ambiguous') return MALFORMED;
	return value.value;
}

const isProblem = (value: unknown): value is Problem =>
	typeof value === 'object' && value !== null && 'invalid' in value;

/** The signatures one header value carries, and the `fields` format's timestamp field. */
function parseSignatureValue(
	value: string,
	format: SignatureFormat,
): { signatures: string[]; timestamp?: string } | Problem {
	if (format.format === 'whole') {
		const prefix = format.prefix ?? '';
		if (!value.startsWith(prefix) || value.length === prefix.length) return MALFORMED;
		return { signatures: [value.slice(prefix.length)] };
	}
	if (format.format === 'versions') {
		const signatures: string[] = [];
		for (const entry of value.split(format.separator).filter((part) => part !== '')) {
			const comma = entry.indexOf(',');
			if (comma < 1) return MALFORMED;
			if (entry.slice(0, comma) === format.version) signatures.push(entry.slice(comma + 1));
		}
		return { signatures };
	}
	const signatures: string[] = [];
	const timestamps: string[] = [];
	for (const part of value.split(format.separator)) {
		const equals = part.indexOf('=');
		if (equals < 1) return MALFORMED;
		const key = part.slice(0, equals).trim();
		const text = part.slice(equals + 1).trim();
		if (key === format.signatureKey) signatures.push(text);
		else if (key === format.timestampKey) timestamps.push(text);
	}
	// A second timestamp (a header sent twice and joined by the HTTP layer) is never half-trusted.
	if (format.timestampKey !== undefined && timestamps.length !== 1) return MALFORMED;
	return { signatures, timestamp: timestamps[0] };
}

/** Every signature of the request: the first header must be there, the others add theirs. */
function readSignatures(
	description: SigningDescription,
	header: HeaderLookup,
): { signatures: string[]; timestamp?: string } | Problem {
	const signatures: string[] = [];
	let timestamp: string | undefined;
	for (const [index, name] of description.signatureHeaders.entries()) {
		const value = headerText(header, name);
		if (value === MISSING && index > 0) continue;
		if (isProblem(value)) return value;
		const parsed = parseSignatureValue(value, description.signature);
		if (isProblem(parsed)) return parsed;
		signatures.push(...parsed.signatures);
		timestamp ??= parsed.timestamp;
	}
	if (signatures.length === 0) return MALFORMED;
	return { signatures, timestamp };
}

/** The value at a path of the body's JSON, as text; undefined when the body is not JSON or lacks it. */
function bodyField(body: Uint8Array, path: readonly string[]): string | undefined {
	let value = jsonBody(body);
	for (const step of path) {
		if (value === null || typeof value !== 'object') return undefined;
		value = (value as Record<string, unknown>)[step];
	}
	return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
}

function readTimestamp(
	source: TimestampSource,
	request: RequestParts,
	fromSignature: string | undefined,
): { text: string; seconds: number } | Problem {
	let text: string | Problem | undefined;
	if (source.from === 'header') text = headerText(request.header, source.header);
	else if (source.from === 'signature') text = fromSignature;
	else text = bodyField(request.body, source.path);
	if (text === undefined) return MALFORMED;
	if (isProblem(text)) return text;
	const value = timestampSeconds(text, source.unit);
	return value === undefined ? MALFORMED : { text, seconds: value };
}

/** Form parameters sorted by name (then value), repeats once, each name followed by its value: Twilio's signed form. */
export function sortedForm(body: Uint8Array): string | undefined {
	const text = new TextDecoder().decode(body);
	const pairs: Array<[string, string]> = [];
	try {
		for (const piece of text.split('&')) {
			if (piece === '') continue;
			const equals = piece.indexOf('=');
			const [name, value] =
				equals < 0 ? [piece, ''] : [piece.slice(0, equals), piece.slice(equals + 1)];
			const decode = (part: string) => decodeURIComponent(part.replace(/\+/g, ' '));
			pairs.push([decode(name), decode(value)]);
		}
	} catch {
		return undefined;
	}
	const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
	pairs.sort(([a, x], [b, y]) => byCodeUnit(a, b) || byCodeUnit(x, y));
	// A name sent twice with the same value counts once, as Twilio's libraries sign it.
	const distinct = pairs.filter(
		([name, value], i) => i === 0 || name !== pairs[i - 1][0] || value !== pairs[i - 1][1],
	);
	return distinct.map(([name, value]) => name + value).join('');
}

/** The chunks one after another, in one array. */
export function concat(chunks: readonly Uint8Array[]): Uint8Array {
	const out = new Uint8Array(chunks.reduce((total, chunk) => total + chunk.length, 0));
	let offset = 0;
	for (const chunk of chunks) {
		out.set(chunk, offset);
		offset += chunk.length;
	}
	return out;
}

/** The headers a template or timestamp reads besides the signature headers, in the order they are signed. */
function signedHeaderNames(parts: readonly ContentPart[], timestamp?: TimestampSource): string[] {
	const names: string[] = [];
	for (const part of parts) {
		if (part.kind === 'header') names.push(part.name);
		if (part.kind === 'timestamp' && timestamp?.from === 'header') names.push(timestamp.header);
	}
	return names;
}

/** The parsed JSON body, or undefined when the bytes are not UTF-8 JSON. */
function jsonBody(body: Uint8Array): unknown {
	try {
		return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
	} catch {
		return undefined;
	}
}

/** Each secret value the request carries where the location says; a problem when one is absent. */
function readSecrets(location: SecretLocation, request: RequestParts): string[] | Problem {
	if (location.in === 'header') {
		const value = headerText(request.header, location.header);
		if (isProblem(value)) return value;
		return value === '' ? MALFORMED : [value];
	}
	let array: unknown = jsonBody(request.body);
	for (const step of location.array) {
		if (array === null || typeof array !== 'object' || Array.isArray(array)) return MALFORMED;
		array = (array as Record<string, unknown>)[step];
	}
	// No notification at all proves nothing: an empty batch is refused, never valid by default.
	if (!Array.isArray(array) || array.length === 0) return MALFORMED;
	const values: string[] = [];
	for (const element of array) {
		const value =
			element !== null && typeof element === 'object' && !Array.isArray(element)
				? (element as Record<string, unknown>)[location.field]
				: undefined;
		if (typeof value !== 'string' || value === '') return MALFORMED;
		values.push(value);
	}
	return values;
}

/**
 * A shared secret made runnable: `read` returns every value the request carries where the secret
 * should be (each must equal a key: verifySignature.ts), and no content, since nothing is signed.
 */
export function schemeFromSharedSecret(
	label: string,
	location: SecretLocation,
): SharedSecretScheme {
	return {
		kind: 'sharedSecret',
		label,
		location,
		headers: location.in === 'header' ? [location.header] : [],
		secretFormat: 'text',
		hasTimestamp: false,
		signedHeaders: [],
		signs: '',
		signsBody: false,
		needsUrl: false,
		read: (request): ReadResult => {
			const values = readSecrets(location, request);
			return isProblem(values) ? values : { signatures: values, content: new Uint8Array() };
		},
	};
}

/** A description made runnable, signed or shared secret. `label` is the provider's. */
export function schemeFromDescription(label: string, description: SigningDescription): SignedScheme;
export function schemeFromDescription(
	label: string,
	description: VerificationDescription,
): SignatureScheme;
export function schemeFromDescription(
	label: string,
	description: VerificationDescription,
): SignatureScheme {
	if (isSharedSecret(description)) return schemeFromSharedSecret(label, description.sharedSecret);
	return signedScheme(label, description);
}

function signedScheme(label: string, description: SigningDescription): SignedScheme {
	const parts = parseSigns(description.signs);
	const signedHeaders = signedHeaderNames(parts, description.timestamp);
	const timestampHeader =
		description.timestamp?.from === 'header' ? [description.timestamp.header] : [];
	const encoder = new TextEncoder();
	return {
		kind: 'signature',
		label,
		headers: [...new Set([...signedHeaders, ...timestampHeader, ...description.signatureHeaders])],
		algorithm: description.algorithm,
		encoding: description.encoding,
		secretFormat: description.secret,
		hasTimestamp: description.timestamp !== undefined,
		signedHeaders,
		signs: description.signs,
		signsBody: parts.some((part) => part.kind === 'body' || part.kind === 'form'),
		needsUrl: parts.some((part) => part.kind === 'url'),
		read: (request): ReadResult => {
			const found = readSignatures(description, request.header);
			if (isProblem(found)) return found;
			const timestamp = description.timestamp
				? readTimestamp(description.timestamp, request, found.timestamp)
				: undefined;
			if (isProblem(timestamp)) return timestamp;
			const chunks: Uint8Array[] = [];
			for (const part of parts) {
				let text: string | Problem | undefined;
				if (part.kind === 'body') {
					chunks.push(request.body);
					continue;
				}
				if (part.kind === 'literal') text = part.text;
				else if (part.kind === 'timestamp') text = timestamp?.text;
				else if (part.kind === 'url') text = request.url;
				else if (part.kind === 'form') text = sortedForm(request.body);
				else text = headerText(request.header, part.name);
				if (text === undefined) return MALFORMED;
				if (isProblem(text)) return text;
				chunks.push(encoder.encode(text));
			}
			return {
				signatures: found.signatures,
				content: concat(chunks),
				timestamp: timestamp?.seconds,
			};
		},
	};
}
