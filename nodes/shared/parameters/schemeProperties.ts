import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';
import { DEFAULT_PROVIDER } from '../webhook/providers/defaultProvider';

import {
	GENERIC_HMAC,
	PROVIDERS,
	signatureChoices,
	verifiableFrom,
	type ProviderDefinition,
} from '../webhook/providers';
import { describeSigning } from '../webhook/schemeText';
import {
	FORM_MEDIA_TYPE,
	JSON_MEDIA_TYPE,
	STRUCTURED_JSON,
	TEXT_MEDIA_TYPE,
} from '../webhook/signedParse';

/**
 * The schemes whose signed content may carry a timestamp, for the tolerance's display list: the
 * table's timestamped providers, then Generic HMAC (when its Timestamp Header is set).
 */
export function timestampedFrom<P extends ProviderDefinition>(providers: readonly P[]): string[] {
	return [
		...verifiableFrom(providers)
			.filter(({ signing }) => 'timestamp' in signing && signing.timestamp !== undefined)
			.map(({ value }) => value),
		GENERIC_HMAC.value,
	];
}

/**
 * The panel's options (Verify's Provider, Reserve's Verify Signature): one per provider of the table,
 * in its order (Stripe first, Generic HMAC last), not alphabetically, with its description.
 */
export function providerOptionsFrom(
	providers: readonly ProviderDefinition[],
): INodePropertyOptions[] {
	return signatureChoices(providers).map((choice) => ({
		name: choice.label,
		value: choice.value,
		description: 'signing' in choice ? describeSigning(choice.signing) : choice.description,
	}));
}

export const providerOptions: INodePropertyOptions[] = providerOptionsFrom(PROVIDERS);

/** Verify Webhook Signature's subtitle: the chosen provider's label. */
export function verifySubtitleFrom(providers: readonly ProviderDefinition[]): string {
	const labels = signatureChoices(providers)
		.map(({ value, label }) => `${JSON.stringify(value)}: ${JSON.stringify(label)}`)
		.join(', ');
	return `={{ {${labels}}[$parameter["provider"]] }}`;
}

export const verifySubtitle = verifySubtitleFrom(PROVIDERS);

/** Verify Webhook Signature's choice of the sender's signing scheme. */
export const providerProperty: INodeProperties = {
	displayName: 'Provider',
	name: 'provider',
	type: 'options',
	default: DEFAULT_PROVIDER,
	options: providerOptions,
	description:
		'Who signs the deliveries, which decides the headers and how the signed content is built',
};

/**
 * The settings that depend on the chosen scheme: Generic HMAC's header, algorithm and encoding,
 * its media types, and the tolerance of timestamped schemes. `control` is the parameter that holds
 * the scheme (Verify's `provider`, Reserve's `signature`); the parameter names are the same in both
 * nodes, so one setup reads them. `toleranceFromProviderSince`: the node version from which the
 * tolerance defaults to the provider's own. `providers` is the provider table (a parameter for the tests).
 */
export function schemeSettingProperties(
	control: string,
	toleranceFromProviderSince: number,
	providers: readonly ProviderDefinition[] = PROVIDERS,
): INodeProperties[] {
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
			displayName: 'Media Types',
			name: 'mediaTypes',
			type: 'multiOptions',
			default: [JSON_MEDIA_TYPE],
			options: [
				{ name: 'JSON', value: JSON_MEDIA_TYPE, description: 'The plain JSON media type only' },
				{
					name: 'Any +JSON Type',
					value: STRUCTURED_JSON,
					description:
						'Any media type with the RFC 6839 JSON suffix (CloudEvents, JSON:API, …), read as JSON',
				},
				{ name: 'Form (URL-Encoded)', value: FORM_MEDIA_TYPE },
				{
					name: 'Text',
					value: TEXT_MEDIA_TYPE,
					description: 'Plain text (text/plain): the body is the text',
				},
			],
			description:
				'The Content-Types the sender posts. A signed delivery under any other is refused (415, naming these): nobody signs the Content-Type, and n8n reads the body by it.',
			...showForHmac,
		},
		...toleranceProperties(control, providers, toleranceFromProviderSince),
	];
}

/**
 * Tolerance (Seconds). From `since` (Reserve 2.1, Verify 1.1) it defaults to 0, the provider's own
 * tolerance from the table (Paddle 5 s, Linear 60 s, Box 600 s); earlier versions keep 300, so a
 * saved node's window does not change under it.
 */
function toleranceProperties(
	control: string,
	providers: readonly ProviderDefinition[],
	since: number,
): INodeProperties[] {
	const shown = timestampedFrom(providers);
	return [
		{
			displayName: 'Tolerance (Seconds)',
			name: 'toleranceSeconds',
			type: 'number',
			default: 300,
			typeOptions: { minValue: 1 },
			description:
				"How far the signed timestamp may be from n8n's clock, in the past or the future. Older deliveries are refused as replays.",
			displayOptions: { show: { [control]: shown, '@version': [{ _cnd: { lt: since } }] } },
		},
		{
			displayName: 'Tolerance (Seconds)',
			name: 'toleranceSeconds',
			type: 'number',
			default: 0,
			typeOptions: { minValue: 0 },
			description:
				"How far the signed timestamp may be from n8n's clock, in the past or the future; older deliveries are refused as replays. 0: the provider's own (300 for most, Paddle 5, Linear 60, WorkOS 180, Box 600; 300 for Generic HMAC).",
			displayOptions: { show: { [control]: shown, '@version': [{ _cnd: { gte: since } }] } },
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
