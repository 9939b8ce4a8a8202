import type { HeaderValue } from './headers';

/**
 * How a webhook sender signs, as data. A provider's entry in the table (providers/) holds one
 * `SigningDescription`; schemeReader.ts turns it into a `SignatureScheme` (the header reader the
 * nodes run) and verifySignature.ts does the crypto. In a file of its own so the signing room imports
 * one way: types here, then readers, then the table, then the schemes made from it.
 */

export type HmacAlgorithm = 'sha256' | 'sha512' | 'sha1';
/** HMAC with a shared secret, or a public key: Ed25519 (Discord), ECDSA P-256 with SHA-256 (SendGrid). */
export type SigningAlgorithm = HmacAlgorithm | 'ed25519' | 'ecdsaP256';
export type SignatureEncoding = 'hex' | 'base64';

/**
 * How the credential's secret becomes the key. `text`: its UTF-8 bytes (most senders, Stripe's
 * `whsec_…` included); `whsecBase64`: `whsec_<base64>` decoded (Standard Webhooks, Svix); `base64`:
 * base64 decoded (Airtable); `publicKeyHex`: an Ed25519 public key, 32 bytes as hex (Discord);
 * `publicKeyBase64`: a public key as base64 DER (SubjectPublicKeyInfo), as SendGrid shows it.
 */
export type SecretFormat = 'text' | 'whsecBase64' | 'base64' | 'publicKeyHex' | 'publicKeyBase64';

/** How the signature is written in its header. */
export type SignatureFormat =
	/** The header's whole value, after an optional fixed prefix (`sha256=`, `v0=`). */
	| { format: 'whole'; prefix?: string }
	/**
	 * `key=value` fields: Stripe's `t=…,v1=…` (separator `,`), Paddle's `ts=…;h1=…` (`;`). Every field
	 * named `signatureKey` is a signature (several during a secret rotation); `timestampKey`, when set,
	 * must appear exactly once. Other fields are ignored.
	 */
	| {
			format: 'fields';
			separator: string;
			signatureKey: string;
			timestampKey?: string;
	  }
	/** Standard Webhooks' `v1,<sig> v1,<sig>`: entries split by `separator`, each `<version>,<sig>`; other versions skipped. */
	| { format: 'versions'; separator: string; version: string };

export type TimestampUnit = 'seconds' | 'milliseconds' | 'iso8601';

/** Where the signed timestamp is. Its text, as sent, is what `{timestamp}` puts in the signed content. */
export type TimestampSource =
	| { from: 'header'; header: string; unit: TimestampUnit }
	/** The `timestampKey` field of the signature header (Stripe's `t`, Paddle's `ts`). */
	| { from: 'signature'; unit: TimestampUnit }
	/** A field of the signed JSON body (Linear's `webhookTimestamp`): checked, never put in the content. */
	| { from: 'body'; path: readonly string[]; unit: TimestampUnit };

export interface SigningDescription {
	algorithm: SigningAlgorithm;
	encoding: SignatureEncoding;
	secret: SecretFormat;
	/**
	 * The headers carrying signatures, as the sender spells them. The first must be there; the others
	 * (Box's secondary signature) add signatures when present.
	 */
	signatureHeaders: readonly string[];
	signature: SignatureFormat;
	/**
	 * The signed content, in order: `{body}` (the raw bytes), `{timestamp}`, `{header:<Name>}`, `{url}`
	 * (the URL the sender was given: the item's webhookUrl), `{form}` (form parameters sorted by name,
	 * each name then value, as Twilio signs) and literal text. `{body}` or `{form}` appears once.
	 */
	signs: string;
	timestamp?: TimestampSource;
	/** Seconds the sender's own library allows either side of now; the nodes' default tolerance is 300. */
	toleranceSeconds?: number;
}

/**
 * Where a sender that signs nothing puts the shared secret it repeats in every delivery (Microsoft
 * Graph's clientState, Okta's authorization header). Proof that the sender knows the secret, nothing
 * more: no byte of the body is covered.
 */
