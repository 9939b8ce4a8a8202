import type { IExecuteFunctions } from 'n8n-workflow';

import {
	DEFAULT_MAX_RESPONSE_BYTES,
	storedResponseOf,
	type ResponseSettings,
	type StoredResponse,
} from '../answers/storedResponse';
import { webhookAnswerOf, type WebhookAnswer } from '../answers/webhookAnswer';

/** One item's answer: what is stored with its key, and what its webhook caller is sent. */
export interface ItemAnswer {
	/** Only with Store Response (body null when over the limit and a marker is stored). */
	stored?: StoredResponse;
	/** Only with Respond to Webhook. */
	sent?: WebhookAnswer;
}

export interface AnswerReader {
	/** Store Response: the statement stores each item's answer (Respond to Webhook shows in `sent`). */
	store: boolean;
	read: (itemIndex: number) => ItemAnswer;
}

/** Reads Store Response and Respond to Webhook once; undefined when the node does neither. */
export function answerReader(context: IExecuteFunctions): AnswerReader | undefined {
	const store = context.getNodeParameter('storeResponse', 0, false) as boolean;
	const respond = context.getNodeParameter('respondToWebhook', 0, false) as boolean;
	if (!store && !respond) return undefined;
	// Only a stored answer has a size limit: read its settings only then.
	const settings: ResponseSettings | undefined = store
		? {
				maxBytes: Number(
					context.getNodeParameter('maxResponseBytes', 0, DEFAULT_MAX_RESPONSE_BYTES),
				),
				whenTooLarge: context.getNodeParameter('whenTooLarge', 0, 'error') as 'error' | 'marker',
			}
		: undefined;
	const read = (itemIndex: number): ItemAnswer => {
		const entries = context.getNodeParameter('responseHeaders.entries', itemIndex, []) as Array<{
			name: string;
			value: unknown;
		}>;
		const statusCode = context.getNodeParameter('responseStatusCode', itemIndex, 200);
		const headers = Object.fromEntries(entries.map(({ name, value }) => [name, value]));
		const body = context.getNodeParameter('responseBody', itemIndex, '');
		return {
			...(settings ? { stored: storedResponseOf(statusCode, headers, body, settings) } : {}),
			...(respond ? { sent: webhookAnswerOf(statusCode, headers, body) } : {}),
		};
	};
	return { store, read };
}
