import { createHash, createHmac, createPublicKey, timingSafeEqual, verify } from 'crypto';

import { readSignatureHeader } from './headers';
import type {
	HmacAlgorithm,
	InvalidReason,
	SecretFormat,
	SignatureEncoding,
	SignatureScheme,
	SigningAlgorithm,
} from './schemeTypes';

export type Verification = { valid: true } | { valid: false; reason: InvalidReason };

/** A secret that cannot be turned into a key. Its message never contains the secret. */
export class SigningSecretError extends Error {}

/** Bytes of each HMAC and of an Ed25519 signature: a signature of another length is malformed. */
export const DIGEST_BYTES = { sha1: 20, sha256: 32, sha512: 64, ed25519: 64 } as const;
/** An ECDSA P-256 signature in DER: a SEQUENCE of two INTEGERs of up to 33 bytes each. */
const ECDSA_DER_BYTES = { min: 8, max: 72 } as const;
const HEX = /^(?:[0-9a-fA-F]{2})+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const WHSEC_PREFIX = 'whsec_';
/** DER of an Ed25519 SubjectPublicKeyInfo before its 32 raw key bytes (RFC 8410). */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export const isHmac = (algorithm: SigningAlgorithm): algorithm is HmacAlgorithm =>
	algorithm === 'sha1' || algorithm === 'sha256' || algorithm === 'sha512';

/** A signature or secret as written (hex or base64, strictly), or undefined when it is not. */
export function decode(text: string, encoding: SignatureEncoding): Buffer | undefined {
	if (text === '') return undefined;
	if (encoding === 'hex') return HEX.test(text) ? Buffer.from(text, 'hex') : undefined;
	return BASE64.test(text) ? Buffer.from(text, 'base64') : undefined;
}

/** Whether a decoded signature has a length its algorithm can produce. */
export function signatureLengthFits(algorithm: SigningAlgorithm, bytes: number): boolean {
	if (algorithm === 'ecdsaP256')
		return bytes >= ECDSA_DER_BYTES.min && bytes <= ECDSA_DER_BYTES.max;
	return bytes === DIGEST_BYTES[algorithm];
}

function publicKeyDer(der: Buffer, expected: 'ed25519' | 'ec', which: string): Buffer {
	let type: string | undefined;
	try {
		type = createPublicKey({ key: der, format: 'der', type: 'spki' }).asymmetricKeyType;
	} catch {
		type = undefined;
	}
	if (type !== expected)
		throw new SigningSecretError(
			`The ${which} is not an ${expected === 'ed25519' ? 'Ed25519' : 'ECDSA'} public key`,
		);
	return der;
}

/**
 * The key of one secret. HMAC senders mostly use the secret's text as it is (Stripe's `whsec_…`
 * included); Standard Webhooks and Svix base64-decode what follows `whsec_`; Airtable gives base64.
 * Key-pair senders give a public key: Discord 32 bytes as hex, SendGrid base64 DER; the key returned
 * is then the public key's DER (SubjectPublicKeyInfo).
 */
export function signingKey(secret: string, format: SecretFormat, which: string): Buffer {
	if (secret === '') throw new SigningSecretError(`The ${which} is empty`);
	if (format === 'text') return Buffer.from(secret, 'utf8');
	if (format === 'publicKeyHex') {
		const raw = decode(secret, 'hex');
		if (raw === undefined || raw.length !== 32)
			throw new SigningSecretError(`The ${which} is not an Ed25519 public key (64 hex digits)`);
		return publicKeyDer(Buffer.from([...ED25519_SPKI_PREFIX, ...raw]), 'ed25519', which);
	}
	if (format === 'publicKeyBase64') {
		const der = decode(secret.replace(/\s+/g, ''), 'base64');
		if (der === undefined)
			throw new SigningSecretError(`The ${which} is not a public key in base64 (DER)`);
		return publicKeyDer(der, 'ec', which);
	}
	const encoded =
		format === 'whsecBase64' && secret.startsWith(WHSEC_PREFIX)
			? secret.slice(WHSEC_PREFIX.length)
			: secret;
	const key = decode(encoded, 'base64');
	if (key === undefined) {
		throw new SigningSecretError(
			format === 'whsecBase64'
				? `The ${which} is not a Standard Webhooks secret (whsec_ followed by base64)`
				: `The ${which} is not base64`,
		);
	}
	return key;
}

