import type { INodeProperties } from 'n8n-workflow';

import {
	providerOptions,
	schemeSettingProperties,
} from '../../shared/parameters/signatureProperties';
import { PROVIDER_OPTIONS } from '../../shared/webhook/signatureSchemes';

/** Stored in workflows: never rename it. */
export const NO_SIGNATURE = 'none';

/** Every value of Verify Signature that checks one, so the signing credential is asked for exactly then. */
export const SIGNED = PROVIDER_OPTIONS.map((option) => option.value);

/**
 * Version 2 checks the sender's signature itself, before it reserves anything: one node for
 * "verify, then reserve", so a forged delivery never reserves a real event id and the template needs
 * no Verify Webhook Signature node in front of it.
 */
export const signatureProperties: INodeProperties[] = [
	{
		displayName: 'Verify Signature',
		name: 'signature',
		type: 'options',
		noDataExpression: true,
		default: NO_SIGNATURE,
		options: [
			{
				name: "Don't Verify",
				value: NO_SIGNATURE,
				description:
					'Reserve every delivery (for senders that do not sign, or when Verify Webhook Signature runs before this node)',
			},
			...providerOptions,
		],
		description:
			"The sender's signature is checked over the exact request bytes before anything is reserved: a forged or replayed delivery goes to the invalid signature output and reserves nothing",
		displayOptions: { show: { '@version': [2] } },
	},
	...schemeSettingProperties('signature'),
];
