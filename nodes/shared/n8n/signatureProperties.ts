import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import { PROVIDER_OPTIONS, SIGNATURE_SCHEMES, type Provider } from '../webhook/signatureSchemes';

const TIMESTAMPED: Provider[] = [...PROVIDER_OPTIONS.map((option) => option.value)].filter(
	(provider) =>
		provider === 'hmac' || SIGNATURE_SCHEMES[provider as Exclude<Provider, 'hmac'>].hasTimestamp,
);

const providerDescriptions: Record<Provider, string> = {
	stripe: 'Stripe-Signature: t=…,v1=… (HMAC-SHA256 hex of "t.body"; several v1 accepted)',
	github: 'X-Hub-Signature-256: sha256=… (HMAC-SHA256 hex of the body)',
	shopify: 'X-Shopify-Hmac-Sha256 (HMAC-SHA256 base64 of the body)',
	standardWebhooks: 'webhook-id, webhook-timestamp, webhook-signature: v1,… (secret whsec_…)',
	svix: 'svix-id, svix-timestamp, svix-signature: v1,… (secret whsec_…)',
	slack: 'X-Slack-Signature: v0=… over "v0:timestamp:body"',
	hmac: 'Any sender: choose the header, algorithm and encoding',
};

/** One option per entry of the scheme table, in its order (Stripe first, Generic HMAC last), not alphabetically. */
export const providerOptions: INodePropertyOptions[] = PROVIDER_OPTIONS.map(({ value, label }) => ({
	name: label,
	value,
	description: providerDescriptions[value],
}));

/** Verify Webhook Signature's choice of the sender's signing scheme. */
export const providerProperty: INodeProperties = {
	displayName: 'Provider',
	name: 'provider',
	type: 'options',
	default: 'stripe',
	options: providerOptions,
	description:
		'Who signs the deliveries, which decides the headers and how the signed content is built',
};

/**
 * The settings that depend on the chosen scheme: Generic HMAC's header, algorithm and encoding,
 * and the tolerance of timestamped schemes. `control` is the parameter that holds the scheme
 * (Verify's `provider`, Reserve's `signature`); the parameter names are the same in both nodes,
 * so one setup reads them.
 */
export function schemeSettingProperties(control: string): INodeProperties[] {
	const showForHmac = { displayOptions: { show: { [control]: ['hmac'] } } };
	return [
		{
			displayName: 'Signature Header',
			name: 'signatureHeader',
			type: 'string',
			default: 'X-Signature',
			required: true,
			description: 'Header that carries the signature (any case)',
			...showForHmac,
		},
		{
			displayName: 'Algorithm',
			name: 'algorithm',
			type: 'options',
			default: 'sha256',
			options: [
				{
					name: 'SHA-1',
					value: 'sha1',
					description: 'Only for senders that offer nothing stronger',
				},
				{ name: 'SHA-256', value: 'sha256' },
				{ name: 'SHA-512', value: 'sha512' },
			],
			description: 'Hash function of the HMAC',
			...showForHmac,
		},
		{
			displayName: 'Encoding',
			name: 'encoding',
			type: 'options',
			default: 'hex',
			options: [
				{ name: 'Hex', value: 'hex' },
				{ name: 'Base64', value: 'base64' },
			],
			description: 'How the signature is written in the header',
			...showForHmac,
		},
		{
			displayName: 'Signature Prefix',
			name: 'signaturePrefix',
			type: 'string',
			default: '',
			placeholder: 'sha256=',
			description: 'Text before the signature in the header, if any',
			...showForHmac,
		},
		{
			displayName: 'Timestamp Header',
			name: 'timestampHeader',
			type: 'string',
			default: '',
			placeholder: 'X-Timestamp',
			description:
				'Optional header with the send time in whole seconds since 1970. When set, the signed content is "timestamp.body" and the timestamp must be within the tolerance.',
			...showForHmac,
		},
		{
			displayName: 'Tolerance (Seconds)',
			name: 'toleranceSeconds',
			type: 'number',
			default: 300,
			typeOptions: { minValue: 1 },
			description:
				"How far the signed timestamp may be from n8n's clock, in the past or the future. Older deliveries are refused as replays.",
			displayOptions: { show: { [control]: TIMESTAMPED } },
		},
	];
}

export const rawBodyProperty: INodeProperties = {
	displayName: 'Raw Body Property',
	name: 'rawBodyProperty',
	type: 'string',
	default: 'data',
	required: true,
	description:
		'Binary property holding the exact request bytes (the Webhook node\'s "Raw Body" option puts them in "data")',
};
