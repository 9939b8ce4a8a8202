import type { HeaderValue } from './headers';
import {
	MALFORMED,
	readAll,
	readSingle,
	readSlack,
	readStandardWebhooks,
	readStripe,
	seconds,
} from './signatureReaders';

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
