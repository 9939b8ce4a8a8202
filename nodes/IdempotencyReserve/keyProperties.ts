import type { INodeProperties } from 'n8n-workflow';

export const keyProperties: INodeProperties[] = [
	{
		displayName: 'Key Source',
		name: 'keySource',
		type: 'options',
		noDataExpression: true,
		default: 'eventIdOrBodyHash',
		options: [
			{
				name: 'Body Hash Only',
				value: 'bodyHash',
				description: 'Key "sha256:" + SHA-256 of the raw request body',
			},
			{
				name: 'Custom',
				value: 'custom',
				description: 'Key is the Custom Key expression, used as it is (no prefix)',
			},
			{
				name: 'Event ID, Else Body Hash',
				value: 'eventIdOrBodyHash',
				description: 'Key "evt:" + the event ID; when it is empty, "sha256:" + SHA-256 of the raw body',
			},
			{
				name: 'GitHub',
				value: 'github',
				description: 'Key "evt:" + the X-GitHub-Delivery header, else the body hash',
			},
			{
				name: 'Shopify',
				value: 'shopify',
				description: 'Key "evt:" + the X-Shopify-Webhook-ID header, else the body hash',
			},
			{
				name: 'Standard Webhooks / Svix',
				value: 'standardWebhooks',
				description: 'Key "evt:" + the Webhook-ID header, else the body hash',
			},
			{
				name: 'Stripe',
				value: 'stripe',
				description: 'Key "evt:" + the event ID in the body (ID field), else the body hash',
			},
		],
	},
	{
		displayName: 'Event ID',
		name: 'eventId',
		type: 'string',
		default: '={{ $json.body.id }}',
		description: 'The ID that stays the same across retries of one event. When empty, the raw body is hashed instead.',
		displayOptions: { show: { keySource: ['eventIdOrBodyHash'] } },
	},
	{
		displayName: 'Custom Key',
		name: 'customKey',
		type: 'string',
		default: '',
		required: true,
		placeholder: '={{ $json.body.order_id }}',
		description: 'The whole key (text or number, at most 1,000 bytes)',
		displayOptions: { show: { keySource: ['custom'] } },
	},
	{
		displayName: 'Raw Body Property',
		name: 'rawBodyProperty',
		type: 'string',
		default: 'data',
		description:
			'Binary property holding the exact request bytes (Webhook node option "Raw Body"). Without it, the body is hashed as text (a text body) or as its JSON serialisation.',
		displayOptions: { hide: { keySource: ['custom'] } },
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [
			{
				displayName: 'Look Up First Seen Time',
				name: 'firstSeen',
				type: 'boolean',
				default: true,
				description:
					'Whether to add firstSeenAt (when the key was first reserved) to duplicates. It costs an index lookup per duplicate: turn it off for executions with thousands of items.',
			},
		],
	},
];
