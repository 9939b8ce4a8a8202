/**
 * The page's one-line explanations of a signature verdict: the usual cause of a mismatch (found by
 * trying what copies and settings commonly change), of a malformed or missing header, of a stale
 * timestamp. The verdict itself is the node's (planner/signature/signature.ts).
 */
import { readSignatureHeader } from '../../nodes/shared/webhook/headers';
import { PROVIDERS, verifiableFrom } from '../../nodes/shared/webhook/providers';
import {
	SIGNATURE_SCHEMES,
	type HmacAlgorithm,
	type SignatureScheme,
	type SignedRequest,
	type SignedScheme,
	type SigningDescription,
} from '../../nodes/shared/webhook/signatureSchemes';
import { isSharedSecret } from '../../nodes/shared/webhook/schemeTypes';
import {
	decode,
	DIGEST_BYTES,
	expectedSignature,
	isHmac,
	signingKey,
} from '../../nodes/shared/webhook/verifySignature';
import type { SignatureInput } from './signatureInput';

/** "12 s", "5 min 3 s", "2 h 10 min", "3 d 4 h". */
export function duration(totalSeconds: number): string {
	const s = Math.abs(Math.round(totalSeconds));
	if (s < 60) return `${s} s`;
	if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
	if (s < 86400)
		return `${Math.floor(s / 3600)} h${s % 3600 >= 60 ? ` ${Math.floor((s % 3600) / 60)} min` : ''}`;
	return `${Math.floor(s / 86400)} d${s % 86400 >= 3600 ? ` ${Math.floor((s % 86400) / 3600)} h` : ''}`;
}

const concat = (a: Uint8Array, b: Uint8Array): Uint8Array => {
	const all = new Uint8Array(a.length + b.length);
	all.set(a);
	all.set(b, a.length);
	return all;
};

const BOM = new Uint8Array([0xef, 0xbb, 0xbf]);
const utf8 = (text: string) => new TextEncoder().encode(text);

export function textOf(bytes: Uint8Array): string | undefined {
	try {
		return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
	} catch {
		return undefined;
	}
}

/** Bodies that differ from these bytes the way copies and re-serialisation differ, each with its cause. */
function bodyVariants(body: Uint8Array): Array<[Uint8Array, string]> {
	const variants: Array<[Uint8Array, string]> = [];
	const text = textOf(body);
	const hasBom = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf;
	const withoutBom = hasBom ? body.slice(3) : body;
	if (hasBom)
		variants.push([
			withoutBom,
			'the sender signed it without the byte order mark (EF BB BF) these bytes start with',
		]);
	else
		variants.push([
			concat(BOM, body),
			"the sender's body starts with a byte order mark (EF BB BF) that these bytes lack: load the body from a file",
		]);
	if (text === undefined) return variants;
	const plain = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
	const bom = text === plain ? '' : '\ufeff';
	if (/\r\n/.test(text))
		variants.push([
			utf8(text.replace(/\r\n/g, '\n')),
			'the sender signed LF line endings and these bytes have CRLF',
		]);
	else if (/\n/.test(text))
		variants.push([
			utf8(text.replace(/\n/g, '\r\n')),
			"the sender's body has CRLF line endings and these bytes have LF (a text box or a copy turned them into LF): load the body from a file",
		]);
	if (/\r?\n$/.test(text))
		variants.push([
			utf8(text.replace(/\r?\n$/, '')),
			'the sender signed it without the line break at the end (an editor added one)',
		]);
	else
		variants.push([
			utf8(`${text}\n`),
			"the sender's body ends with a line break that these bytes lack",
		]);
	if (text.trim() !== text)
		variants.push([utf8(text.trim()), 'the sender signed it without the spaces around it']);
	let parsed: unknown;
	try {
		parsed = JSON.parse(plain);
	} catch {
		return variants;
	}
	const reserialised =
		'it was re-serialised (JSON as n8n or a tool shows it, not the bytes sent): turn on Raw Body in the Webhook node and check the exact bytes';
	for (const indent of [undefined, 2, 4, '\t'])
		variants.push([utf8(bom + JSON.stringify(parsed, null, indent)), reserialised]);
	return variants;
}

/** Keys the sender may have used instead, each with the cause: the secret's other encoding, or without stray spaces. */
function secretVariants(scheme: SignedScheme, secret: string): Array<[Uint8Array, string]> {
	const variants: Array<[Uint8Array, string]> = [];
	const trimmed = secret.trim();
	if (trimmed !== secret && trimmed !== '') {
		try {
			variants.push([
				signingKey(trimmed, scheme.secretFormat, 'secret'),
				'the secret has spaces or a line break copied with it: remove them here and in the Webhook Signing Secret credential',
			]);
		} catch {
			// Not a usable secret once trimmed either.
		}
	}
	if (scheme.secretFormat === 'text') {
		const encoded = trimmed.startsWith('whsec_') ? trimmed.slice(6) : trimmed;
		const decoded = decode(encoded, 'base64');
		if (decoded !== undefined && decoded.length > 0)
			variants.push([
				decoded,
				`the secret is base64: the sender signs with the bytes it encodes (Standard Webhooks' whsec_ format), while ${scheme.label} uses the text as it is: choose Standard Webhooks or Svix if that is the sender`,
			]);
		if (trimmed.startsWith('whsec_'))
			variants.push([
				utf8(trimmed.slice(6)),
				'the sender signs with the secret without its whsec_ prefix',
			]);
	} else {
		variants.push([
			utf8(trimmed),
			'the sender signs with the text of the secret, not with the bytes the base64 after whsec_ encodes as Standard Webhooks prescribes: check which library or setting signs these deliveries',
		]);
		if (trimmed.startsWith('whsec_'))
			variants.push([
				utf8(trimmed.slice(6)),
				'the sender signs with the base64 text after whsec_ as it is, not with the bytes it encodes',
			]);
	}
	return variants;
}

