import { KeyError } from './KeyError';

/**
 * The pure part of Idempotency Reserve's request fingerprint (nodes/IdempotencyReserve/
 * deriveItemFingerprint.ts): what an Expression fingerprint hashes. No n8n and no Node.js here, so
 * the key planner page bundles the same rule and computes the fingerprint the node records.
 */

/** JSON with object keys sorted, so two objects with the same fields in another order match. */
export function canonicalJson(value: unknown): string {
	if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
	if (value !== null && typeof value === 'object') {
		const entries = Object.keys(value as object)
			.sort()
			.filter((name) => (value as Record<string, unknown>)[name] !== undefined)
			.map(
				(name) =>
					`${JSON.stringify(name)}:${canonicalJson((value as Record<string, unknown>)[name])}`,
			);
		return `{${entries.join(',')}}`;
	}
	return JSON.stringify(value) ?? 'null';
}

/**
 * The text whose SHA-256 (of its UTF-8 bytes, hex) is the fingerprint of an Expression value: text
 * as it is, any other value as its canonical JSON. Nothing, null or empty text: no fingerprint.
 */
export function expressionFingerprintText(value: unknown): string | undefined {
	if (value === undefined || value === null || value === '') return undefined;
	return typeof value === 'string' ? value : canonicalJson(value);
}

function describeEmpty(value: unknown): string {
	if (value === undefined) return 'missing';
	return value === null ? 'null' : 'empty text';
}

/**
 * The text an Expression fingerprint (Fingerprint Fields) hashes, which must be there: a request
 * without it (missing, null, empty text) is an item error the sender caused (400), never "no
 * fingerprint", which would match any later request with the same key and hand it the first one's
 * stored answer. An empty object or array is a value like any other: it is hashed and compared.
 */
export function requiredExpressionFingerprintText(value: unknown): string {
	const text = expressionFingerprintText(value);
	if (text !== undefined) return text;
	throw new KeyError(
		`The Fingerprint Fields are ${describeEmpty(value)} for this request, so it has no fingerprint to compare`,
		'Send the fields the fingerprint is made of with every request (answer 400 until then), or make Fingerprint Fields read fields every request has.',
		'invalid-fingerprint',
	);
}
