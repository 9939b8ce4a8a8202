import { createHmac, timingSafeEqual } from 'crypto';

import { readSignatureHeader } from './headers';
import type {
	HmacAlgorithm,
	InvalidReason,
	SecretFormat,
	SignatureEncoding,
	SignatureScheme,
} from './signatureSchemes';

export type Verification = { valid: true } | { valid: false; reason: InvalidReason };

/** A secret that cannot be turned into an HMAC key. Its message never contains the secret. */
export class SigningSecretError extends Error {}

/** Bytes of each algorithm's HMAC: a signature of another length is malformed. */
export const DIGEST_BYTES = { sha1: 20, sha256: 32, sha512: 64 } as const;
const HEX = /^(?:[0-9a-fA-F]{2})+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const WHSEC_PREFIX = 'whsec_';

/** A signature or secret as written (hex or base64, strictly), or undefined when it is not. */
export function decode(text: string, encoding: SignatureEncoding): Buffer | undefined {
	if (text === '') return undefined;
	if (encoding === 'hex') return HEX.test(text) ? Buffer.from(text, 'hex') : undefined;
	return BASE64.test(text) ? Buffer.from(text, 'base64') : undefined;
}

/**
 * The HMAC key of one secret. Stripe, GitHub, Shopify and Slack use the secret's text as it is
 * (Stripe's `whsec_…` included); Standard Webhooks and Svix base64-decode what follows `whsec_`.
 */
export function signingKey(secret: string, format: SecretFormat, which: string): Buffer {
	if (secret === '') throw new SigningSecretError(`The ${which} is empty`);
	if (format === 'text') return Buffer.from(secret, 'utf8');
	const encoded = secret.startsWith(WHSEC_PREFIX) ? secret.slice(WHSEC_PREFIX.length) : secret;
	const key = decode(encoded, 'base64');
	if (key === undefined) {
		throw new SigningSecretError(
			`The ${which} is not a Standard Webhooks secret (whsec_ followed by base64)`,
		);
	}
	return key;
}

/** The HMAC a sender holding `key` signs this request with: over the scheme's prefix, then the raw body. */
export function expectedSignature(
	algorithm: HmacAlgorithm,
	key: Uint8Array,
	prefix: string,
	rawBody: Uint8Array,
): Buffer {
	return createHmac(algorithm, key).update(prefix, 'utf8').update(rawBody).digest();
}

export interface VerifyOptions {
	nowSeconds: number;
	toleranceSeconds: number;
}

/**
 * Checks a delivery's signature over its exact raw bytes with each key (current secret, then the
 * previous one during a rotation). Every signature the header carries must be well formed (a
 * truncated or doubled header is `malformed`, never half-trusted); one of them must match one key,
 * compared in constant time; then the timestamp, if the scheme has one, must lie within the
 * tolerance on either side of now (a replay of an old delivery, or one dated in the future).
 */
export function verifySignature(
	scheme: SignatureScheme,
	headers: unknown,
	rawBody: Uint8Array,
	keys: readonly Uint8Array[],
	{ nowSeconds, toleranceSeconds }: VerifyOptions,
): Verification {
	const request = scheme.read((name) => readSignatureHeader(headers, name));
	if ('invalid' in request) return { valid: false, reason: request.invalid };

	const expectedLength = DIGEST_BYTES[scheme.algorithm];
	const signatures: Buffer[] = [];
	for (const text of request.signatures) {
		const signature = decode(text, scheme.encoding);
		if (signature === undefined || signature.length !== expectedLength)
			return { valid: false, reason: 'malformed' };
		signatures.push(signature);
	}

	let matched = false;
	for (const key of keys) {
		const expected = expectedSignature(scheme.algorithm, key, request.prefix, rawBody);
		// Every comparison runs, so the time taken does not depend on which signature or key matched.
		for (const signature of signatures) matched = timingSafeEqual(expected, signature) || matched;
	}
	if (!matched) return { valid: false, reason: 'mismatch' };

	if (
		scheme.hasTimestamp &&
		Math.abs(nowSeconds - (request.timestamp as number)) > toleranceSeconds
	) {
		return { valid: false, reason: 'timestamp_out_of_tolerance' };
	}
	return { valid: true };
}