const MISMATCH_HINT =
	"The signature does not match: the body is not the exact bytes that were signed (turn on Raw Body in the Webhook node; load the body here from a file), the secret is wrong or another endpoint's, or the header comes from another delivery.";

/** What the sender signed had the body been these bytes (the headers as pasted). */
function contentWith(
	scheme: SignedScheme,
	input: SignatureInput,
	headers: unknown,
	body: Uint8Array,
): Uint8Array | undefined {
	const read = scheme.read({
		header: (name) => readSignatureHeader(headers, name),
		body,
		url: input.url,
	});
	return 'invalid' in read ? undefined : read.content;
}

function matchesAny(
	scheme: SignedScheme,
	key: Uint8Array,
	content: Uint8Array | undefined,
	received: readonly Uint8Array[],
): boolean {
	if (content === undefined || !isHmac(scheme.algorithm)) return false;
	const expected = expectedSignature(scheme.algorithm, key, content);
	return received.some(
		(signature) =>
			signature.length === expected.length && signature.every((byte, i) => byte === expected[i]),
	);
}

/** The usual cause of a mismatch, found by trying what copies and settings commonly change. */
export function mismatchHint(
	scheme: SignedScheme,
	input: SignatureInput,
	keys: readonly Uint8Array[],
	request: SignedRequest,
	headers: unknown,
): string {
	const received = request.signatures
		.map((text) => decode(text, scheme.encoding))
		.filter((signature): signature is NonNullable<typeof signature> => signature !== undefined);
	for (const secret of [input.secret, input.previousSecret].filter((s) => s !== '')) {
		for (const [key, cause] of secretVariants(scheme, secret)) {
			if (matchesAny(scheme, key, request.content, received))
				return `The signature matches another form of the secret: ${cause}.`;
		}
	}
	for (const [variant, cause] of bodyVariants(input.body)) {
		const content = contentWith(scheme, input, headers, variant);
		for (const key of keys) {
			if (matchesAny(scheme, key, content, received))
				return `The body differs from what was signed: ${cause}.`;
		}
	}
	if (input.secret !== input.secret.trim())
		return `${MISMATCH_HINT} The secret also has spaces or a line break around it.`;
	return MISMATCH_HINT;
}

/** Header lines given more than once in the pasted text (names in any case). */
function repeatedHeaders(text: string): Set<string> {
	const seen = new Set<string>();
	const repeated = new Set<string>();
	for (const line of text.split(/\r?\n/)) {
		const colon = line.indexOf(':');
		if (colon < 1) continue;
		const name = line.slice(0, colon).trim().toLowerCase();
		if (seen.has(name)) repeated.add(name);
		seen.add(name);
	}
	return repeated;
}

const ALGORITHM_NAMES = { sha1: 'SHA-1', sha256: 'SHA-256', sha512: 'SHA-512' } as const;

