import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { KeyError } from '../../shared/keys/KeyError';
import { lostStepError } from '../../shared/errors/lostKeys';
import { ownedKeyWithTokenReader } from '../../shared/run/ownedKeys';
import { stepNameOf } from '../../shared/parameters/stepName';
import { readItemTargets, routeItems } from '../../shared/run/itemFlow';
import { FailedStep, openStoreStep, statementStep } from '../../shared/run/storeStep';
import { ownedKeyId, type StepBoundaryTarget } from '../../shared/store/KeyStore';
import {
	DEFAULT_MAX_STEP_BYTES,
	doneItems,
	isSkipped,
	notTheStepsOutput,
	recordedJson,
	recordableEvents,
	runItem,
} from '../helpers/stepItems';
import { description as recordDescription } from './record.operation';
import { DONE_OUTPUT, RUN_OUTPUT } from './skipIfDone.operation';

export const description: INodeProperties[] = [
	{
		displayName: 'Next Step Name',
		name: 'nextStep',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'send receipt',
		description:
			'The step after this node: run it (run output) unless this event recorded it earlier (done output, with what it produced then). Its own Record Step, or the next Record Step and Skip Next If Done, uses this name as its Step Name.',
	},
	...recordDescription,
];

/**
 * The boundary between two side effects, in one node and one statement: records what the step
 * before it produced (as Record Step), then routes the next step (as Skip If Done): `run` carries
 * the step's output on to the next side effect, `done` the items the next step produced the first
 * time. The record is fenced by the token as Record Step's is, and the statement says whether the
 * token still holds the key, so "is the lease still ours?" costs no second round trip: a key lost
 * here fails its item, and nothing after it runs. Items that Skip If Done (or the boundary before)
 * sent past the step come through unrecorded, and only the next step is checked for them.
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const readTarget = ownedKeyWithTokenReader(this, 'record a step of');
	const opened = await openStoreStep(this, 2, () => {
		const step = stepNameOf(this.getNodeParameter('step', 0, ''));
		const next = stepNameOf(this.getNodeParameter('nextStep', 0, ''));
		if (next === step)
			throw new KeyError(
				`Next Step Name is "${step}", the step this node records`,
				'Name the step that comes after this node: the step this node records would always be done.',
			);
		const maxBytes = Number(this.getNodeParameter('maxOutputBytes', 0, DEFAULT_MAX_STEP_BYTES));
		return { step, next, maxBytes };
	});
	if (opened instanceof FailedStep) return opened.outputs;
	const { step, next, maxBytes } = opened.settings;

	// As Record Step: every output item of one event is part of its record, in item order, and an
	// event with an item that cannot be recorded records none of them.
	const byKey = new Map<string, StepBoundaryTarget>();
	const unrecordable = new Map<string, Error>();
	const targets = await readItemTargets(this, (item, itemIndex): StepBoundaryTarget => {
		const owned = readTarget(item, itemIndex);
		const id = ownedKeyId(owned);
		const target = byKey.get(id) ?? { ...owned, items: null };
		byKey.set(id, target);
		if (isSkipped(item, step)) return target;
		const refused = notTheStepsOutput(item, step);
		if (refused !== undefined) {
			if (!unrecordable.has(id)) unrecordable.set(id, refused);
			throw refused;
		}
		target.items ??= [];
		target.items.push(recordedJson(item));
		return target;
	});
	const toRecord = recordableEvents(step, byKey, unrecordable, maxBytes);
	const results = await statementStep(
		this,
		opened,
		{
			outputCount: 2,
			action: `record step "${step}" and check step "${next}"`,
			prepare: { create: false, addColumns: true, lease: false, steps: true },
			itemErrors: targets.failed,
			// Under the owner's token a second attempt finds the step recorded and keeps that record.
			repeatable: true,
		},
		async (store) => await store.recordStepAndCheckNext(toRecord, step, next),
	);
	if (results instanceof FailedStep) return results.outputs;

	const items = this.getInputData();
	// The next step's recorded items go out once per event, with its first item.
	const carried = new Set<string>();
	return routeItems(this, targets, 2, (target, itemIndex) => {
		const id = ownedKeyId(target);
		const problem = unrecordable.get(id);
		if (problem !== undefined) return problem;
		const result = results.get(id) ?? { done: false, rowExists: false };
		if (target.items !== null && result.done !== true && result.alreadyRecorded !== true)
			return lostStepError(target.key, step, result, 'record');
		if (target.items === null && result.owned !== true)
			return lostStepError(target.key, next, result, 'check');
		if (result.nextRecord === undefined)
			return { output: RUN_OUTPUT, items: [runItem(items[itemIndex], itemIndex, next)] };
		if (carried.has(id)) return { output: DONE_OUTPUT, items: [] };
		carried.add(id);
		return {
			output: DONE_OUTPUT,
			items: doneItems(items[itemIndex], itemIndex, next, result.nextRecord),
		};
	});
}
