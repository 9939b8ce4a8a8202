import type { INodeProperties } from 'n8n-workflow';

import { providerOptions, schemeSettingProperties } from '../../shared/parameters/schemeProperties';
import { PROVIDER_OPTIONS } from '../../shared/webhook/signatureSchemes';

/** Version 2.1: Tolerance defaults to 0, the provider's own (2 keeps 300 for saved nodes). */
const TOLERANCE_FROM_PROVIDER_SINCE = 2.1;

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
					'Reserve every delivery (for senders that do not sign, or when Verify Webhook Signature runs before this node: its verdict keeps the replay guard)',
			},
			...providerOptions,
		],
		description:
			"The sender's signature is checked over the exact request bytes before anything is reserved: a forged or replayed delivery goes to the invalid signature output and reserves nothing",
		displayOptions: { show: { '@version': [{ _cnd: { gte: 2 } }] } },
	},
	...schemeSettingProperties('signature', TOLERANCE_FROM_PROVIDER_SINCE),
];
