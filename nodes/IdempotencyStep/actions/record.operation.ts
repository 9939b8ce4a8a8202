import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { lostStepError } from '../../shared/errors/lostKeys';
import { ownedKeyWithTokenReader } from '../../shared/run/ownedKeys';
import { stepNameOf } from '../../shared/parameters/stepName';
import { readItemTargets, routeItems } from '../../shared/run/itemFlow';
import { FailedStep, openStoreStep, statementStep } from '../../shared/run/storeStep';
import { ownedKeyId, type StepRecordTarget } from '../../shared/store/KeyStore';
import { MAX_RECORD_BYTES } from '../../shared/store/recordSize';
import {
	DEFAULT_MAX_STEP_BYTES,
	isSkipped,
	notTheStepsOutput,
	recordedJson,
	recordableEvents,
	withStepMark,
} from '../helpers/stepItems';

export const description: INodeProperties[] = [
	{
		displayName: 'Max Output Size (Bytes)',
		name: 'maxOutputBytes',
		type: 'number',
		default: DEFAULT_MAX_STEP_BYTES,
		typeOptions: { minValue: 0, maxValue: MAX_RECORD_BYTES },
		description: `The largest output to record per event, in UTF-8 bytes of its items' JSON as stored (any JSON is stored as it is), at most ${MAX_RECORD_BYTES} (256 KiB, the cap on every record; a larger saved value counts as ${MAX_RECORD_BYTES}). It is kept with the key until the key is purged: record only what the later steps read.`,
	},
];

/** An item's part in the record: its key and token, or passed on (Skip If Done sent it past the step). */
type RecordTarget = (StepRecordTarget & { skipped?: false }) | { skipped: true };

/**
 * After a side effect: records the items it produced under (event key, step), in one statement for
 * every key, where this execution still holds the key. Items that Skip If Done sent past the step
 * (`done`) come through here too and are passed on unrecorded, so the nodes after this one always
 * see the step's output in one place, whichever way it came.
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const readTarget = ownedKeyWithTokenReader(this, 'record a step of');
	const opened = await openStoreStep(this, 1, () => ({
		step: stepNameOf(this.getNodeParameter('step', 0, '')),
		maxBytes: Number(this.getNodeParameter('maxOutputBytes', 0, DEFAULT_MAX_STEP_BYTES)),
	}));
	if (opened instanceof FailedStep) return opened.outputs;
	const { step, maxBytes } = opened.settings;

	// Every output item of one event is part of its record, in item order. An event with an item
	// that cannot be recorded records none of them: a partial record would give a retry fewer items
	// than the step produced.
	const byKey = new Map<string, StepRecordTarget>();
	const unrecordable = new Map<string, Error>();
	const targets = await readItemTargets(this, (item, itemIndex): RecordTarget => {
		if (isSkipped(item, step)) return { skipped: true };
		const owned = readTarget(item, itemIndex);
		const id = ownedKeyId(owned);
		const refused = notTheStepsOutput(item, step);
		if (refused !== undefined) {
			if (!unrecordable.has(id)) unrecordable.set(id, refused);
			throw refused;
		}
		const target = byKey.get(id) ?? { ...owned, items: [] };
		target.items.push(recordedJson(item));
		byKey.set(id, target);
		return target;
	});
	const toRecord = recordableEvents(step, byKey, unrecordable, maxBytes);
	const results = await statementStep(
		this,
		opened,
		{
			outputCount: 1,
			action: `record step "${step}"`,
			prepare: { create: false, addColumns: true, lease: false, steps: true },
			itemErrors: targets.failed,
			// Under the owner's token a second attempt finds the step recorded and keeps that record.
			repeatable: true,
		},
		async (store) => await store.recordStep(toRecord, step),
	);
	if (results instanceof FailedStep) return results.outputs;

	const items = this.getInputData();
	return routeItems(this, targets, 1, (target, itemIndex) => {
		const item = items[itemIndex];
		if (target.skipped === true)
			return { output: 0, items: [{ ...item, pairedItem: { item: itemIndex } }] };
		const id = ownedKeyId(target);
		const problem = unrecordable.get(id);
		if (problem !== undefined) return problem;
		const result = results.get(id);
		if (result?.done !== true && result?.alreadyRecorded !== true)
			return lostStepError(target.key, step, result ?? { rowExists: false }, 'record');
		const json = withStepMark(item.json, { name: step, status: 'recorded' });
		return { output: 0, items: [{ ...item, json, pairedItem: { item: itemIndex } }] };
	});
}
