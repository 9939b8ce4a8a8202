/**
 * The signature check of the built-in-nodes workflow (planner/builtIn/builtIn.ts), per provider, as n8n
 * expressions around n8n's Crypto node (v2), written from each provider's signing description in the
 * one table (nodes/shared/webhook/providers/): which header and format, what is signed, the timestamp.
 * No provider is named here: a description either translates into Crypto and If node expressions,
 * or the provider is refused with the reason.
 *
 * The Crypto node's HMAC takes its secret from a Crypto credential, a text field that Node.js
 * uses as UTF-8 bytes (`createHmac(type, secret)`, n8n-nodes-base CryptoV2.node.js). A provider
 * whose key is bytes given as base64 (Standard Webhooks and Svix: `whsec_<base64>`) cannot be
 * entered there: most keys are not valid UTF-8, so no text gives those bytes. A Code node may use
 * `crypto` on n8n Cloud (https://docs.n8n.io/build/code-in-n8n/using-the-code-node, "External libraries"), but it has no
 * credentials, so the secret would be written into the workflow: those providers are refused instead.
 */
import {
	isSigned,
	isVerifiable,
	PROVIDERS,
	type ProviderDefinition,
	type ProviderValue,
	type Unverifiable,
} from '../../nodes/shared/webhook/providers';
import { EVERY_ELEMENT, perAttemptPaths } from '../../nodes/shared/webhook/retryStableContent';
import { parseSigns, type ContentPart } from '../../nodes/shared/webhook/schemeReader';
import { JSON_MEDIA_TYPE } from '../../nodes/shared/webhook/signedParse';
import {
	isSharedSecret,
	type HmacAlgorithm,
	type SharedSecretDescription,
	type SigningDescription,
	type TimestampSource,
} from '../../nodes/shared/webhook/schemeTypes';
import { secretPlace } from '../../nodes/shared/webhook/schemeText';

/** The Webhook node's name in the generated workflow; later nodes read its output by name. */
export const WEBHOOK_NODE = 'Webhook';

/** A request header as the Webhook node hands it (names lower-cased), '' when missing. */
export function headerExpression(name: string): string {
	return `String($('${WEBHOOK_NODE}').first().json.headers[${JSON.stringify(name.toLowerCase())}] ?? '')`;
}

export interface BuiltInSignature {
	provider: ProviderValue;
	label: string;
	/** The Crypto node's HMAC type. */
	algorithm: 'SHA1' | 'SHA256' | 'SHA512';
	/** HMAC of the raw bytes (Webhook's binary "data"), or of a text made of the body text. */
	input: { kind: 'binary' } | { kind: 'text'; expression: string };
	encoding: 'hex' | 'base64';
	/** An expression giving the signatures the request carries (an array of text). */
	signatures: string;
	/** For providers that sign a timestamp: an expression giving it in seconds (NaN when it is not one). */
	timestamp?: string;
	/**
	 * Whether the event id is covered by the signature (senderSignsEventId). When it is not (GitHub,
	 * Shopify: an id header next to a signature of the body alone), a captured delivery resent under
	 * a fresh id header passes the signature check: the replay guard keys on the body instead.
	 */
	signsEventId: boolean;
	/** The headers the scheme signs, lower-cased (the `{header:…}` parts of its signed content). */
	signedHeaders: readonly string[];
	/** The media types the sender posts (the table's `contentTypes`): any other is answered 415. */
	contentTypes: readonly string[];
	/**
	 * The replay guard's digest, as the package makes it (webhook/retryStableContent.ts): the raw
	 * body's SHA-256 (`sha256:`) where the signed content is the body alone, else an expression giving
	 * the retry-stable signed content as text, whose SHA-256 is keyed `signed:`.
	 */
	digest: { kind: 'rawBody' } | { kind: 'signedContent'; expression: string };
	/**
	 * For schemes that sign the URL: an expression that is true when the query can be written back
	 * exactly (every value text); a query that cannot is refused 401, as by the package (requestUrl.ts).
	 */
	queryIsText?: string;
}

export type SignatureSupport =
	| { supported: true; signature: BuiltInSignature }
	/** `reason` is the sentence users read; `cause`, its part after the provider's name (for tables). */
	| { supported: false; provider: string; label: string; reason: string; cause: string };

/** The body as text, as Extract From File put it on the item (planner/builtIn/builtIn.ts, RAW_TEXT_FIELD). */
const BODY_TEXT = '$json.rawBody';

/** The Webhook node's query, as n8n parsed it. */
const QUERY = `$('${WEBHOOK_NODE}').first().json.query`;

