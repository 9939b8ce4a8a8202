import {
	isSharedSecret,
	type SecretLocation,
	type SignatureFormat,
	type SigningAlgorithm,
	type VerificationDescription,
} from './schemeTypes';

/**
 * A signing description in words, for the node panel's option lines, the planner and
 * docs/signatures.md: written from the description, so no entry repeats it by hand.
 */

export const ALGORITHM_NAMES: Readonly<Record<SigningAlgorithm, string>> = {
	sha1: 'HMAC-SHA1',
	sha256: 'HMAC-SHA256',
	sha512: 'HMAC-SHA512',
	ed25519: 'Ed25519',
	ecdsaP256: 'ECDSA P-256 (SHA-256)',
};

/** How the signature is written in its header: `t=…,v1=…`, `sha256=…`, `v1,…`, `…`. */
export function signatureShape(format: SignatureFormat): string {
	if (format.format === 'whole') return `${format.prefix ?? ''}…`;
	if (format.format === 'versions') return `${format.version},…`;
	const signature = `${format.signatureKey}=…`;
	return format.timestampKey === undefined
		? signature
		: `${format.timestampKey}=…${format.separator}${signature}`;
}

/** Where a shared secret is: `Authorization` or `value[].clientState`. */
export function secretPlace(location: SecretLocation): string {
	return location.in === 'header'
		? location.header
		: `${location.array.join('.')}[].${location.field}`;
}

/** What a shared secret does not protect, in one sentence: the same for every such sender. */
export const SHARED_SECRET_LIMITS =
	"nothing is signed: whoever sees one delivery holds the secret and can forge others, and the body is not integrity-protected, so read the resource from the sender's API before acting on it";

/**
 * One line: the header and its shape, the algorithm, the encoding and what is signed; for a shared
 * secret, where it is and that nothing is signed.
 */
export function describeSigning(description: VerificationDescription): string {
	if (isSharedSecret(description))
		return `${secretPlace(description.sharedSecret)} equals the secret (shared secret, constant-time compare; nothing signed)`;
	const [header] = description.signatureHeaders;
	return `${header}: ${signatureShape(description.signature)} (${ALGORITHM_NAMES[description.algorithm]} ${description.encoding} of ${description.signs})`;
}
