import {
	NodeOperationError,
	type IDataObject,
	type IExecuteFunctions,
	type INode,
	type INodeExecutionData,
} from 'n8n-workflow';

import type { WebhookAnswer } from '../../shared/answers/webhookAnswer';
import { lostInTransactionError } from '../../shared/errors/lostKeys';
import { inputError } from '../../shared/errors/nodeErrors';
import { answerReader, type AnswerReader } from '../../shared/parameters/answerReader';
import { ownedKeyWithTokenReader } from '../../shared/run/ownedKeys';
import { stepNameOf } from '../../shared/parameters/stepName';
import { readItemTargets, routeItems, type ItemTargets } from '../../shared/run/itemFlow';
import { respondToWebhook } from '../../shared/run/respondToWebhook';
import {
	FailedStep,
	openStoreStep,
	statementStep,
	type StatementStep,
} from '../../shared/run/storeStep';
import {
	claimId,
	type ClaimedKey,
	type CompletingTransaction,
	type KeyHold,
} from '../../shared/store/completingTransaction';
import type { Finish } from '../description/statementProperties';
import { oversizedRowsError } from '../helpers/oversizedRows';
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

/** What one item's statement gave: its rows, or one item saying how many rows changed. */
function rowItems(ran: ItemRows): IDataObject[] {
	return ran.rows.length === 0 ? [{ rowCount: ran.rowCount }] : ran.rows;
}

/** The output of one item whose statement committed, each row with the item's `idempotency`. */
function committedItems(
	ran: ItemRows,
	itemIndex: number,
	idempotency: IDataObject,
): INodeExecutionData[] {
	return rowItems(ran).map((row) => ({
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
 * database (see KeyStore.completeInTransaction); with After the Query set to Record as a Step, records
 * the rows as a step of the event instead, and runs nothing for a step recorded already. An item whose key this execution no longer holds
 * fails and runs nothing; without "continue on error" the whole transaction is then rolled back.
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const node = this.getNode();
	const continueOnFail = this.continueOnFail();

	const finish = this.getNodeParameter('finish', 0, 'complete') as Finish;
	const opened = await openStoreStep(this, 1, () =>
		finish === 'recordStep' ? stepNameOf(this.getNodeParameter('step', 0, '')) : undefined,
	);
	if (opened instanceof FailedStep) return opened.outputs;
	const step = opened.settings;
	// Recording a step, the key stays in progress: nothing is answered or stored with a completion.
	const answers = step === undefined ? answerReader(this) : undefined;
	const targets = await readItemTargets(this, itemWorkReader(this, answers));
	const outcome = await statementStep(
		this,
		opened,
		transactionStep(step, answers, targets),
		async (store) =>
			await store.completeInTransaction(completingTransaction(targets, step, continueOnFail)),
	);
	if (outcome instanceof FailedStep) return outcome.outputs;

	const holds = holdReader(outcome.holds, step, continueOnFail);
	// Rolled back because a key was lost (or its rows were over the record cap): that is the node's
	// error, whatever items came before it.
	if (!continueOnFail) {
		for (const [itemIndex, work] of targets.byItem.entries()) {
			const lost = work === undefined ? undefined : holds.error(work);
			if (lost !== undefined) throw inputError(node, lost, itemIndex);
		}
	}

	// The first item whose effect is committed answers the webhook, as a Respond node would.
	let firstAnswer: WebhookAnswer | undefined;
	const outputs = routeItems(this, targets, 1, (work, itemIndex) => {
		const lost = holds.error(work);
		if (lost !== undefined) return lost;
		firstAnswer ??= work.sent;
		const ran = outcome.result?.get(itemIndex);
		return { output: 0, items: itemOutput(node, work, itemIndex, holds.of(work), ran, step) };
	});
	if (firstAnswer !== undefined) await respondToWebhook(this, firstAnswer);
	return outputs;
}

/** How the one statement step runs: retried on a lost connection, since the transaction is repeatable. */
function transactionStep(
	step: string | undefined,
	answers: AnswerReader | undefined,
	targets: ItemTargets<ItemWork>,
): StatementStep {
	return {
		outputCount: 1,
		action:
			step === undefined ? 'run the step and complete the keys' : `run and record step "${step}"`,
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
			steps: step !== undefined,
		},
		itemErrors: targets.failed,
	};
}

/** The transaction: each owned item's statement, then the keys completed (or the step recorded). */
function completingTransaction(
	targets: ItemTargets<ItemWork>,
	step: string | undefined,
	continueOnFail: boolean,
): CompletingTransaction<Map<number, ItemRows>> {
	return {
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
		...(step === undefined
			? {}
			: {
					step: {
						name: step,
						// Every row of every item of the key, in item order: what a retry gets back.
						itemsOf: (ranByItem, key) =>
							[...ranByItem]
								.filter(([itemIndex]) => targets.byItem[itemIndex]?.claim.key === key)
								.flatMap(([, ran]) => rowItems(ran)),
					},
				}),
	};
}

/** Each item's hold on its key after the transaction, and the error of a hold that ran nothing. */
function holdReader(
	holds: ReadonlyMap<string, KeyHold>,
	step: string | undefined,
	continueOnFail: boolean,
) {
	const of = (work: ItemWork): KeyHold =>
		holds.get(claimId(work.claim)) ?? { state: 'lost', rowExists: false };
	const error = (work: ItemWork) => {
		const hold = of(work);
		if (hold.state === 'lost') return lostInTransactionError(work.claim.key, hold);
		if (hold.state === 'tooLarge' && step !== undefined)
			return oversizedRowsError(work.claim.key, step, hold, !continueOnFail);
		return undefined;
	};
	return { of, error };
}

/** One item's output: completed before, recorded before, or what its statement gave now. */
function itemOutput(
	node: INode,
	work: ItemWork,
	itemIndex: number,
	hold: KeyHold,
	ran: ItemRows | undefined,
	step: string | undefined,
): INodeExecutionData[] {
	const { key } = work.claim;
	if (hold.state === 'completedByOwner') {
		// Completed by this execution before (the node retried): the effect committed then, once.
		const idempotency = { key, completed: true, alreadyCompleted: true };
		return [{ json: { idempotency }, pairedItem: { item: itemIndex } }];
	}
	if (hold.state === 'stepRecorded' && step !== undefined) {
		// Recorded by an earlier execution of the event: its rows, not a second effect.
		const idempotency = {
			key,
			step: { name: step, status: 'done', recordedAt: hold.record.at },
		};
		return hold.record.items.map((row) => ({
			json: { ...(row as IDataObject), idempotency },
			pairedItem: { item: itemIndex },
		}));
	}
	if (ran === undefined)
		throw new NodeOperationError(node, `The step committed no result for item ${itemIndex}`, {
			itemIndex,
		});
	const response = work.claim.response ?? work.sent;
	const idempotency =
		step === undefined
			? { key, completed: true, ...(response ? { response } : {}) }
			: { key, step: { name: step, status: 'recorded' } };
	return committedItems(ran, itemIndex, idempotency);
}
