import type { HeaderLookup, ReadResult } from './schemeTypes';

/**
 * Reading a signature from a request's headers, before any crypto: the generic readers (one header,
 * several headers, whole seconds) and the readers of each provider's own header format. The provider
 * table (providers.ts) names a reader per provider; Generic HMAC (signatureSchemes.ts) builds one from
 * the generic readers.
 */

export const MALFORMED = { invalid: 'malformed' } as const;
const MISSING = { invalid: 'missing_header' } as const;

/** Whole seconds as decimal digits; anything else (a joined header "1, 2", a fraction) is malformed. */
export function seconds(text: string): number | undefined {
	return /^\d{1,15}$/.test(text) ? Number(text) : undefined;
}

/** Reads every named header, or says which problem comes first (missing before malformed). */
export function readAll(
	header: HeaderLookup,
	names: readonly string[],
): string[] | { invalid: 'missing_header' | 'malformed' } {
	const values = names.map(header);
	if (values.some((value) => value.kind === 'missing')) return MISSING;
	if (values.some((value) => value.kind === 'ambiguous')) return MALFORMED;
	return values.map((value) => (value as { value: string }).value);
}

/**
 * `t=<seconds>,v1=<hex>[,v1=<hex>…]`. `v0` and unknown schemes are ignored, as Stripe's library
 * does. A second `t` (a header sent twice and joined by the HTTP layer) makes the header malformed.
 */
export function readStripe(header: HeaderLookup): ReadResult {
	const values = readAll(header, ['stripe-signature']);
	if (!Array.isArray(values)) return values;
	let timestamp: number | undefined;
	let timestamps = 0;
	const signatures: string[] = [];
	for (const part of values[0].split(',')) {
		const equals = part.indexOf('=');
		if (equals < 1) return MALFORMED;
		const key = part.slice(0, equals).trim();
		const value = part.slice(equals + 1).trim();
		if (key === 't') {
			timestamps++;
			timestamp = seconds(value);
		} else if (key === 'v1') signatures.push(value);
	}
	if (timestamps !== 1 || timestamp === undefined || signatures.length === 0) return MALFORMED;
	return { signatures, prefix: `${timestamp}.`, timestamp };
}

/** One header, the signature alone or after a fixed prefix such as `sha256=`. */
export function readSingle(
	name: string,
	signaturePrefix: string,
	header: HeaderLookup,
): ReadResult {
	const values = readAll(header, [name]);
	if (!Array.isArray(values)) return values;
	const value = values[0];
	if (!value.startsWith(signaturePrefix)) return MALFORMED;
	return { signatures: [value.slice(signaturePrefix.length)], prefix: '' };
}

/**
 * Standard Webhooks (and Svix, its origin, with `svix-` headers): `<p>-signature` is a
 * space-separated list of `<version>,<signature>`; `v1` is HMAC-SHA256, others (`v1a` = ed25519)
 * are skipped as the reference library does. Signed content: `<id>.<timestamp>.<raw body>`.
 */
export function readStandardWebhooks(headerPrefix: string) {
	return (header: HeaderLookup): ReadResult => {
		const values = readAll(header, [
			`${headerPrefix}-id`,
			`${headerPrefix}-timestamp`,
			`${headerPrefix}-signature`,
		]);
		if (!Array.isArray(values)) return values;
		const [id, timestampText, list] = values;
		const timestamp = seconds(timestampText);
		if (timestamp === undefined) return MALFORMED;
		const signatures: string[] = [];
		for (const entry of list.split(' ').filter((part) => part !== '')) {
			const comma = entry.indexOf(',');
			if (comma < 1) return MALFORMED;
			if (entry.slice(0, comma) === 'v1') signatures.push(entry.slice(comma + 1));
		}
		if (signatures.length === 0) return MALFORMED;
		return { signatures, prefix: `${id}.${timestamp}.`, timestamp };
	};
}

/** `X-Slack-Signature: v0=<hex>` over `v0:<X-Slack-Request-Timestamp>:<raw body>`. */
export function readSlack(header: HeaderLookup): ReadResult {
	const values = readAll(header, ['x-slack-signature', 'x-slack-request-timestamp']);
	if (!Array.isArray(values)) return values;
	const [signature, timestampText] = values;
	const timestamp = seconds(timestampText);
	if (timestamp === undefined || !signature.startsWith('v0=')) return MALFORMED;
	// The header's text, as Slack's documented base string uses it (Stripe's and Standard Webhooks'
	// libraries sign the parsed number instead; for digits without leading zeros they agree).
	return { signatures: [signature.slice(3)], prefix: `v0:${timestampText}:`, timestamp };
}