/**
 * The URL the sender was given, as the package rebuilds it (nodes/shared/webhook/requestUrl.ts): the
 * Webhook's `webhookUrl`, then `?` and the query written again the way URLSearchParams writes it
 * (application/x-www-form-urlencoded: only letters, digits, `*-._` kept, space as `+`, the rest
 * UTF-8 percent-encoded), in the order of n8n's query object. URLSearchParams itself is not among
 * an expression's globals, so encodeURIComponent does it and the five characters it keeps but
 * URLSearchParams does not (`!'()~`) are encoded after it.
 */
export const URL_EXPRESSION = `((url, query) => { const form = (text) => encodeURIComponent(text.toWellFormed()).replace(/%20/g, '+').replace(/[!'()~]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase()); const pairs = Object.entries(query !== null && typeof query === 'object' ? query : {}).flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((one) => form(name) + '=' + form(String(one)))); return pairs.length === 0 ? url : url + '?' + pairs.join('&'); })(String($('${WEBHOOK_NODE}').first().json.webhookUrl ?? ''), ${QUERY})`;

/** True when every query value is text (requestUrl.ts refuses any other: it cannot be written back exactly). */
export const QUERY_IS_TEXT = `((query) => Object.values(query !== null && typeof query === 'object' ? query : {}).every((value) => (Array.isArray(value) ? value : [value]).every((one) => typeof one === 'string')))(${QUERY})`;

/** The UTF-8 byte length of a well-formed text (encodeURIComponent writes each byte past ASCII as %XX). */
const utf8Length = (text: string) =>
	`((encoded) => encoded.length - 2 * (encoded.split('%').length - 1))(encodeURIComponent(${text}))`;

/** The body text without a leading byte order mark, as TextDecoder reads it before JSON.parse (signedParse.ts). */
export const BODY_TEXT_NO_BOM = `(${BODY_TEXT}.charCodeAt(0) === 0xfeff ? ${BODY_TEXT}.slice(1) : ${BODY_TEXT})`;

/**
 * The signed JSON body without the fields at these paths (retryStableContent.ts, withoutPaths):
 * `*` steps over every element of an array. The paths come from the provider table.
 */
function withoutPathsExpression(paths: ReadonlyArray<readonly string[]>): string {
	const strip = `const strip = (value, paths) => { if (paths.length === 0 || value === null || typeof value !== 'object') return value; const isArray = Array.isArray(value); const copy = isArray ? [...value] : { ...value }; for (const name of Object.keys(copy)) { if (!isArray && paths.some((path) => path.length === 1 && (path[0] === name || path[0] === ${JSON.stringify(EVERY_ELEMENT)}))) { delete copy[name]; continue; } const deeper = paths.filter((path) => path.length > 1 && (path[0] === name || path[0] === ${JSON.stringify(EVERY_ELEMENT)})); if (deeper.length > 0) copy[name] = strip(copy[name], deeper.map((path) => path.slice(1))); } return copy; };`;
	return `(() => { ${strip} return JSON.stringify(strip(JSON.parse(${BODY_TEXT_NO_BOM}), ${JSON.stringify(paths)})); })()`;
}

/**
 * The retry-stable signed content as text (retryStableContent.ts), or undefined where it is the raw
 * body alone: each signed part but literals, the timestamp and signed headers; parts signed one
 * after another with nothing between them (Square's `{url}{body}`) one text, as signed; each such
 * run length-prefixed (`<UTF-8 bytes>:`); the body less the fields the sender renews per attempt.
 */
function signedContentExpression(
	parts: readonly ContentPart[],
	renewed: ReadonlyArray<readonly string[]>,
): string | undefined {
	const runs: string[][] = [];
	let run: string[] | undefined;
	let onlyRawBody = true;
	for (const part of parts) {
		// Timestamps and signed headers are renewed by some senders per attempt: left out, as in the package.
		if (part.kind === 'literal' || part.kind === 'timestamp' || part.kind === 'header') {
			run = undefined;
			continue;
		}
		if (run === undefined) runs.push((run = []));
		if (part.kind === 'body' && renewed.length === 0) {
			run.push(BODY_TEXT);
			continue;
		}
		onlyRawBody = false;
		if (part.kind === 'body') run.push(withoutPathsExpression(renewed));
		else if (part.kind === 'url') run.push(URL_EXPRESSION);
		else return undefined; // {form}: refused before (FORM_REASON)
	}
	if (onlyRawBody && runs.length === 1 && runs[0].length === 1) return undefined;
	return runs
		.map((pieces) => `((text) => ${utf8Length('text')} + ':' + text)(${pieces.join(' + ')})`)
		.join(' + ');
}
const CRYPTO_TYPES: Readonly<Record<HmacAlgorithm, BuiltInSignature['algorithm']>> = {
	sha1: 'SHA1',
	sha256: 'SHA256',
	sha512: 'SHA512',
};

