import { bodyText, headerMap, httpStatusOf } from './storedResponse';

import type { WebhookAnswer } from '../webhook/webhookAnswerType';

export type { WebhookAnswer } from '../webhook/webhookAnswerType';

/** What n8n's Respond to Webhook node sends JSON as (Express's res.json). */
export const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';

/** A body that is JSON text (an object or an array) is sent as JSON even when it was typed as text. */
function looksLikeJson(text: string): boolean {
	const start = text.trimStart()[0];
	if (start !== '{' && start !== '[') return false;
	try {
		JSON.parse(text);
		return true;
	} catch {
		return false;
	}
}

/**
 * The answer for one item, from the same Response Status Code, Headers and Body that Store Response
 * stores. Without a Content-Type header, an object (or JSON text) is sent as JSON, other text as
 * plain text, so a caller can read it whichever way the body was written.
 */
export function webhookAnswerOf(
	statusCode: unknown,
	headers: unknown,
	body: unknown,
): WebhookAnswer {
	const answer = {
		statusCode: httpStatusOf(statusCode),
		headers: headerMap(headers),
		body: bodyText(body),
	};
	if (answer.headers['content-type'] === undefined)
		answer.headers['content-type'] =
			(body !== undefined && typeof body !== 'string') || looksLikeJson(answer.body)
				? JSON_TYPE
				: TEXT_TYPE;
	return answer;
}
