import type { INodeProperties } from 'n8n-workflow';

/** The Key and Token parameters of Complete Key and Release Key: what Idempotency Reserve output. */
export function ownedKeyProperties({ tokenRequired }: { tokenRequired: boolean }): INodeProperties[] {
	return [
		{
			displayName: 'Key',
			name: 'key',
			type: 'string',
			default: '={{ $json.idempotency.key }}',
			required: true,
			description:
				"The reserved key, as Idempotency Reserve output it (namespace included). After a business step, read it from the Idempotency Reserve node's output, as the template does.",
		},
		{
			displayName: 'Reservation',
			name: 'reservation',
			type: 'string',
			default: '={{ $json.idempotency.token }}',
			required: tokenRequired,
			description: tokenRequired
				? 'The token of the reservation (lease mode), as Idempotency Reserve output it. Only the execution that holds the key can complete it.'
				: 'The token of the reservation (lease mode): the key is released only while this reservation still holds it, so a late failure cannot free a key a retry took over. Leave empty to release whoever holds it.',
		},
	];
}
