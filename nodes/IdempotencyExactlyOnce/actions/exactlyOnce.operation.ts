import {
	NodeOperationError,
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
} from 'n8n-workflow';

import type { StoredResponse } from '../../shared/answers/storedResponse';
import type { WebhookAnswer } from '../../shared/answers/webhookAnswer';
import { lostInTransactionError } from '../../shared/errors/lostKeys';
import { inputError } from '../../shared/errors/nodeErrors';
import { answerReader, type AnswerReader } from '../../shared/parameters/answerReader';
import { ownedKeyWithTokenReader } from '../../shared/parameters/ownedKeys';
import { readItemTargets, routeItems } from '../../shared/run/itemFlow';
import { respondToWebhook } from '../../shared/run/respondToWebhook';
import { FailedStep, openStoreStep, statementStep } from '../../shared/run/storeStep';
import { claimId, type ClaimedKey, type KeyHold } from '../../shared/store/completingTransaction';
import { statementReader, type ItemStatement } from '../helpers/readStatement';

interface ItemWork {
	claim: ClaimedKey;
	statement: ItemStatement;
	/** With Respond to Webhook: what the caller is sent once this item's statement committed. */
	sent?: WebhookAnswer;
}

interface ItemRows {
	rows: IDataObject[];
	rowCount: number;
}

/** The output of one item whose statement committed: its rows, or one item saying how many rows changed. */
function committedItems(
	key: string,
	ran: ItemRows,
	itemIndex: number,
	response: StoredResponse | WebhookAnswer | undefined,
): INodeExecutionData[] {
	const idempotency = { key, completed: true, ...(response ? { response } : {}) };
	if (ran.rows.length === 0)
		return [{ json: { rowCount: ran.rowCount, idempotency }, pairedItem: { item: itemIndex } }];
	return ran.rows.map((row) => ({
		json: { ...row, idempotency },
		pairedItem: { item: itemIndex },
	}));
}

/** Each item's key with its token and answer, and its statement; a bad item throws (KeyError). */
function itemWorkReader(
	context: IExecuteFunctions,
	answers: AnswerReader | undefined,
): (item: INodeExecutionData, itemIndex: number) => ItemWork {
	const readClaim = ownedKeyWithTokenReader(context);
	const readStatement = statementReader(context);
	return (item, itemIndex) => {
		const { stored, sent } = answers?.read(itemIndex) ?? {};
		return {
			claim: { ...readClaim(item, itemIndex), ...(stored ? { response: stored } : {}) },
			statement: readStatement(itemIndex),
			...(sent ? { sent } : {}),
		};
	};
}

/**
 * Runs every item's statement and completes the items' keys in one transaction on the key store's
 * database (see KeyStore.completeInTransaction). An item whose key this execution no longer holds
 * fails and runs nothing; without "continue on error" the whole transaction is then rolled back.
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const node = this.getNode();
	const continueOnFail = this.continueOnFail();

	const opened = await openStoreStep(this, 1);
	if (opened instanceof FailedStep) return opened.outputs;
	const answers = answerReader(this);
	const targets = await readItemTargets(this, itemWorkReader(this, answers));
	const outcome = await statementStep(
		this,
		opened,
		{
			outputCount: 1,
			action: 'run the step and complete the keys',
			// A lost connection rolled the transaction back, or its COMMIT's answer was lost: the
			// retry locks the rows again and finds each key in progress (nothing committed: the
			// step runs once) or completed under this token (committed: alreadyCompleted, nothing runs).
			repeatable: true,
			whenUnreachable:
				"Nothing ran twice: the step and the completion commit together, so each key is either completed with its effect or still in progress without it. The sender's retry finds out: a completed key is a duplicate, a key in progress runs the step once after its lease ends.",
			prepare: {
				create: false,
				addColumns: true,
				lease: false,
				response: answers?.store === true,
			},
			itemErrors: targets.failed,
		},
		async (store) =>
			await store.completeInTransaction({
				claims: targets.present.map((work) => work.claim),
				stopIfAnyLost: !continueOnFail,
				statements: async (run, holds) => {
					const ranByItem = new Map<number, ItemRows>();
					for (const [itemIndex, work] of targets.byItem.entries()) {
						if (work === undefined || holds.get(claimId(work.claim))?.state !== 'owned') continue;
						const results = await run(itemIndex, work.statement.text, work.statement.values);
						ranByItem.set(itemIndex, {
							rows: results.flatMap((result) => (result.rows ?? []) as IDataObject[]),
							rowCount: results.reduce((sum, result) => sum + (result.rowCount ?? 0), 0),
						});
					}
					return ranByItem;
				},
			}),
	);
	if (outcome instanceof FailedStep) return outcome.outputs;

	const holdOf = (work: ItemWork): KeyHold =>
		outcome.holds.get(claimId(work.claim)) ?? { state: 'lost', rowExists: false };
	const lostError = (work: ItemWork) => {
		const hold = holdOf(work);
		return hold.state === 'lost' ? lostInTransactionError(work.claim.key, hold) : undefined;
	};
	// Rolled back because a key was lost: that is the node's error, whatever items came before it.
	if (!continueOnFail) {
		for (const [itemIndex, work] of targets.byItem.entries()) {
			const lost = work === undefined ? undefined : lostError(work);
			if (lost !== undefined) throw inputError(node, lost, itemIndex);
		}
	}

	// The first item whose effect is committed answers the webhook, as a Respond node would.
	let firstAnswer: WebhookAnswer | undefined;
	const outputs = routeItems(this, targets, 1, (work, itemIndex) => {
		const lost = lostError(work);
		if (lost !== undefined) return lost;
		firstAnswer ??= work.sent;
		const { key } = work.claim;
		if (holdOf(work).state === 'completedByOwner') {
			// Completed by this execution before (the node retried): the effect committed then, once.
			const idempotency = { key, completed: true, alreadyCompleted: true };
			return { output: 0, items: [{ json: { idempotency }, pairedItem: { item: itemIndex } }] };
		}
		const ran = outcome.result?.get(itemIndex);
		if (ran === undefined)
			throw new NodeOperationError(node, `The step committed no result for item ${itemIndex}`, {
				itemIndex,
			});
		const response = work.claim.response ?? work.sent;
		return { output: 0, items: committedItems(key, ran, itemIndex, response) };
	});
	if (firstAnswer !== undefined) await respondToWebhook(this, firstAnswer);
	return outputs;
}
