import type { INodeProperties } from 'n8n-workflow';

import { DEFAULT_MAX_RESPONSE_BYTES } from '../answers/storedResponse';

const whenStoring = { show: { storeResponse: [true] } };
// The same fields when only responding: n8n shows a property when all its conditions hold, so "storing
// or responding" is two copies of each field under one name, never shown together.
const whenOnlyResponding = { show: { storeResponse: [false], respondToWebhook: [true] } };

function answerFields(displayOptions: INodeProperties['displayOptions']): INodeProperties[] {
	return [
		{
			displayName: 'Response Status Code',
			name: 'responseStatusCode',
			type: 'number',
			default: 200,
			typeOptions: { minValue: 100, maxValue: 599 },
			displayOptions,
		},
		{
			displayName: 'Response Headers',
			name: 'responseHeaders',
			type: 'fixedCollection',
			typeOptions: { multipleValues: true },
			placeholder: 'Add header',
			default: {},
			description:
				'The headers of the answer (names in lower case), e.g. Content-Type. Without one, a JSON body is sent as JSON and other text as plain text.',
			displayOptions,
			options: [
				{
					name: 'entries',
					displayName: 'Header',
					values: [
						{ displayName: 'Name', name: 'name', type: 'string', default: '' },
						{ displayName: 'Value', name: 'value', type: 'string', default: '' },
					],
				},
			],
		},
		{
			displayName: 'Response Body',
			name: 'responseBody',
			type: 'string',
			default: '',
			typeOptions: { rows: 3 },
			description:
				'Text is answered and stored as it is, anything else as its JSON. A fixed body costs n8n no expression per execution.',
			displayOptions,
		},
	];
}

/**
 * Store Response and Respond to Webhook, for Complete Key and the exactly-once step: the answer this
 * execution gives, stored with the completion so every later duplicate can replay it
 * (idempotency.response), and sent to the webhook's caller once the completion is committed.
 */
export const responseProperties: INodeProperties[] = [
	{
		displayName: 'Store Response',
		name: 'storeResponse',
		type: 'boolean',
		default: false,
		description:
			'Whether to store the answer this execution gives with the completed key, so every later duplicate carries it as idempotency.response and can be answered the same (same status, same body)',
	},
	{
		displayName: 'Respond to Webhook',
		name: 'respondToWebhook',
		type: 'boolean',
		default: false,
		description:
			'Whether to answer the webhook call with this response once the key is completed, in place of a Respond to Webhook node. The Webhook node must respond "Using \'Respond to Webhook\' Node" (and keep one for its other branches). Nothing is sent when the completion fails.',
	},
	...answerFields(whenStoring),
	...answerFields(whenOnlyResponding),
	{
		displayName: 'Max Response Size (Bytes)',
		name: 'maxResponseBytes',
		type: 'number',
		default: DEFAULT_MAX_RESPONSE_BYTES,
		typeOptions: { minValue: 0 },
		description:
			'The largest body to store, in UTF-8 bytes. Bodies may hold personal data: store only what a replay needs.',
		displayOptions: whenStoring,
	},
	{
		displayName: 'When Too Large',
		name: 'whenTooLarge',
		type: 'options',
		default: 'error',
		options: [
			{
				name: 'Fail the Item',
				value: 'error',
				description: 'Nothing is stored and the key is not completed; the item fails',
			},
			{
				name: 'Store a Marker',
				value: 'marker',
				description:
					'Store the status and headers with body null and tooLarge: { bytes, limit }, never a cut body (the caller still gets the whole body)',
			},
		],
		displayOptions: whenStoring,
	},
];
