import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { JSON_TYPE, webhookAnswerOf, type WebhookAnswer } from '../../shared/answers/webhookAnswer';
import {
	clientErrorDetails,
	INVALID_SIGNATURE_DETAIL,
	retryLaterDetails,
} from '../../shared/keys/clientErrors';
import type { ReserveOutputs } from '../../shared/reserveRules/reserveOutputs';
import type { StoredResponse } from '../../shared/store/keyStoreTypes';

/**
 * Version 2.3: behind its webhook, Reserve answers every delivery it routes away from the business
 * step, with the bytes the templates' Respond nodes on those outputs answered up to 2.2, so a
 * template needs none of them (each Respond node n8n keeps in a workflow costs every execution,
 * and their expressions cost a repeat more than its reservation):
 * - duplicate: the answer the first execution stored (Complete Key's Store Response) with
 *   Idempotent-Replayed: true, else 200 {"status":"duplicate","key":…} (Answer Repeats);
 * - in flight: 409 with Retry-After, {"status":"in_progress",…}, or for an Idempotency-Key the
 *   problem+json an API answers (Answer Repeats);
 * - invalid signature: 401 problem+json, one detail whatever check failed (Answer Problems).
 * The item still goes to its output, for a log or an alert. n8n keeps an execution's first answer,
 * so a Respond to Webhook node on those outputs would answer nothing: turn the setting off to answer
 * with your own.
 */

/** The first version that answers repeats and invalid signatures. */
export const ANSWER_REPEATS_VERSION = 2.3;

export interface RoutedAnswers {
	/** Answer Problems: a failure's 4xx or 500 (2.2 on). */
	problems: boolean;
	/** Answer Problems, 2.3 on: the invalid signature's 401. */
	invalidSignature: boolean;
	/** Answer Repeats: duplicates and deliveries in flight. */
	repeats: boolean;
	/** An Idempotency-Key (an API's caller) is told "in flight" as problem+json. */
	keySource: unknown;
}

/** The 401 of every delivery whose signature failed: nothing says which check it was. */
export function invalidSignatureAnswer(): WebhookAnswer {
	const { type, title, status } = clientErrorDetails('invalid-signature');
	return {
		statusCode: status,
		headers: { 'content-type': 'application/problem+json' },
		body: JSON.stringify({ type, title, status, detail: INVALID_SIGNATURE_DETAIL }),
	};
}

/** The stored answer as Complete Key sent it (its Content-Type worked out the same way), marked replayed. */
function replayed(response: StoredResponse): WebhookAnswer | undefined {
	if (response.body === null) return undefined;
	const answer = webhookAnswerOf(response.statusCode, response.headers, response.body);
	answer.headers['idempotent-replayed'] = 'true';
	return answer;
}

function duplicateAnswer(idempotency: IDataObject): WebhookAnswer {
	const stored = idempotency.response as StoredResponse | undefined;
	return (
		(stored === undefined ? undefined : replayed(stored)) ?? {
			statusCode: 200,
			headers: { 'content-type': JSON_TYPE },
			body: JSON.stringify({ status: 'duplicate', key: idempotency.key }),
		}
	);
}

function inFlightAnswer(idempotency: IDataObject, keySource: unknown): WebhookAnswer {
	const seconds = Number(idempotency.retryAfterSeconds);
	if (keySource === 'idempotencyKeyHeader') {
		const { type, title, status } = retryLaterDetails('in-flight');
		return {
			statusCode: status,
			headers: { 'content-type': 'application/problem+json', 'retry-after': String(seconds) },
			body: JSON.stringify({
				type,
				title,
				status,
				detail: `Retry after ${seconds} seconds with the same key.`,
			}),
		};
	}
	return {
		statusCode: 409,
		headers: { 'content-type': JSON_TYPE, 'retry-after': String(seconds) },
		body: JSON.stringify({
			status: 'in_progress',
			key: idempotency.key,
			retryAfterSeconds: seconds,
		}),
	};
}

/**
 * The answer to the one item Reserve routed (answersItsWebhook: one item), or undefined where the
 * item goes on to the business step, to `reused key`, or the setting for its output is off.
 */
export function routedAnswerOf(
	routed: INodeExecutionData[][],
	outputs: ReserveOutputs,
	settings: RoutedAnswers,
): WebhookAnswer | undefined {
	const first = (output: number | undefined) =>
		output === undefined ? undefined : routed[output]?.[0];
	if (settings.invalidSignature && first(outputs.invalidSignature) !== undefined)
		return invalidSignatureAnswer();
	if (!settings.repeats) return undefined;
	const repeat = first(outputs.inFlight) ?? first(outputs.duplicate);
	const idempotency = repeat?.json.idempotency as IDataObject | undefined;
	if (idempotency === undefined || repeat?.json.error !== undefined) return undefined;
	// A flagged mismatch on `duplicate` is still a repeat of the key; `reused key` is the user's to answer.
	return idempotency.status === 'in_progress' && idempotency.mismatch === undefined
		? inFlightAnswer(idempotency, settings.keySource)
		: duplicateAnswer(idempotency);
}
