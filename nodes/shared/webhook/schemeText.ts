import type { SignatureFormat, SigningAlgorithm, SigningDescription } from './schemeTypes';

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

/** One line: the header and its shape, the algorithm, the encoding and what is signed. */
export function describeSigning(description: SigningDescription): string {
	const [header] = description.signatureHeaders;
	return `${header}: ${signatureShape(description.signature)} (${ALGORITHM_NAMES[description.algorithm]} ${description.encoding} of ${description.signs})`;
}
