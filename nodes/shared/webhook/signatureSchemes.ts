import type { HeaderValue } from './headers';

/**
 * How each webhook sender signs its deliveries: one entry per provider, so adding a provider is
 * adding one entry. Every scheme here signs "<prefix><raw body>" with an HMAC, where the prefix is
 * built from headers (Stripe's `t`, Standard Webhooks' id and timestamp, Slack's timestamp) or is
 * empty (GitHub, Shopify). This module only reads headers; verifySignature.ts does the crypto.
 */

/** Values are stored in workflows: never rename them. */
export type Provider =
	| 'stripe'
	| 'github'
	| 'shopify'
	| 'standardWebhooks'
	| 'svix'
	| 'slack'
	| 'hmac';
export type HmacAlgorithm = 'sha256' | 'sha512' | 'sha1';
export type SignatureEncoding = 'hex' | 'base64';
/** How the credential's secret becomes the HMAC key: the text as it is, or `whsec_<base64>` decoded. */
export type SecretFormat = 'text' | 'whsecBase64';

export type InvalidReason =
	| 'missing_header'
	| 'malformed'
	| 'timestamp_out_of_tolerance'
	| 'mismatch';

/** What a request's headers say about its signature, before any crypto. */
export interface SignedRequest {
	/** Every signature the sender sent (Stripe and Standard Webhooks send several during secret rotation), still encoded. */
	signatures: string[];
	/** Signed before the raw body. */
	prefix: string;
	/** Seconds since the epoch, for schemes with a timestamp. */
	timestamp?: number;
}

export type ReadResult = SignedRequest | { invalid: 'missing_header' | 'malformed' };

export type HeaderLookup = (name: string) => HeaderValue;

export interface SignatureScheme {
	label: string;
	/** The headers it reads, as the sender spells them (shown in the node's option descriptions). */
	headers: readonly string[];
	algorithm: HmacAlgorithm;
	encoding: SignatureEncoding;
	secretFormat: SecretFormat;
	/** Whether the signed content carries a timestamp, checked against the tolerance. */
	hasTimestamp: boolean;
	read: (header: HeaderLookup) => ReadResult;
}

const MALFORMED = { invalid: 'malformed' } as const;
const MISSING = { invalid: 'missing_header' } as const;

/** Whole seconds as decimal digits; anything else (a joined header "1, 2", a fraction) is malformed. */
function seconds(text: string): number | undefined {
	return /^\d{1,15}$/.test(text) ? Number(text) : undefined;
}

/** Reads every named header, or says which problem comes first (missing before malformed). */
function readAll(
	header: HeaderLookup,
	names: readonly string[],
): string[] | { invalid: 'missing_header' | 'malformed' } {
	const values = names.map(header);
	if (values.some((value) => value.kind === 'missing')) return MISSING;
	if (values.some((value) => value.kind === 'ambiguous')) return MALFORMED;
	return values.map((value) => (value as { value: string }).value);
}

/**
 * `t=<seconds>,v1=<hex>[,v1=<hex>…]`. `v0` and unknown schemes are ignored, as Stripe's library
 * does. A second `t` (a header sent twice and joined by the HTTP layer) makes the header malformed.
 */
function readStripe(header: HeaderLookup): ReadResult {
	const values = readAll(header, ['stripe-signature']);
	if (!Array.isArray(values)) return values;
	let timestamp: number | undefined;
	let timestamps = 0;
	const signatures: string[] = [];
	for (const part of values[0].split(',')) {
		const equals = part.indexOf('=');
		if (equals < 1) return MALFORMED;
		const key = part.slice(0, equals).trim();
		const value = part.slice(equals + 1).trim();
		if (key === 't') {
			timestamps++;
			timestamp = seconds(value);
		} else if (key === 'v1') signatures.push(value);
	}
	if (timestamps !== 1 || timestamp === undefined || signatures.length === 0) return MALFORMED;
	return { signatures, prefix: `${timestamp}.`, timestamp };
}

/** One header, the signature alone or after a fixed prefix such as `sha256=`. */
function readSingle(name: string, signaturePrefix: string, header: HeaderLookup): ReadResult {
	const values = readAll(header, [name]);
	if (!Array.isArray(values)) return values;
	const value = values[0];
	if (!value.startsWith(signaturePrefix)) return MALFORMED;
	return { signatures: [value.slice(signaturePrefix.length)], prefix: '' };
}

/**
 * Standard Webhooks (and Svix, its origin, with `svix-` headers): `<p>-signature` is a
 * space-separated list of `<version>,<signature>`; `v1` is HMAC-SHA256, others (`v1a` = ed25519)
 * are skipped as the reference library does. Signed content: `<id>.<timestamp>.<raw body>`.
 */
