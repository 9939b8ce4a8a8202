import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import {
	DEFAULT_MAX_RESPONSE_BYTES,
	storedResponseOf,
	type ResponseSettings,
	type StoredResponse,
} from '../store/storedResponse';

const whenStoring = { show: { storeResponse: [true] } };

/**
 * Store Response, for Complete Key and the exactly-once step: the answer this execution is about
 * to give, stored with the completion so every later duplicate can replay it (idempotency.response).
 */
export const responseProperties: INodeProperties[] = [
	{
		displayName: 'Store Response',
		name: 'storeResponse',
		type: 'boolean',
		default: false,
		description:
			'Whether to store the answer this execution gives with the completed key, so every later duplicate carries it as idempotency.response and a Respond node can replay it (same status, same body)',
	},
	{
		displayName: 'Response Status Code',
		name: 'responseStatusCode',
		type: 'number',
		default: 200,
		typeOptions: { minValue: 100, maxValue: 599 },
		displayOptions: whenStoring,
	},
	{
		displayName: 'Response Headers',
		name: 'responseHeaders',
		type: 'fixedCollection',
		typeOptions: { multipleValues: true },
		placeholder: 'Add header',
		default: {},
		description: 'The headers to replay (names are stored in lower case), e.g. Content-Type',
		displayOptions: whenStoring,
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
			'The body exactly as the Respond node sends it: text is stored as it is, anything else as its JSON. Answer with idempotency.response.body so the first answer and every replay are the same bytes.',
		displayOptions: whenStoring,
	},
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
					'Store the status and headers with body null and tooLarge: { bytes, limit }, never a cut body',
			},
		],
		displayOptions: whenStoring,
	},
];

/** Reads Store Response once; per item, the response to store, or undefined when not storing. */
export function storedResponseReader(
	context: IExecuteFunctions,
): ((itemIndex: number) => StoredResponse) | undefined {
	if (!(context.getNodeParameter('storeResponse', 0, false) as boolean)) return undefined;
	const settings: ResponseSettings = {
		maxBytes: Number(context.getNodeParameter('maxResponseBytes', 0, DEFAULT_MAX_RESPONSE_BYTES)),
		whenTooLarge: context.getNodeParameter('whenTooLarge', 0, 'error') as 'error' | 'marker',
	};
	return (itemIndex) => {
		const entries = context.getNodeParameter('responseHeaders.entries', itemIndex, []) as Array<{
			name: string;
			value: unknown;
		}>;
		return storedResponseOf(
			context.getNodeParameter('responseStatusCode', itemIndex, 200),
			Object.fromEntries(entries.map(({ name, value }) => [name, value])),
			context.getNodeParameter('responseBody', itemIndex, ''),
			settings,
		);
	};
}