export type SecretLocation =
	/** A header's whole value, compared as it is (Okta: the header the user named, Authorization by default). */
	| { in: 'header'; header: string }
	/**
	 * The text field `field` of every element of the body's JSON array at `array` (Graph's
	 * value[].clientState): every element must carry it; a missing or empty array is refused.
	 */
	| { in: 'bodyArray'; array: readonly string[]; field: string };

/**
 * A sender authenticated by a shared secret instead of a signature: the secret (the credential's
 * Secret, its text as it is) must equal the value at `sharedSecret`, compared in constant time.
 */
export interface SharedSecretDescription {
	sharedSecret: SecretLocation;
	/**
	 * What the secret does not protect, and what to do about it: said in docs/signatures.md and the
	 * node's option. Whoever sees one delivery holds the secret; the body is not integrity-protected.
	 */
	caveat: string;
}

/** Whatever proves a sender from the request alone: a signature, or a shared secret it repeats. */
export type VerificationDescription = SigningDescription | SharedSecretDescription;

export const isSharedSecret = (
	description: VerificationDescription,
): description is SharedSecretDescription => 'sharedSecret' in description;

export type InvalidReason =
	| 'missing_header'
	| 'malformed'
	| 'timestamp_out_of_tolerance'
	| 'mismatch'
	/** The body the workflow reads is not the signed bytes (multipart, an upload): signedBody.ts. */
	| 'unsigned_body';

/** What a request says about its signature, before any crypto. */
export interface SignedRequest {
	/** Every signature the sender sent (Stripe and Standard Webhooks send several during secret rotation), still encoded. */
	signatures: string[];
	/** The signed content, as built from the request: what verifySignature.ts signs or checks. */
	content: Uint8Array;
	/** Seconds since the epoch, for schemes with a timestamp. */
	timestamp?: number;
}

export type ReadResult = SignedRequest | { invalid: 'missing_header' | 'malformed' };

export type HeaderLookup = (name: string) => HeaderValue;

/** The parts of a request a signature can cover besides its headers. */
export interface RequestParts {
	header: HeaderLookup;
	body: Uint8Array;
	/** The URL the sender was given (the Webhook item's webhookUrl, with its query), for `{url}`. */
	url?: string;
}

/** What every runnable scheme has, signed or shared secret. */
interface SchemeBase {
	label: string;
	/** The headers it reads, as the sender spells them (shown in the node's option descriptions). */
	headers: readonly string[];
	secretFormat: SecretFormat;
	/** Whether a timestamp is checked against the tolerance. */
	hasTimestamp: boolean;
	/**
	 * The headers whose values are part of the signed content (a replayer cannot change them); every
	 * other header, the delivery id headers of GitHub and Shopify included, can be rewritten freely.
	 */
	signedHeaders: readonly string[];
	/** Whether the raw body is covered (`{body}` or `{form}`): a body field is then signed data. */
	signsBody: boolean;
	/** What is signed, as the description's template (`{timestamp}.{body}`): shown by the planner. */
	signs: string;
	/** Whether the signed content needs the request's URL (`{url}`). */
	needsUrl: boolean;
	/**
	 * A signature scheme: the signatures and the signed content. A shared-secret scheme: each secret
	 * value the request carries in `signatures` (every one must equal a key), the content empty.
	 */
	read: (request: RequestParts) => ReadResult;
}

/** A description made runnable (schemeReader.ts): what the nodes, the planner and the generator use. */
export interface SignedScheme extends SchemeBase {
	kind: 'signature';
	algorithm: SigningAlgorithm;
	encoding: SignatureEncoding;
}

/** A shared secret made runnable: nothing is signed (`signedHeaders` empty, `signsBody` false). */
export interface SharedSecretScheme extends SchemeBase {
	kind: 'sharedSecret';
	location: SecretLocation;
}

export type SignatureScheme = SignedScheme | SharedSecretScheme;