/** The signing description a scheme was made from (the provider table's entry), if it is a provider's. */
function descriptionOf(scheme: SignatureScheme): SigningDescription | undefined {
	const provider = verifiableFrom(PROVIDERS).find(
		({ value }) => (SIGNATURE_SCHEMES as Record<string, SignatureScheme>)[value] === scheme,
	);
	const signing = provider?.signing;
	return signing === undefined || isSharedSecret(signing) ? undefined : signing;
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const UNIT_WORDS = { seconds: 'seconds', milliseconds: 'milliseconds', iso8601: 'time' } as const;

/**
 * What the signature header's value lacks, read from the provider's description (schemeTypes.ts
 * SignatureFormat): a `key=value` list without its signature field, a prefix missing, a version
 * list without the checked version. Undefined when the format says nothing more.
 */
function signatureFormatHint(
	scheme: SignatureScheme,
	values: readonly string[],
): string | undefined {
	const description = descriptionOf(scheme);
	if (description === undefined) return undefined;
	const header = description.signatureHeaders[0];
	const at = scheme.headers.findIndex((name) => name.toLowerCase() === header.toLowerCase());
	const value = values[at] ?? '';
	const format = description.signature;
	const encoding = description.encoding;
	if (format.format === 'fields') {
		const { separator, signatureKey, timestampKey } = format;
		if (!new RegExp(`(^|${escape(separator)})\\s*${escape(signatureKey)}=`).test(value))
			return `The ${header} header has no ${signatureKey} signature (other fields are ignored, as the sender's own libraries do): paste the whole header.`;
		const unit =
			description.timestamp?.from === 'signature' ? UNIT_WORDS[description.timestamp.unit] : 'time';
		const stamp = timestampKey === undefined ? '' : `${timestampKey}=<${unit}>${separator}`;
		return `The ${header} header is not ${stamp}${signatureKey}=<${encoding}>[${separator}${signatureKey}=<${encoding}>]: it was cut short or changed when copied; paste the whole header.`;
	}
	if (format.format === 'whole' && format.prefix && !value.startsWith(format.prefix))
		return `${header} starts with ${format.prefix}: paste the whole ${header} header.`;
	if (format.format === 'versions') {
		const versioned = new RegExp(`(^|${escape(format.separator)})${escape(format.version)},`);
		if (value !== '' && !versioned.test(value))
			return `The ${header} header has no ${format.version} (HMAC) signature: signatures of other versions (such as v1a, ed25519) are not checked by the node; ask the sender for HMAC (${format.version}) signing.`;
	}
	return undefined;
}

/** Why the headers are malformed, as precisely as the headers tell. */
export function malformedHint(
	scheme: SignedScheme,
	input: SignatureInput,
	headers: unknown,
): string {
	const repeated = repeatedHeaders(input.headersText);
	const twice = scheme.headers.find((name) => repeated.has(name.toLowerCase()));
	if (twice !== undefined)
		return `The ${twice} header was sent twice (n8n joins the copies with ", "): the node never picks one of them; find out which proxy or client adds the second.`;
	const read = scheme.read({
		header: (name) => readSignatureHeader(headers, name),
		body: input.body,
		url: input.url,
	});
	const values = scheme.headers.map((name) => {
		const value = readSignatureHeader(headers, name);
		return value.kind === 'value' ? value.value : '';
	});
	const timestampName = scheme.headers.find((name) => /timestamp|time/i.test(name));
	if ('invalid' in read) {
		const formatHint = signatureFormatHint(scheme, values);
		if (formatHint !== undefined) return formatHint;
		if (timestampName !== undefined) {
			const value = readSignatureHeader(headers, timestampName);
			if (value.kind === 'value' && !/^\d{1,15}$/.test(value.value))
				return `${timestampName} must be whole seconds since 1970 (it is "${value.value}").`;
		}
		return `The ${scheme.headers.join(' / ')} header${scheme.headers.length > 1 ? 's are' : ' is'} not in ${scheme.label}'s form: cut short or changed when copied.`;
	}
	// The page checks HMAC schemes only (checkSignature), so the algorithm is a hash here.
	const algorithm = scheme.algorithm as HmacAlgorithm;
	const bytes = DIGEST_BYTES[algorithm];
	const bad = read.signatures.find((text) => decode(text, scheme.encoding)?.length !== bytes);
	const decoded = bad === undefined ? undefined : decode(bad, scheme.encoding);
	if (bad !== undefined && decoded !== undefined)
		return `A signature has ${decoded.length} bytes where ${ALGORITHM_NAMES[algorithm]} gives ${bytes}: ${scheme.label === 'Generic HMAC' ? 'check Algorithm and Encoding' : 'it was cut short or changed when copied'}.`;
	return `A signature is not ${scheme.encoding === 'hex' ? 'hex' : 'base64'}${scheme.label === 'Generic HMAC' ? ' (check Encoding and Signature Prefix)' : ''}: it was cut short or changed when copied.`;
}

export function missingHint(scheme: SignatureScheme, headers: unknown): string {
	const missing = scheme.headers.filter(
		(name) => readSignatureHeader(headers, name).kind === 'missing',
	);
	let hint = `No ${missing.join(', ')} header: this request was not signed by ${scheme.label === 'Generic HMAC' ? 'the sender with this header' : scheme.label}, or the header was lost on the way (a proxy) or not pasted.`;
	const other = (Object.values(SIGNATURE_SCHEMES) as SignatureScheme[]).find(
		(candidate) =>
			candidate !== scheme &&
			candidate.headers.length > 0 &&
			candidate.headers.every((name) => readSignatureHeader(headers, name).kind === 'value'),
	);
	if (other !== undefined)
		hint += ` These are the headers of ${other.label}: choose ${other.label} as the provider.`;
	return hint;
}

export function staleHint(age: number, tolerance: number, timestamp: number, now: number): string {
	if (age < 0) {
		if (timestamp > now * 100)
			return `The timestamp is ${duration(-age)} in the future: it looks like milliseconds, and the scheme signs seconds.`;
		return `The signature matches, but it is dated ${duration(-age)} in the future, beyond the tolerance of ${tolerance} s: n8n's clock or the sender's is off; keep both in sync.`;
	}
	return `The signature matches, but it was made ${duration(age)} ago, more than the tolerance of ${tolerance} s: a replayed or redelivered old request (ask the sender for a new delivery), or n8n's clock is off.`;
}
