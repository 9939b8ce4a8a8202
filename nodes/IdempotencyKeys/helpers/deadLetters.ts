import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { KeyError } from '../../shared/keys/KeyError';
import { itemParameterReader } from '../../shared/parameters/itemParameter';
import { collectItemKeys, errorItem } from '../../shared/run/itemErrors';
import { FailedStep } from '../../shared/run/storeStep';
import type { DeadLetterOutcome } from '../../shared/store/operatorQueries';
import { openOperator, operatorStatement } from './openOperator';
import { keysOf } from './settings';

/** What each action is called in its items, its errors and its statement. */
const ACTIONS = {
	retry: { done: 'retried', verb: 'retry', statement: 'retry the dead letters' },
	drop: { done: 'dropped', verb: 'drop', statement: 'drop the dead letters' },
} as const;

/**
 * One key's item: changed, or why not: no such key, a key that is not a dead letter (with its
 * status), or a dead letter another operator's statement changed first.
 */
function outcomeJson(
	action: 'retry' | 'drop',
	key: string,
	outcome: DeadLetterOutcome | undefined,
): IDataObject {
	const done = ACTIONS[action].done;
	if (outcome?.changed === true) return { key, [done]: true };
	if (outcome?.status === undefined) return { key, [done]: false, reason: 'not_found' };
	// Read before the statement as a dead letter, yet not changed: another retry, drop or purge
	// committed it first (the statement re-checks the row it waited for).
	if (outcome.status === 'dead_letter')
		return { key, [done]: false, reason: 'changed_meanwhile', status: outcome.status };
	return { key, [done]: false, reason: 'not_dead_letter', status: outcome.status };
}

/**
 * Retry Dead Letters and Drop Dead Letters: every item's keys in one statement that changes only
 * the dead letters among them; one item per key given, in order, paired with its item, saying
 * whether it was changed and, where not, why. An item without a key, or with a key that cannot be
 * one, is an item error (its index, a hint).
 */
export async function changeDeadLetters(
	context: IExecuteFunctions,
	action: 'retry' | 'drop',
): Promise<INodeExecutionData[][]> {
	const items = context.getInputData();
	const opened = await openOperator(context, () => ({
		addIndexes: context.getNodeParameter('addIndexes', 0, true) as boolean,
	}));
	if (opened instanceof FailedStep) return opened.outputs;
	const readKeys = itemParameterReader(context, 'keys');
	const { keys, failed } = await collectItemKeys(context, items.length, (itemIndex) => {
		const itemKeys = keysOf(readKeys(items[itemIndex], itemIndex));
		if (itemKeys.length === 0)
			throw new KeyError(
				`No dead letter to ${ACTIONS[action].verb}: Keys is empty`,
				"Set Keys to the dead letters' keys, one per line, or to an expression such as {{ $json.key }} (Look Up → Dead Letters lists them).",
			);
		return itemKeys;
	});
	const all = keys.flatMap((itemKeys) => itemKeys ?? []);
	const outcomes = await operatorStatement(
		context,
		opened,
		ACTIONS[action].statement,
		async (queries) => {
			if (all.length === 0) return new Map<string, DeadLetterOutcome>();
			const { lease } = await queries.prepare({ indexes: [], addIndexes: false });
			return await queries.changeDeadLetters(action, all, { lease });
		},
		failed,
	);
	if (outcomes instanceof FailedStep) return outcomes.outputs;
	const output: INodeExecutionData[] = [];
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		const itemError = failed.get(itemIndex);
		if (itemError !== undefined) {
			output.push(errorItem(context, itemError, itemIndex));
			continue;
		}
		for (const key of keys[itemIndex] ?? [])
			output.push({
				json: outcomeJson(action, key, outcomes.get(key)),
				pairedItem: { item: itemIndex },
			});
	}
	return [output];
}
