import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { lostStepError } from '../../shared/errors/lostKeys';
import { ownedKeyWithTokenReader } from '../../shared/run/ownedKeys';
import { stepNameOf } from '../../shared/parameters/stepName';
import { readItemTargets, routeItems } from '../../shared/run/itemFlow';
import { FailedStep, openStoreStep, statementStep } from '../../shared/run/storeStep';
import { ownedKeyId } from '../../shared/store/KeyStore';
import { withStepMark } from '../helpers/stepItems';

export const RUN_OUTPUT = 0;
export const DONE_OUTPUT = 1;

export const description: INodeProperties[] = [];

/**
 * Before a side effect: has this event done the step already? Not yet: the item goes on to `run`
 * (the side effect, then Record Step). Recorded by an earlier execution of the event: the step is
 * skipped and `done` carries the items it produced then, so the nodes after it see the same data.
 * One read for all items; an item whose execution no longer holds its key fails, so nothing more
 * runs here while another execution does the rest.
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const readTarget = ownedKeyWithTokenReader(this, 'check a step of');
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
		const { json } = items[itemIndex];
		if (state.record === undefined) {
			const marked = withStepMark(json, { name: step, status: 'run' });
			return {
				output: RUN_OUTPUT,
				items: [{ ...items[itemIndex], json: marked, pairedItem: { item: itemIndex } }],
			};
		}
		const mark = { name: step, status: 'done' as const, recordedAt: state.record.at };
		const idempotency = (json.idempotency ?? {}) as object;
		return {
			output: DONE_OUTPUT,
			items: state.record.items.map((recorded) => ({
				json: withStepMark({ ...(recorded as object), idempotency }, mark),
				pairedItem: { item: itemIndex },
			})),
		};
	});
}
