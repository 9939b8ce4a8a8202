import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { KeyError } from '../../shared/keys/KeyError';
import { MAX_RECORD_BYTES, oversizedRecord } from '../../shared/store/recordSize';
import { toStorableJson } from '../../shared/store/storableJson';

/** How long a step's recorded items may be, in UTF-8 bytes as stored, by default: the one record cap. */
export const DEFAULT_MAX_STEP_BYTES = MAX_RECORD_BYTES;

/** What an item says about a step, in idempotency.step: where it went and when the step was recorded. */
export interface StepMark extends IDataObject {
	name: string;
	/** run: not done yet, the step runs; done: recorded earlier, skipped; recorded: recorded now. */
	status: 'run' | 'done' | 'recorded';
	recordedAt?: string;
}

/** The item's json with `idempotency.step` set, keeping what Reserve put in idempotency. */
export function withStepMark(json: IDataObject, mark: StepMark): IDataObject {
	const idempotency = (json.idempotency ?? {}) as IDataObject;
	return { ...json, idempotency: { ...idempotency, step: mark } };
}

/** An item that Skip If Done sent past the step (done), which Record Step passes on as it is. */
export function isSkipped(item: INodeExecutionData, step: string): boolean {
	const mark = (item.json.idempotency as { step?: Partial<StepMark> } | undefined)?.step;
	return mark?.name === step && mark.status === 'done';
}

/**
 * An item the step's node did not make: Skip If Done's `run` item unchanged, or n8n's error item
 * (`error` with at most `message` and `details`, the shape n8n itself routes to an error output). A
 * node that fails while its On Error setting continues passes its input on as its output, so
 * recording such an item would record a failed step as done.
 */
export function notTheStepsOutput(item: INodeExecutionData, step: string): KeyError | undefined {
	const mark = (item.json.idempotency as { step?: Partial<StepMark> } | undefined)?.step;
	if (mark?.name === step && mark.status === 'run')
		return new KeyError(
			`Record Step got the item Skip If Done sent to step "${step}", unchanged: the step's node passed its input on, which n8n does when a node fails with On Error set to continue`,
			"Nothing is recorded, so a retry runs the step again. Give the step's node an error output to Release Key; a node that passes its input on by design (Edit Fields with Include Other Input Fields) should output only its own fields.",
		);
	const keys = Object.keys(item.json);
	if (
		item.json.error !== undefined &&
		keys.every((key) => ['error', 'message', 'details'].includes(key))
	)
		return new KeyError(
			`Record Step got an error item for step "${step}": ${String((item.json.error as { message?: unknown })?.message ?? item.json.error)}`,
			"Nothing is recorded, so a retry runs the step again. Connect the step's error output to Release Key instead of passing errors on.",
		);
	return undefined;
}

/** What is recorded of one output item: its json, without the idempotency bookkeeping. */
export function recordedJson(item: INodeExecutionData): IDataObject {
	const json = { ...item.json };
	delete json.idempotency;
	return json;
}

/**
 * The limit a Max Output Size setting gives: the setting, but never above the one record cap. A
 * saved value above the cap (the parameter had no maximum before) counts as the cap rather than
 * failing the node: Record Step runs after the side effect, so refusing the setting would fail every
 * event after its effect and have each retry repeat it, where the cap fails only an output over it.
 */
export function recordLimitOf(maxOutputBytes: number): number {
	return Math.min(maxOutputBytes, MAX_RECORD_BYTES);
}

/**
 * Recorded items are kept in the key row: over the limit (measured as they are stored), the items
 * fail instead of being cut. Any JSON is storable (storableJson), so the size is the only refusal.
 * Under the cap the hint offers to raise Max Output Size; at the cap it cannot, and says so.
 */
export function recordingProblem(
	step: string,
	items: unknown[],
	maxOutputBytes: number,
): KeyError | undefined {
	const limit = recordLimitOf(maxOutputBytes);
	const over = oversizedRecord(toStorableJson(items), limit);
	if (over === undefined) return undefined;
	const { bytes } = over;
	const keepLess =
		'put a node before Record Step that keeps only what the later steps read (for example only the ids)';
	if (limit < MAX_RECORD_BYTES)
		return new KeyError(
			`Step "${step}" produced ${bytes} bytes of output, over the limit of ${limit} bytes to record`,
			`Raise Max Output Size (at most ${MAX_RECORD_BYTES} bytes, the cap on every record), or ${keepLess}.`,
		);
	const counted =
		maxOutputBytes > MAX_RECORD_BYTES
			? ` (a Max Output Size of ${maxOutputBytes} counts as ${MAX_RECORD_BYTES})`
			: '';
	return new KeyError(
		`Step "${step}" produced ${bytes} bytes of output, over the cap of ${MAX_RECORD_BYTES} bytes on what a key keeps per record`,
		`Record less: ${keepLess}. Max Output Size cannot raise the cap${counted}.`,
	);
}

/** The item that goes on to run `step`: itself, marked as sent to the step. */
export function runItem(item: INodeExecutionData, itemIndex: number, step: string) {
	const json = withStepMark(item.json, { name: step, status: 'run' });
	return { ...item, json, pairedItem: { item: itemIndex } };
}

/**
 * The items a recorded step produced the first time, in place of running it again: each with the
 * input item's idempotency (the key, from Reserve) and the step's mark.
 */
export function doneItems(
	item: INodeExecutionData,
	itemIndex: number,
	step: string,
	record: { at: string; items: unknown[] },
): INodeExecutionData[] {
	const mark = { name: step, status: 'done' as const, recordedAt: record.at };
	const idempotency = (item.json.idempotency ?? {}) as object;
	return record.items.map((recorded) => ({
		json: withStepMark({ ...(recorded as object), idempotency }, mark),
		pairedItem: { item: itemIndex },
	}));
}

/**
 * The events whose items may be recorded: an event with an unrecordable item (already in
 * `unrecordable`) or whose items together exceed the limit records none of them, and the size
 * refusal joins `unrecordable` so its items fail with it. Events with no items to record (`null`:
 * every item was passed on as done) are kept, unmeasured.
 */
export function recordableEvents<Target extends { items: unknown[] | null }>(
	step: string,
	byKey: ReadonlyMap<string, Target>,
	unrecordable: Map<string, Error>,
	maxOutputBytes: number,
): Target[] {
	for (const [id, target] of byKey) {
		if (target.items === null || unrecordable.has(id)) continue;
		const tooLarge = recordingProblem(step, target.items, maxOutputBytes);
		if (tooLarge !== undefined) unrecordable.set(id, tooLarge);
	}
	return [...byKey].filter(([id]) => !unrecordable.has(id)).map(([, target]) => target);
}