function readStandardWebhooks(headerPrefix: string) {
	return (header: HeaderLookup): ReadResult => {
		const values = readAll(header, [
			`${headerPrefix}-id`,
			`${headerPrefix}-timestamp`,
			`${headerPrefix}-signature`,
		]);
		if (!Array.isArray(values)) return values;
		const [id, timestampText, list] = values;
		const timestamp = seconds(timestampText);
		if (timestamp === undefined) return MALFORMED;
		const signatures: string[] = [];
		for (const entry of list.split(' ').filter((part) => part !== '')) {
			const comma = entry.indexOf(',');
			if (comma < 1) return MALFORMED;
			if (entry.slice(0, comma) === 'v1') signatures.push(entry.slice(comma + 1));
		}
		if (signatures.length === 0) return MALFORMED;
		return { signatures, prefix: `${id}.${timestamp}.`, timestamp };
	};
}

/** `X-Slack-Signature: v0=<hex>` over `v0:<X-Slack-Request-Timestamp>:<raw body>`. */
function readSlack(header: HeaderLookup): ReadResult {
	const values = readAll(header, ['x-slack-signature', 'x-slack-request-timestamp']);
	if (!Array.isArray(values)) return values;
	const [signature, timestampText] = values;
	const timestamp = seconds(timestampText);
	if (timestamp === undefined || !signature.startsWith('v0=')) return MALFORMED;
	// The header's text, as Slack's documented base string uses it (Stripe's and Standard Webhooks'
	// libraries sign the parsed number instead; for digits without leading zeros they agree).
	return { signatures: [signature.slice(3)], prefix: `v0:${timestampText}:`, timestamp };
}

export const SIGNATURE_SCHEMES: Readonly<Record<Exclude<Provider, 'hmac'>, SignatureScheme>> = {
	stripe: {
		label: 'Stripe',
		headers: ['Stripe-Signature'],
		algorithm: 'sha256',
		encoding: 'hex',
		secretFormat: 'text',
		hasTimestamp: true,
		read: readStripe,
	},
	github: {
		label: 'GitHub',
		headers: ['X-Hub-Signature-256'],
		algorithm: 'sha256',
		encoding: 'hex',
		secretFormat: 'text',
		hasTimestamp: false,
		read: (header) => readSingle('x-hub-signature-256', 'sha256=', header),
	},
	shopify: {
		label: 'Shopify',
		headers: ['X-Shopify-Hmac-Sha256'],
		algorithm: 'sha256',
		encoding: 'base64',
		secretFormat: 'text',
		hasTimestamp: false,
		read: (header) => readSingle('x-shopify-hmac-sha256', '', header),
	},
	standardWebhooks: {
		label: 'Standard Webhooks',
		headers: ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
		algorithm: 'sha256',
		encoding: 'base64',
		secretFormat: 'whsecBase64',
		hasTimestamp: true,
		read: readStandardWebhooks('webhook'),
	},
	svix: {
		label: 'Svix',
		headers: ['svix-id', 'svix-timestamp', 'svix-signature'],
		algorithm: 'sha256',
		encoding: 'base64',
		secretFormat: 'whsecBase64',
		hasTimestamp: true,
		read: readStandardWebhooks('svix'),
	},
	slack: {
		label: 'Slack',
		headers: ['X-Slack-Signature', 'X-Slack-Request-Timestamp'],
		algorithm: 'sha256',
		encoding: 'hex',
		secretFormat: 'text',
		hasTimestamp: true,
		read: readSlack,
	},
};

/** The generic scheme's settings (node parameters). */
export interface HmacSettings {
	header: string;
	algorithm: HmacAlgorithm;
	encoding: SignatureEncoding;
	/** Text before the signature in the header, e.g. `sha256=`; empty for none. */
	signaturePrefix: string;
	/** When set, this header's value (whole seconds) is signed as `<timestamp>.<raw body>` and checked against the tolerance. */
	timestampHeader: string;
}

/** Generic HMAC: `<header>: <prefix><signature>` over the raw body, or over `<timestamp>.<raw body>` with a timestamp header. */
export function hmacScheme(settings: HmacSettings): SignatureScheme {
	const timestampHeader = settings.timestampHeader.trim();
	const signatureHeader = settings.header.trim();
	return {
		label: 'Generic HMAC',
		headers: timestampHeader ? [signatureHeader, timestampHeader] : [signatureHeader],
		algorithm: settings.algorithm,
		encoding: settings.encoding,
		secretFormat: 'text',
		hasTimestamp: timestampHeader !== '',
		read: (header) => {
			const single = readSingle(signatureHeader, settings.signaturePrefix, header);
			if (!timestampHeader || 'invalid' in single) return single;
			const values = readAll(header, [timestampHeader]);
			if (!Array.isArray(values)) return values;
			const timestamp = seconds(values[0]);
			if (timestamp === undefined) return MALFORMED;
			return { ...single, prefix: `${values[0]}.`, timestamp };
		},
	};
}

export const PROVIDER_OPTIONS: ReadonlyArray<{ value: Provider; label: string }> = [
	...(Object.entries(SIGNATURE_SCHEMES) as Array<[Provider, SignatureScheme]>).map(
		([value, scheme]) => ({ value, label: scheme.label }),
	),
	{ value: 'hmac', label: 'Generic HMAC' },
];
