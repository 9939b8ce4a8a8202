import { NodeOperationError, type IExecuteFunctions } from 'n8n-workflow';

import {
	forbiddenStoredHeader,
	storedDeliveryOf,
	storedMessageOf,
	storedHeaderNames,
	type StoredDeliveryOutcome,
} from '../../shared/delivery/storedDelivery';
import type { IdLocation } from '../../shared/keys/keySourceTable';
import { GENERIC_HMAC } from '../../shared/webhook/providers';
import { SIGNATURE_SCHEMES } from '../../shared/webhook/signatureSchemes';
import { nodeParameter } from '../../shared/parameters/nodeParameter';

/**
 * Reserve's Answer First (lease mode): each new key is stored with its delivery, so the template can
 * answer the sender at once and the Redrive Trigger can run the event again if the execution dies
 * before Complete Key. Which headers are stored: Content-Type, the Key Source preset's id headers,
 * the headers the signature signs (Standard Webhooks' webhook-id…) and the ones the user names; never
 * a secret (shared/delivery/secretParts.ts).
 */
export interface AnswerFirst {
	/** The delivery to store for an item's json, or why it is not stored (over the cap). */
	deliveryOf(json: Record<string, unknown>): StoredDeliveryOutcome;
}

/** The headers a user may add, from "Also Store Headers" (commas or new lines). */
function namedHeaders(text: string): string[] {
	return text
		.split(/[\n,]/)
		.map((name) => name.trim())
		.filter((name) => name !== '');
}

/** Undefined when Answer First is off (or in simple mode, where no lease fences a redrive). */
export function answerFirstOf(
	context: IExecuteFunctions,
	mode: string,
	keyLocation: IdLocation | undefined,
): AnswerFirst | undefined {
	if (mode !== 'lease' || !(nodeParameter(context, 'answerFirst', false) as boolean))
		return undefined;
	// What the signature signs besides the body is stored; no signature header of any scheme is
	// (secretParts.ts), nor Generic HMAC's, which only the node's settings name.
	const signature = nodeParameter(context, 'signature', 'none') as string;
	const scheme = (
		SIGNATURE_SCHEMES as Record<
			string,
			(typeof SIGNATURE_SCHEMES)[keyof typeof SIGNATURE_SCHEMES] | undefined
		>
	)[signature];
	const signedHeaders = scheme?.signedHeaders ?? [];
	const configured =
		signature === GENERIC_HMAC.value
			? [(nodeParameter(context, 'signatureHeader', '') as string).trim()]
			: [];
	const extra = namedHeaders(nodeParameter(context, 'storedHeaders', '') as string);
	const forbidden = forbiddenStoredHeader(extra, configured);
	if (forbidden !== undefined)
		throw new NodeOperationError(
			context.getNode(),
			`Also Store Headers names "${forbidden}", which carries a credential or a signature`,
			{
				description:
					'A stored delivery stays in the key table until the key is purged: remove that header from Also Store Headers. A redrive is not verified again, so it needs no signature.',
			},
		);
	// Named with its workflow, whose Redrive Trigger alone may run it; a workflow never saved has no id.
	const workflowId = context.getWorkflow().id;
	const origin =
		workflowId === undefined || workflowId === '' ? {} : { workflowId: String(workflowId) };
	// An email is no webhook request: stored whole, redriven as the trigger emitted it (docs/email.md).
	if (keyLocation?.kind === 'emailMessage')
		return { deliveryOf: (json) => storedMessageOf(json, origin) };
	const presetHeaders =
		keyLocation !== undefined && keyLocation.kind === 'headers' ? keyLocation.names : [];
	const names = storedHeaderNames(presetHeaders, signedHeaders, extra);
	return { deliveryOf: (json) => storedDeliveryOf(json, names, origin) };
}
