/** What one header of a webhook item holds, as far as a signature check is concerned. */
export type HeaderValue =
	| { kind: 'missing' }
	| { kind: 'value'; value: string }
	| { kind: 'ambiguous' };

const MISSING: HeaderValue = { kind: 'missing' };
const AMBIGUOUS: HeaderValue = { kind: 'ambiguous' };

/**
 * Reads a header from the Webhook node's `$json.headers`, whatever the case of its name (Express
 * lower-cases names; items built by hand or by other triggers may not). A header that appears
 * under two spellings, or as an array, is ambiguous: a signature check must not pick one of the
 * copies, since the sender signed only one of them.
 */
export function readSignatureHeader(headers: unknown, name: string): HeaderValue {
	if (headers === null || typeof headers !== 'object') return MISSING;
	const wanted = name.toLowerCase();
	const matches = Object.keys(headers).filter((key) => key.toLowerCase() === wanted);
	if (matches.length === 0) return MISSING;
	if (matches.length > 1) return AMBIGUOUS;
	const value = (headers as Record<string, unknown>)[matches[0]];
	if (value === undefined || value === null || value === '') return MISSING;
	if (typeof value === 'number') return { kind: 'value', value: String(value) };
	if (typeof value !== 'string') return AMBIGUOUS;
	return { kind: 'value', value };
}
