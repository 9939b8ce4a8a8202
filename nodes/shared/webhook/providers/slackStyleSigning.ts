import type { SigningDescription } from '../schemeTypes';

/**
 * Slack's scheme, which Zoom copied: `<signature header>: v0=<hex>`, HMAC-SHA256 over
 * `v0:<timestamp>:<body>` with the secret's text, the timestamp header's text (seconds) as sent.
 * Only the two header names differ.
 */
export function slackStyleSigning(signatureHeader: string, timestampHeader: string) {
	return {
		algorithm: 'sha256',
		encoding: 'hex',
		secret: 'text',
		signatureHeaders: [signatureHeader],
		signature: { format: 'whole', prefix: 'v0=' },
		signs: 'v0:{timestamp}:{body}',
		timestamp: { from: 'header', header: timestampHeader, unit: 'seconds' },
		toleranceSeconds: 300,
	} as const satisfies SigningDescription;
}
