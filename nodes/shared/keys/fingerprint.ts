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
