import type { IExecuteFunctions } from 'n8n-workflow';

import {
	DEFAULT_MAX_RESPONSE_BYTES,
	storedResponseOf,
	type ResponseSettings,
	type StoredResponse,
} from '../answers/storedResponse';
import { webhookAnswerOf, type WebhookAnswer } from '../answers/webhookAnswer';
import { nodeParameter } from './nodeParameter';

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
	const store = nodeParameter(context, 'storeResponse', false) as boolean;
	const respond = nodeParameter(context, 'respondToWebhook', false) as boolean;
	if (!store && !respond) return undefined;
	// Only a stored answer has a size limit: read its settings only then.
	const settings: ResponseSettings | undefined = store
		? {
				maxBytes: Number(nodeParameter(context, 'maxResponseBytes', DEFAULT_MAX_RESPONSE_BYTES)),
				whenTooLarge: nodeParameter(context, 'whenTooLarge', 'error') as 'error' | 'marker',
			}
		: undefined;
	const read = (itemIndex: number): ItemAnswer => {
		const entries = context.getNodeParameter('responseHeaders.entries', itemIndex, []) as Array<{
			name: string;
			value: unknown;
		}>;
		const statusCode = nodeParameter(context, 'responseStatusCode', 200, itemIndex);
		const headers = Object.fromEntries(entries.map(({ name, value }) => [name, value]));
		const body = nodeParameter(context, 'responseBody', '', itemIndex);
		return {
			...(settings ? { stored: storedResponseOf(statusCode, headers, body, settings) } : {}),
			...(respond ? { sent: webhookAnswerOf(statusCode, headers, body) } : {}),
		};
	};
	return { store, read };
}
