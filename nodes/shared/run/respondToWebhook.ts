import type { IExecuteFunctions } from 'n8n-workflow';

import type { WebhookAnswer } from '../answers/webhookAnswer';

/**
 * Answers the webhook call that started this execution, as n8n's Respond to Webhook node does with
 * a text body (one answer per execution; n8n keeps the first). Callers send only after the completion
 * committed, so a caller is never told "done" for a key still in progress. The body is the text Store
 * Response stores, sent the way a Respond node replaying it sends it: the same bytes and headers.
 */
export async function respondToWebhook(
	context: IExecuteFunctions,
	answer: WebhookAnswer,
): Promise<void> {
	await context.sendResponse({
		statusCode: answer.statusCode,
		headers: answer.headers,
		body: answer.body,
	});
}
