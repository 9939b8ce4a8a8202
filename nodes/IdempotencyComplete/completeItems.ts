import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { runKeyedBatch } from '../shared/n8n/keyedBatch';
import {
	completeUnreachableText,
	knownLeaseEnd,
	lostKeyError,
	ownedKeyWithTokenReader,
} from '../shared/n8n/ownedKeys';
import { respondToWebhook } from '../shared/n8n/respondToWebhook';
import { answerReader } from '../shared/n8n/responseProperties';
import { ownedKeyId, type OwnedKey, type OwnedKeyResults } from '../shared/store/KeyStore';
import { namedKeys } from '../shared/transport/describeStatementError';
import type { WebhookAnswer } from '../shared/webhook/webhookAnswer';

type CompleteTarget = OwnedKey & { sent?: WebhookAnswer };

/**
 * Marks each item's key completed, in one statement, where the item's token still owns it; with
 * Store Response, the answer is stored in the same statement and passed on as idempotency.response;
 * with Respond to Webhook, the first completed item's answer is sent once that statement committed.
 */
export async function completeItems(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const readTarget = ownedKeyWithTokenReader(this);
	const answers = answerReader(this);
	const keysOf = (targets: OwnedKey[]) => targets.map((target) => target.key);
	let firstAnswer: WebhookAnswer | undefined;
	const outputs = await runKeyedBatch<CompleteTarget, OwnedKeyResults>(this, {
		outputCount: 1,
		action: (targets: OwnedKey[]) => `complete ${namedKeys(keysOf(targets))}`,
		// Under the owner's token, completing twice gives the same row and answer: an outage of a
		// few seconds (a failover) must not leave a committed effect with its key in progress.
		repeatable: () => true,
		whenUnreachable: (targets: OwnedKey[]) =>
			completeUnreachableText(knownLeaseEnd(this.getInputData(), keysOf(targets))),
		prepare: {
			create: false,
			addColumns: true,
			lease: false,
			response: answers?.store === true,
		},
		keyOf: (item, itemIndex) => {
			const target = readTarget(item, itemIndex);
			if (answers === undefined) return target;
			const { stored, sent } = answers.read(itemIndex);
			return { ...target, ...(stored ? { response: stored } : {}), ...(sent ? { sent } : {}) };
		},
		apply: async (store, targets) =>
			await store.complete(targets, { response: answers?.store === true }),
		route: (results, target) => {
			const result = results.get(ownedKeyId(target));
			if (result?.done !== true) return lostKeyError(target.key, result ?? { rowExists: false });
			// Routes come in item order: the first completed item answers, as a Respond node would.
			firstAnswer ??= target.sent;
			const response = target.response ?? target.sent;
			return {
				output: 0,
				idempotency: { key: target.key, completed: true, ...(response ? { response } : {}) },
			};
		},
	});
	if (firstAnswer !== undefined) await respondToWebhook(this, firstAnswer);
	return outputs;
}
