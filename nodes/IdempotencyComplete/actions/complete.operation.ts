import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { WebhookAnswer } from '../../shared/answers/webhookAnswer';
import { namedKeys } from '../../shared/errors/describeStatementError';
import { completeUnreachableText, lostKeyError } from '../../shared/errors/lostKeys';
import { answerReader } from '../../shared/parameters/answerReader';
import { knownLeaseEnd, ownedKeyWithTokenReader } from '../../shared/run/ownedKeys';
import { readItemTargets, routeItems } from '../../shared/run/itemFlow';
import { respondToWebhook } from '../../shared/run/respondToWebhook';
import { FailedStep, openStoreStep, statementStep } from '../../shared/run/storeStep';
import { ownedKeyId, type OwnedKey } from '../../shared/store/KeyStore';

type CompleteTarget = OwnedKey & { sent?: WebhookAnswer };

/**
 * Marks each item's key completed, in one statement, where the item's token still owns it; with
 * Store Response, the answer is stored in the same statement and passed on as idempotency.response;
 * with Respond to Webhook, the first completed item's answer is sent once that statement committed.
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const readTarget = ownedKeyWithTokenReader(this);
	const answers = answerReader(this);
	const storeResponse = answers?.store === true;

	const opened = await openStoreStep(this, 1);
	if (opened instanceof FailedStep) return opened.outputs;
	const targets = await readItemTargets(this, (item, itemIndex): CompleteTarget => {
		const target = readTarget(item, itemIndex);
		if (answers === undefined) return target;
		const { stored, sent } = answers.read(itemIndex);
		return { ...target, ...(stored ? { response: stored } : {}), ...(sent ? { sent } : {}) };
	});
	const keys = targets.present.map((target) => target.key);
	const results = await statementStep(
		this,
		opened,
		{
			outputCount: 1,
			action: `complete ${namedKeys(keys)}`,
			prepare: { create: false, addColumns: true, lease: false, response: storeResponse },
			itemErrors: targets.failed,
			// Under the owner's token, completing twice gives the same row and answer: an outage of a
			// few seconds (a failover) must not leave a committed effect with its key in progress.
			repeatable: true,
			whenUnreachable: completeUnreachableText(knownLeaseEnd(this.getInputData(), keys)),
		},
		async (store) => await store.complete(targets.present, { response: storeResponse }),
	);
	if (results instanceof FailedStep) return results.outputs;

	let firstAnswer: WebhookAnswer | undefined;
	const outputs = routeItems(this, targets, 1, (target) => {
		const result = results.get(ownedKeyId(target));
		if (result?.done !== true) return lostKeyError(target.key, result ?? { rowExists: false });
		// Routes come in item order: the first completed item answers, as a Respond node would.
		firstAnswer ??= target.sent;
		const response = target.response ?? target.sent;
		return {
			output: 0,
			idempotency: { key: target.key, completed: true, ...(response ? { response } : {}) },
		};
	});
	if (firstAnswer !== undefined) await respondToWebhook(this, firstAnswer);
	return outputs;
}
