import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { lostStepError } from '../../shared/errors/lostKeys';
import { knownStepsScope } from '../../shared/run/executionReservations';
import { ownedKeyWithTokenReader } from '../../shared/run/ownedKeys';
import { nodeOfRun } from '../../shared/parameters/runNode';
import { stepNameOf } from '../../shared/parameters/stepName';
import { readItemTargets, routeItems } from '../../shared/run/itemFlow';
import { knownStepsOf } from '../../shared/run/knownSteps';
import { FailedStep, openStoreStep, statementStep } from '../../shared/run/storeStep';
import { ownedKeyId } from '../../shared/store/KeyStore';
import { doneItems, runItem } from '../helpers/stepItems';

export const RUN_OUTPUT = 0;
export const DONE_OUTPUT = 1;

export const description: INodeProperties[] = [];

/**
 * Before a side effect: has this event done the step already? Not yet: the item goes on to `run`
 * (the side effect, then Record Step). Recorded by an earlier execution of the event: the step is
 * skipped and `done` carries the items it produced then, so the nodes after it see the same data.
 * One read for all items; an item whose execution no longer holds its key fails, so nothing more
 * runs here while another execution does the rest. Version 2 first asks what Reserve's statement
 * found (knownSteps.ts): where that says, fresh, that no item's key has the step, no read is needed.
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const readTarget = ownedKeyWithTokenReader(this, 'check a step of');
	if (nodeOfRun(this).typeVersion >= 2) {
		const answered = await routeFromKnownSteps(this, readTarget);
		if (answered !== undefined) return answered;
	}
	const opened = await openStoreStep(this, 2, () =>
		stepNameOf(this.getNodeParameter('step', 0, '')),
	);
	if (opened instanceof FailedStep) return opened.outputs;
	const step = opened.settings;
	const targets = await readItemTargets(this, readTarget);
	const states = await statementStep(
		this,
		opened,
		{
			outputCount: 2,
			action: `check step "${step}"`,
			prepare: { create: false, addColumns: true, lease: false, steps: true },
			itemErrors: targets.failed,
			// A read: asking again gives the same answer.
			repeatable: true,
		},
		async (store) => await store.stepStates(targets.present, step),
	);
	if (states instanceof FailedStep) return states.outputs;

	const items = this.getInputData();
	return routeItems(this, targets, 2, (target, itemIndex) => {
		const state = states.get(ownedKeyId(target)) ?? { owned: false, rowExists: false };
		if (!state.owned) return lostStepError(target.key, step, state, 'check');
		if (state.record === undefined)
			return { output: RUN_OUTPUT, items: [runItem(items[itemIndex], itemIndex, step)] };
		return {
			output: DONE_OUTPUT,
			items: doneItems(items[itemIndex], itemIndex, step, state.record),
		};
	});
}

/**
 * Every item to `run`, where the execution's own statements answered for each item's key that the
 * step is not recorded; undefined (read the key store) where any item's answer is missing, stale, or
 * says the step is recorded (its items are read then), or the Step Name or an item is bad (the read
 * path reports that as it always has).
 */
async function routeFromKnownSteps(
	context: IExecuteFunctions,
	readTarget: ReturnType<typeof ownedKeyWithTokenReader>,
): Promise<INodeExecutionData[][] | undefined> {
	let step: string;
	try {
		step = stepNameOf(context.getNodeParameter('step', 0, ''));
	} catch {
		return undefined;
	}
	const scope = knownStepsScope(context);
	const targets = await readItemTargets(context, readTarget);
	if (targets.failed.size > 0) return undefined;
	for (const target of targets.present) {
		const names = knownStepsOf(scope, target.key, target.token);
		if (names === undefined || names.has(step)) return undefined;
	}
	const items = context.getInputData();
	return routeItems(context, targets, 2, (_target, itemIndex) => ({
		output: RUN_OUTPUT,
		items: [runItem(items[itemIndex], itemIndex, step)],
	}));
}