/** The signatures of one header value, as the generic reader (schemeReader.ts) finds them. */
function signaturesIn(value: string, description: SigningDescription): string {
	const format = description.signature;
	if (format.format === 'whole') {
		const prefix = format.prefix ?? '';
		return `[${value}].filter((v) => v.length > ${prefix.length} && v.startsWith(${JSON.stringify(prefix)})).map((v) => v.slice(${prefix.length}))`;
	}
	if (format.format === 'versions') {
		const version = `${format.version},`;
		return `${value}.split(${JSON.stringify(format.separator)}).filter((v) => v.startsWith(${JSON.stringify(version)})).map((v) => v.slice(${version.length}))`;
	}
	const key = `${format.signatureKey}=`;
	return `${value}.split(${JSON.stringify(format.separator)}).map((v) => v.trim()).filter((v) => v.startsWith(${JSON.stringify(key)})).map((v) => v.slice(${key.length}))`;
}

/** The `fields` format's timestamp field, '' when missing. */
function signatureField(description: SigningDescription, key: string): string {
	const format = description.signature;
	const separator = format.format === 'fields' ? format.separator : ',';
	return `(${headerExpression(description.signatureHeaders[0])}.split(${JSON.stringify(separator)}).map((v) => v.trim()).find((v) => v.startsWith(${JSON.stringify(`${key}=`)})) ?? '').slice(${key.length + 1})`;
}

/** The signed timestamp's text, as the sender put it. */
function timestampText(description: SigningDescription, source: TimestampSource): string {
	if (source.from === 'header') return headerExpression(source.header);
	if (source.from === 'signature') {
		const format = description.signature;
		return signatureField(
			description,
			format.format === 'fields' ? (format.timestampKey ?? '') : '',
		);
	}
	const path = source.path.map((step) => `?.[${JSON.stringify(step)}]`).join('');
	return `String($('${WEBHOOK_NODE}').first().json.body${path} ?? '')`;
}

/** The timestamp in seconds, from its text and unit (NaN when it is not in that form). */
function timestampSecondsExpression(text: string, source: TimestampSource): string {
	if (source.unit === 'iso8601') return `Date.parse(${text}) / 1000`;
	const divisor = source.unit === 'milliseconds' ? ' / 1000' : '';
	return `((t) => (/^\\d{1,18}$/.test(t) ? Number(t)${divisor} : NaN))(${text})`;
}

/** The signed text for the Crypto node, from the description's template; undefined: not expressible. */
function signedText(
	description: SigningDescription,
	parts: readonly ContentPart[],
): string | undefined {
	const pieces: string[] = [];
	for (const part of parts) {
		if (part.kind === 'form') return undefined;
		if (part.kind === 'literal') pieces.push(JSON.stringify(part.text));
		else if (part.kind === 'body') pieces.push(BODY_TEXT);
		else if (part.kind === 'header') pieces.push(headerExpression(part.name));
		else if (part.kind === 'url') pieces.push(URL_EXPRESSION);
		else if (description.timestamp === undefined) return undefined;
		else pieces.push(timestampText(description, description.timestamp));
	}
	return pieces.join(' + ');
}

/**
 * The one place that says whether a sender signs its event id, read from the provider table: an id
 * in the body is signed when the body is; an id in headers is signed only when the scheme's signed
 * content holds those headers (Standard Webhooks and Svix sign `webhook-id` / `svix-id`; GitHub and
 * Shopify sign the body alone).
 */
export function senderSignsEventId(provider: ProviderDefinition): boolean {
	// A shared secret signs nothing, the event id included.
	if (!isSigned(provider)) return false;
	const parts = parseSigns(provider.signing.signs);
	// No id: the key is the body hash, signed whenever the body is.
	if (provider.eventId.kind === 'body' || provider.eventId.kind === 'none')
		return parts.some((part) => part.kind === 'body' || part.kind === 'form');
	const signed = new Set(
		parts.flatMap((part) => (part.kind === 'header' ? [part.name.toLowerCase()] : [])),
	);
	return provider.eventId.names.every((name) => signed.has(name.toLowerCase()));
}

const BASE64_SECRET_REASON =
	"its signing key is bytes given as base64 (whsec_… or plain base64). The Crypto node's HMAC secret is a text in a Crypto credential, used as its UTF-8 bytes, and most decoded keys are not valid UTF-8, so no text gives the same key. A Code node could decode it (n8n documents crypto as available in the Code node on n8n Cloud), but a Code node has no credentials: the secret would sit in the workflow's code, exported and shown with it. Use the package's Idempotency Reserve on a self-hosted n8n for this provider.";
