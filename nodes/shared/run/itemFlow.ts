import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	NodeOperationError,
} from 'n8n-workflow';

import { inputError } from '../errors/nodeErrors';
import { collectItemKeys, errorItem } from './itemErrors';

/**
 * The steps Reserve, Complete Key, Release Key and the exactly-once step take in order, each in its
 * own code: open the store (storeStep.ts), read every item's target here (readItemTargets), run one
 * statement for all targets (statementStep), then route each item here (routeItems).
 */

/** Every item's target (its key, token, answer …), with the items that failed on their own set aside. */
export interface ItemTargets<Target> {
	/** By input item: its target, undefined where the item failed or is left out. */
	byItem: ReadonlyArray<Target | undefined>;
	/** The targets of the items that have one, in item order: what the one statement acts on. */
	present: Target[];
	/** Items that failed on their own, by index (filled only when the node continues on error). */
	failed: ReadonlyMap<number, NodeOperationError>;
}

/**
 * Reads each input item's target; a bad item throws (KeyError with a hint) or, when the node
 * continues on error, is set aside with its own error. `only`: just these items (Reserve leaves out
 * those whose signature failed); all when undefined.
 */
export async function readItemTargets<Target>(
	context: IExecuteFunctions,
	targetOf: (item: INodeExecutionData, itemIndex: number) => Target | Promise<Target>,
	only?: ReadonlySet<number>,
): Promise<ItemTargets<Target>> {
	const items = context.getInputData();
	const { keys, failed } = await collectItemKeys(context, items.length, (itemIndex) =>
		only === undefined || only.has(itemIndex) ? targetOf(items[itemIndex], itemIndex) : undefined,
	);
	const present = keys.filter((target): target is Target => target !== undefined);
	return { byItem: keys, present, failed };
}

/** A failed step's error items, kept to the items the node answers for (`only`, as above). */
export function answeredFor(
	outputs: INodeExecutionData[][],
	only: ReadonlySet<number> | undefined,
): INodeExecutionData[][] {
	if (only === undefined) return outputs;
	return outputs.map((items) =>
		items.filter((item) => {
			const paired = item.pairedItem;
			return typeof paired === 'object' && !Array.isArray(paired) && only.has(paired.item);
		}),
	);
}

/**
 * Where one item goes: passed on with `idempotency` added, or in place of it the items it produced
 * (the exactly-once step's rows).
 */
export type ItemRoute =
	| { output: number; idempotency: IDataObject }
	| { output: number; items: INodeExecutionData[] };

/** The input item with `added` in its json and everything else (binary included) passed on. */
export function passedOn(
	item: INodeExecutionData,
	itemIndex: number,
	added: IDataObject,
): INodeExecutionData {
	const routed: INodeExecutionData = {
		json: { ...item.json, ...added },
		pairedItem: { item: itemIndex },
	};
	if (item.binary !== undefined) routed.binary = item.binary;
	return routed;
}

/**
 * The outputs, once the statement ran: `route` is called for each item with a target, in item
 * order, so it can tell the first item of a key from its repeats. Items that failed on their own
 * become error items on the first output and never reach another. A route that returns an Error (a
 * KeyError with a hint, e.g. a lost lease) fails that item: it throws, or when the node continues
 * on error becomes the item's error item.
 */
export function routeItems<Target>(
	context: IExecuteFunctions,
	targets: ItemTargets<Target>,
	outputCount: number,
	route: (target: Target, itemIndex: number) => ItemRoute | Error,
): INodeExecutionData[][] {
	const items = context.getInputData();
	const outputs: INodeExecutionData[][] = Array.from({ length: outputCount }, () => []);
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		const itemError = targets.failed.get(itemIndex);
		if (itemError !== undefined) {
			outputs[0].push(errorItem(context, itemError, itemIndex));
			continue;
		}
		const target = targets.byItem[itemIndex];
		if (target === undefined) continue;
		const routed = route(target, itemIndex);
		if (routed instanceof Error) {
			// The statement ran for every item; this one's outcome is a failure.
			const routeError = inputError(context.getNode(), routed, itemIndex);
			if (!context.continueOnFail()) throw routeError;
			outputs[0].push(errorItem(context, routeError, itemIndex));
		} else if ('items' in routed) {
			outputs[routed.output].push(...routed.items);
		} else {
			const { idempotency } = routed;
			outputs[routed.output].push(passedOn(items[itemIndex], itemIndex, { idempotency }));
		}
	}
	return outputs;
}
