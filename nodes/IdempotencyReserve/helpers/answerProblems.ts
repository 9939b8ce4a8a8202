import type { IExecuteFunctions, NodeApiError, NodeOperationError } from 'n8n-workflow';

import type { WebhookAnswer } from '../../shared/answers/webhookAnswer';
import { clientErrorKindOf } from '../../shared/errors/nodeErrors';
import { clientErrorDetails } from '../../shared/keys/clientErrors';
import { nodeOfRun } from '../../shared/parameters/runNode';

/**
 * Answer Problems (version 2.2): Reserve answers a failure itself, as the templates' "Respond 4xx or
 * 500 (problem+json)" node on its error output answered it up to version 2.1, with the same bytes. A
 * failure the sender caused (clientErrors.ts) is answered 4xx and its item goes to no output; any
 * other failure is answered 500 with a generic detail and the node then fails, so the sender retries
 * and the execution shows the error. Without an error output, n8n no longer evaluates the node's
 * outputs expression after every run (WorkflowExecute.handleNodeErrorOutput): the main cost of a
 * delivery through the template after the database.
 */

/** The first version with the parameter. */
export const ANSWER_PROBLEMS_VERSION = 2.2;

/** The trigger types n8n's Respond to Webhook node accepts as its webhook (n8n-nodes-base 2.x). */
const WEBHOOK_TRIGGER_TYPES = [
	'n8n-nodes-base.webhook',
	'n8n-nodes-base.formTrigger',
	'@n8n/n8n-nodes-langchain.chatTrigger',
	'n8n-nodes-base.wait',
];

/**
 * The detail of every 500: nothing internal (a table, a host, SQL) reaches the sender. A client that
 * sends its own Idempotency-Key is told to retry with it (the API template's wording): a new key
 * would make the retry another request.
 */
export const INTERNAL_FAILURE_DETAIL = 'A failure on our side, not in your request. Retry later.';
export const INTERNAL_FAILURE_DETAIL_WITH_KEY =
	'A failure on our side, not in your request. Retry with the same Idempotency-Key.';
export const INTERNAL_FAILURE_TITLE = 'The request could not be processed';

/**
 * Whether a run's answer reaches the sender: a Webhook before it set to answer "Using 'Respond to
 * Webhook' Node" (in any other mode n8n answers the request itself, so an answer from here would be
 * dropped and a client error would end as a success that n8n answers 200), one item (a webhook
 * delivers one; with several, one answer could not speak for all), and the node not set to continue
 * on error (then the user's own nodes answer, as in 2.1).
 */
export function answersItsWebhook(context: IExecuteFunctions): boolean {
	const node = nodeOfRun(context);
	if (context.continueOnFail() || context.getInputData().length !== 1) return false;
	return context
		.getParentNodes(node.name, { includeNodeParameters: true })
		.some(
			({ type, parameters }) =>
				WEBHOOK_TRIGGER_TYPES.includes(type) && parameters?.responseMode === 'responseNode',
		);
}

/** The problem+json answer to a failure: its kind's 4xx, or a 500 that names nothing internal. */
export function problemAnswerOf(
	error: NodeOperationError | NodeApiError,
	keySource: unknown,
): {
	answer: WebhookAnswer;
	clientError: boolean;
} {
	const kind = clientErrorKindOf(error);
	const problem =
		kind === undefined
			? {
					type: 'about:blank',
					title: INTERNAL_FAILURE_TITLE,
					status: 500,
					detail:
						keySource === 'idempotencyKeyHeader'
							? INTERNAL_FAILURE_DETAIL_WITH_KEY
							: INTERNAL_FAILURE_DETAIL,
				}
			: (({ type, title, status }) => ({ type, title, status, detail: error.message }))(
					clientErrorDetails(kind),
				);
	return {
		answer: {
			statusCode: problem.status,
			headers: { 'content-type': 'application/problem+json' },
			body: JSON.stringify(problem),
		},
		clientError: kind !== undefined,
	};
}