const KEY_PAIR_REASON =
	"it signs with a key pair, and n8n's Crypto node computes hashes and HMACs but does not check public-key signatures. Use the package's Verify Webhook Signature on a self-hosted n8n for this provider.";
const RENEWED_FORM_REASON =
	"it renews fields inside its signed body on each retry and also posts forms: the replay guard's digest leaves those fields out of the parsed body, which an n8n expression can do for JSON but not for a form read exactly as signed. Use the package on a self-hosted n8n for this provider.";
const FORM_REASON =
	'it signs its form parameters sorted by name, which n8n expressions cannot rebuild byte for byte from the parsed form. Use the package on a self-hosted n8n for this provider.';

/**
 * Why a shared secret is not checked with built-in nodes: the comparison would be an If node's, and
 * an If node reads no credential.
 */
function sharedSecretReason(description: SharedSecretDescription): string {
	const where = secretPlace(description.sharedSecret);
	const headerAuth =
		description.sharedSecret.in === 'header'
			? ` For a header, the Webhook node's own Header Auth (an n8n credential) does this check: set its Name to ${where} and its Value to the secret.`
			: '';
	return `it proves itself with a shared secret (${where}), not a signature. The check is an equality, which an If node could express, but an If node reads no credential: the secret would be written into the workflow, exported and shown with it, and compared in time that depends on where it differs.${headerAuth} Use the package's Verify Webhook Signature on a self-hosted n8n for the constant-time check.`;
}

/** What the built-in path does for one provider of the table. */
export function builtInSupport(provider: ProviderDefinition): SignatureSupport {
	const refuse = (cause: string): SignatureSupport => ({
		supported: false,
		provider: provider.value,
		label: provider.label,
		reason: `${provider.label} cannot be checked with built-in nodes: ${cause}`,
		cause,
	});
	if (!isVerifiable(provider)) return refuse((provider.signing as Unverifiable).unverifiable);
	if (isSharedSecret(provider.signing)) return refuse(sharedSecretReason(provider.signing));
	const description = provider.signing;
	if (description.algorithm === 'ed25519' || description.algorithm === 'ecdsaP256')
		return refuse(KEY_PAIR_REASON);
	if (description.secret !== 'text') return refuse(BASE64_SECRET_REASON);
	const parts = parseSigns(description.signs);
	const text = description.signs === '{body}' ? undefined : signedText(description, parts);
	if (description.signs !== '{body}' && text === undefined) return refuse(FORM_REASON);
	const signatures = description.signatureHeaders
		.map((name) => signaturesIn(headerExpression(name), description))
		.join(', ');
	const timestamp = description.timestamp;
	const renewed = perAttemptPaths(description, provider.retry?.renewedBodyFields);
	if (renewed.length > 0 && provider.contentTypes.some((type) => type !== JSON_MEDIA_TYPE))
		return refuse(RENEWED_FORM_REASON);
	const content = signedContentExpression(parts, renewed);
	return {
		supported: true,
		signature: {
			provider: provider.value as ProviderValue,
			label: provider.label,
			algorithm: CRYPTO_TYPES[description.algorithm],
			input: text === undefined ? { kind: 'binary' } : { kind: 'text', expression: text },
			encoding: description.encoding,
			signatures:
				description.signatureHeaders.length === 1 ? signatures : `[].concat(${signatures})`,
			...(timestamp
				? {
						timestamp: timestampSecondsExpression(timestampText(description, timestamp), timestamp),
					}
				: {}),
			signsEventId: senderSignsEventId(provider),
			signedHeaders: parts.flatMap((part) =>
				part.kind === 'header' ? [part.name.toLowerCase()] : [],
			),
			contentTypes: provider.contentTypes,
			digest:
				content === undefined
					? { kind: 'rawBody' }
					: { kind: 'signedContent', expression: content },
			...(parts.some((part) => part.kind === 'url') ? { queryIsText: QUERY_IS_TEXT } : {}),
		},
	};
}

/** Every provider of the table, with what the built-in path does for it. */
export const BUILT_IN_SIGNATURES: readonly SignatureSupport[] = PROVIDERS.map(builtInSupport);

/** What the built-in path does for this provider value (undefined: not a provider of the table). */
export function builtInSignatureOf(provider: string): SignatureSupport | undefined {
	return BUILT_IN_SIGNATURES.find((support) =>
		support.supported ? support.signature.provider === provider : support.provider === provider,
	);
}