/** The HMAC a sender holding `key` signs this content with. */
export function expectedSignature(
	algorithm: HmacAlgorithm,
	key: Uint8Array,
	content: Uint8Array,
): Buffer {
	return createHmac(algorithm, key).update(content).digest();
}

/** Whether one signature matches one key: an HMAC compared in constant time, or a public-key check. */
function matches(
	algorithm: SigningAlgorithm,
	key: Uint8Array,
	content: Uint8Array,
	signature: Buffer,
): boolean {
	if (isHmac(algorithm))
		return timingSafeEqual(expectedSignature(algorithm, key, content), signature);
	const publicKey = { key: Buffer.from(key), format: 'der', type: 'spki' } as const;
	try {
		return algorithm === 'ed25519'
			? verify(null, content, publicKey, signature)
			: verify('sha256', content, { ...publicKey, dsaEncoding: 'der' }, signature);
	} catch {
		// A signature OpenSSL cannot even parse (a DER that is not one) matches nothing.
		return false;
	}
}

/** Equal bytes, in time that depends on neither where they differ nor their lengths (digests of both). */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
	const digest = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest();
	return timingSafeEqual(digest(a), digest(b));
}

/**
 * A shared secret's verdict: every value the request carries (each of Graph's notifications, Okta's
 * one header) must equal one of the keys, compared in constant time. One wrong value refuses the
 * whole delivery: a forged notification slipped into a genuine batch is never half-trusted.
 */
function sharedSecretVerdict(values: readonly string[], keys: readonly Uint8Array[]): Verification {
	const encoder = new TextEncoder();
	let allMatch = values.length > 0;
	for (const value of values) {
		let matched = false;
		// Every comparison runs, so the time taken does not depend on which key matched.
		for (const key of keys) matched = sameBytes(encoder.encode(value), key) || matched;
		allMatch = matched && allMatch;
	}
	return allMatch ? { valid: true } : { valid: false, reason: 'mismatch' };
}

export interface VerifyOptions {
	nowSeconds: number;
	toleranceSeconds: number;
}

/** The request as a signature check sees it: the Webhook item's headers, the raw body, the URL. */
export interface VerifiedRequest {
	headers: unknown;
	body: Uint8Array;
	/** The URL the sender was given, for schemes that sign it (`{url}`). */
	url?: string;
}

/**
 * Checks a delivery's signature over its exact raw bytes (or a shared secret's values: every one
 * must equal a key; nothing else is checked, since nothing is signed) with each key (current secret, then the
 * previous one during a rotation). Every signature the headers carry must be well formed (a
 * truncated or doubled header is `malformed`, never half-trusted); one of them must match one key;
 * then the timestamp, if the scheme has one, must lie within the tolerance on either side of now (a
 * replay of an old delivery, or one dated in the future).
 */
export function verifySignature(
	scheme: SignatureScheme,
	request: VerifiedRequest,
	keys: readonly Uint8Array[],
	{ nowSeconds, toleranceSeconds }: VerifyOptions,
): Verification {
	const read = scheme.read({
		header: (name) => readSignatureHeader(request.headers, name),
		body: request.body,
		url: request.url,
	});
	if ('invalid' in read) return { valid: false, reason: read.invalid };
	if (scheme.kind === 'sharedSecret') return sharedSecretVerdict(read.signatures, keys);

	const signatures: Buffer[] = [];
	const { algorithm, encoding } = scheme;
	for (const text of read.signatures) {
		const signature = decode(text, encoding);
		if (signature === undefined || !signatureLengthFits(algorithm, signature.length))
			return { valid: false, reason: 'malformed' };
		signatures.push(signature);
	}

	let matched = false;
	for (const key of keys) {
		// Every comparison runs, so the time taken does not depend on which signature or key matched.
		for (const signature of signatures)
			matched = matches(algorithm, key, read.content, signature) || matched;
	}
	if (!matched) return { valid: false, reason: 'mismatch' };

	if (scheme.hasTimestamp && Math.abs(nowSeconds - (read.timestamp as number)) > toleranceSeconds) {
		return { valid: false, reason: 'timestamp_out_of_tolerance' };
	}
	return { valid: true };
}
