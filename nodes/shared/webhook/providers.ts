import { readSingle, readSlack, readStandardWebhooks, readStripe } from './signatureReaders';
import type { SignatureScheme } from './schemeTypes';

/**
 * Every webhook provider, defined once: where it puts the event id and how it signs. Idempotency
 * Reserve's Key Source presets (keys/keySourceTable.ts), the signature schemes and the provider list
 * (signatureSchemes.ts), the node panel's Provider and Verify Signature options, the tolerance's
 * display list and Verify Webhook Signature's subtitle (n8n/signatureProperties.ts) are all made from
 * this table, in its order, so adding a provider is adding one entry here.
 * Pure data and header readers: the key planner page bundles it.
 */

/** Where a provider puts the event id. Presets fall back to the body hash when it is missing or empty. */
export type EventIdLocation =
	/** A field of the JSON body (`$json.body`), by path. */
	| { kind: 'body'; path: readonly string[] }
	/** The first of these headers that has a value, in this order (names as providers write them). */
	| { kind: 'headers'; names: readonly string[] };

export interface ProviderDefinition {
	/** Stored in workflows (Key Source, Provider, Verify Signature): never rename one. */
	value: string;
	/** Its name everywhere: the options, both nodes' subtitles, the key planner. */
	label: string;
	/** Where the event id is: the Key Source preset of this provider reads it there. */
	eventId: EventIdLocation;
	/** How it signs; verifySignature.ts does the crypto. */
	signature: Omit<SignatureScheme, 'label'>;
	/** The line under its option in the node panel (Verify's Provider, Reserve's Verify Signature). */
	description: string;
}

export const PROVIDERS = [
	{
		value: 'stripe',
		label: 'Stripe',
		eventId: { kind: 'body', path: ['id'] },
		signature: {
			headers: ['Stripe-Signature'],
			algorithm: 'sha256',
			encoding: 'hex',
			secretFormat: 'text',
			hasTimestamp: true,
			// Its timestamp travels inside Stripe-Signature (t=…); no other header is signed.
			signedHeaders: [],
			read: readStripe,
		},
		description: 'Stripe-Signature: t=…,v1=… (HMAC-SHA256 hex of "t.body"; several v1 accepted)',
	},
	{
		value: 'github',
		label: 'GitHub',
		eventId: { kind: 'headers', names: ['X-GitHub-Delivery'] },
		signature: {
			headers: ['X-Hub-Signature-256'],
			algorithm: 'sha256',
			encoding: 'hex',
			secretFormat: 'text',
			hasTimestamp: false,
			signedHeaders: [],
			read: (header) => readSingle('x-hub-signature-256', 'sha256=', header),
		},
		description: 'X-Hub-Signature-256: sha256=… (HMAC-SHA256 hex of the body)',
	},
	{
		value: 'shopify',
		label: 'Shopify',
		// X-Shopify-Event-Id is one event across subscriptions (Shopify's advice for dropping duplicates); X-Shopify-Webhook-Id is per delivery.
		eventId: { kind: 'headers', names: ['X-Shopify-Event-Id', 'X-Shopify-Webhook-Id'] },
		signature: {
			headers: ['X-Shopify-Hmac-Sha256'],
			algorithm: 'sha256',
			encoding: 'base64',
			secretFormat: 'text',
			hasTimestamp: false,
			signedHeaders: [],
			read: (header) => readSingle('x-shopify-hmac-sha256', '', header),
		},
		description: 'X-Shopify-Hmac-Sha256 (HMAC-SHA256 base64 of the body)',
	},
	{
		value: 'standardWebhooks',
		label: 'Standard Webhooks',
		eventId: { kind: 'headers', names: ['webhook-id'] },
		signature: {
			headers: ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
			algorithm: 'sha256',
			encoding: 'base64',
			secretFormat: 'whsecBase64',
			hasTimestamp: true,
			signedHeaders: ['webhook-id', 'webhook-timestamp'],
			read: readStandardWebhooks('webhook'),
		},
		description: 'webhook-id, webhook-timestamp, webhook-signature: v1,… (secret whsec_…)',
	},
	{
		value: 'svix',
		label: 'Svix',
		eventId: { kind: 'headers', names: ['svix-id'] },
		signature: {
			headers: ['svix-id', 'svix-timestamp', 'svix-signature'],
			algorithm: 'sha256',
			encoding: 'base64',
			secretFormat: 'whsecBase64',
			hasTimestamp: true,
			signedHeaders: ['svix-id', 'svix-timestamp'],
			read: readStandardWebhooks('svix'),
		},
		description: 'svix-id, svix-timestamp, svix-signature: v1,… (secret whsec_…)',
	},
	{
		value: 'slack',
		label: 'Slack',
		eventId: { kind: 'body', path: ['event_id'] },
		signature: {
			headers: ['X-Slack-Signature', 'X-Slack-Request-Timestamp'],
			algorithm: 'sha256',
			encoding: 'hex',
			secretFormat: 'text',
			hasTimestamp: true,
			signedHeaders: ['X-Slack-Request-Timestamp'],
			read: readSlack,
		},
		description: 'X-Slack-Signature: v0=… over "v0:timestamp:body"',
	},
] as const satisfies readonly ProviderDefinition[];

/** A provider's value, as stored in workflows. */
export type ProviderValue = (typeof PROVIDERS)[number]['value'];

/**
 * Generic HMAC: a signature scheme only, not a provider (no event id, so no Key Source preset). Its
 * scheme is built from the node's settings (hmacScheme), may carry a timestamp, and is listed last.
 */
export const GENERIC_HMAC = {
	value: 'hmac',
	label: 'Generic HMAC',
	description: 'Any sender: choose the header, algorithm and encoding',
} as const;

/** Every choice of signature scheme, in the nodes' order: the providers as listed, Generic HMAC last. */
export function signatureChoices<P extends ProviderDefinition>(
	providers: readonly P[],
): ReadonlyArray<P | typeof GENERIC_HMAC> {
	return [...providers, GENERIC_HMAC];
}
