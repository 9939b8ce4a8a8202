import type { SigningDescription, TimestampUnit } from '../schemeTypes';

/**
 * Stripe's scheme, which Mux and WorkOS copied: `<header>: t=<timestamp>,v1=<hex>` (several `v1`
 * during a rotation; `v0` and unknown fields skipped, as Stripe's library does), HMAC-SHA256 over
 * `<t>.<body>` with the secret's text. Only the header, the timestamp's unit and the tolerance differ.
 */
export function stripeStyleSigning(
	header: string,
	unit: TimestampUnit = 'seconds',
	toleranceSeconds = 300,
) {
	return {
		algorithm: 'sha256',
		encoding: 'hex',
		secret: 'text',
		signatureHeaders: [header],
		signature: { format: 'fields', separator: ',', signatureKey: 'v1', timestampKey: 't' },
		signs: '{timestamp}.{body}',
		timestamp: { from: 'signature', unit },
		toleranceSeconds,
	} as const satisfies SigningDescription;
}
