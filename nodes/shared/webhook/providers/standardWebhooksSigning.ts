import type { SigningDescription } from '../schemeTypes';

/**
 * Standard Webhooks' scheme, with its own header prefix (`webhook-`) or Svix's (`svix-`), where it
 * began: `<p>-signature: v1,<base64> …` over `<p>-id.<p>-timestamp.<body>`, secret `whsec_<base64>`.
 * `v1a` (ed25519) entries are skipped, as the reference library does. One description for the
 * standard, Svix, and every sender built on either (OpenAI, Replicate, Clerk, Resend).
 */
export function standardWebhooksSigning<Prefix extends 'webhook' | 'svix'>(prefix: Prefix) {
	return {
		algorithm: 'sha256',
		encoding: 'base64',
		secret: 'whsecBase64',
		signatureHeaders: [`${prefix}-signature`],
		signature: { format: 'versions', separator: ' ', version: 'v1' },
		signs: `{header:${prefix}-id}.{timestamp}.{body}`,
		timestamp: { from: 'header', header: `${prefix}-timestamp`, unit: 'seconds' },
		toleranceSeconds: 300,
	} as const satisfies SigningDescription;
}
