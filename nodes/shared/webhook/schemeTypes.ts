import type { HeaderValue } from './headers';

/**
 * The shape of a signature scheme, in a file of its own so the signing room imports one way: the
 * readers and the provider table use these types, signatureSchemes.ts builds the schemes from the
 * table, verifySignature.ts does the crypto.
 */

export type HmacAlgorithm = 'sha256' | 'sha512' | 'sha1';
export type SignatureEncoding = 'hex' | 'base64';
/** How the credential's secret becomes the HMAC key: the text as it is, or `whsec_<base64>` decoded. */
export type SecretFormat = 'text' | 'whsecBase64';

export type InvalidReason =
	| 'missing_header'
	| 'malformed'
	| 'timestamp_out_of_tolerance'
	| 'mismatch'
	/** The body the workflow reads is not the signed bytes (multipart, an upload): signedBody.ts. */
	| 'unsigned_body';

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
	/**
	 * The headers whose values are part of the signed content (a replayer cannot change them); every
	 * other header, the delivery id headers of GitHub and Shopify included, can be rewritten freely.
	 */
	signedHeaders: readonly string[];
	read: (header: HeaderLookup) => ReadResult;
}
