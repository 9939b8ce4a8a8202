import type { SigningDescription } from '../schemeTypes';

/**
 * The `X-Hub-Signature-256: sha256=<hex>` scheme over the raw body, with no timestamp: GitHub's,
 * and Meta's for every Graph API webhook (WhatsApp, Messenger, Instagram). One description for both.
 */
export const hubSignatureSigning = {
	algorithm: 'sha256',
	encoding: 'hex',
	secret: 'text',
	signatureHeaders: ['X-Hub-Signature-256'],
	signature: { format: 'whole', prefix: 'sha256=' },
	signs: '{body}',
} as const satisfies SigningDescription;
