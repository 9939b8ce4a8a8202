import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { KeyStore, PrepareOptions } from '../store/KeyStore';
import { collectItemKeys, errorItem } from './itemErrors';
import { inputError } from './nodeErrors';
import { FailedStep, openStoreStep, statementStep } from './storeStep';

/** Where one item goes and what it carries as `idempotency`. */
export interface ItemRoute {
	output: number;
	idempotency: IDataObject;
}

export interface KeyedBatch<Target, Result> {
	outputCount: number;
	/**
	 * Completes "PostgreSQL could not …" in error messages; given the targets of the statement, it
	 * can name their keys (namedKeys), so an Error Workflow can act on them.
	 */
	action: string | ((targets: Target[]) => string);
	/** The statement gives the same result when run twice: retried on a lost connection (see StatementStep). */
	repeatable?: boolean;
	/** What the targets are left with when the key store stayed unreachable through the retries. */
	whenUnreachable?: (targets: Target[]) => string;
	/** What the table needs before the statement: created if missing, lease columns. */
	prepare: PrepareOptions;
	/** The key (or key and token) of one item; throws (KeyError) for a bad item. */
	keyOf: (item: INodeExecutionData, itemIndex: number) => Target | Promise<Target>;
	/** One statement for the keys of all items that have one (a key may repeat; the store handles that). */
	apply: (store: KeyStore, keys: Target[]) => Promise<Result>;
	/**
	 * Called in item order, so a route can tell the first item of a key from its repeats. An Error
	 * (a KeyError with a hint) fails that item the way a bad key does.
	 */
	route: (result: Result, key: Target) => ItemRoute | Error;
}

function presentKeys<Target>(keys: Array<Target | undefined>): Target[] {
	return keys.filter((key): key is Target => key !== undefined);
}

/**
 * The shape Reserve and Release share: every item's key, one statement for the batch, then each
 * item routed with `idempotency` added and everything else (binary included) passed on. Failed
 * items become error items on the first output; they never reach another output.
 */
export async function runKeyedBatch<Target, Result>(
	context: IExecuteFunctions,
	batch: KeyedBatch<Target, Result>,
): Promise<INodeExecutionData[][]> {
	const items = context.getInputData();
	const node = context.getNode();

	const opened = await openStoreStep(context, batch.outputCount);
	if (opened instanceof FailedStep) return opened.outputs;

	const { keys, failed } = await collectItemKeys(context, items.length, (itemIndex) =>
		batch.keyOf(items[itemIndex], itemIndex),
	);

	const present = presentKeys(keys);
	const step = {
		outputCount: batch.outputCount,
		action: typeof batch.action === 'string' ? batch.action : batch.action(present),
		prepare: batch.prepare,
		itemErrors: failed,
		repeatable: batch.repeatable,
		whenUnreachable: batch.whenUnreachable?.(present),
	};
	const result = await statementStep(
		context,
		opened,
		step,
		async (store) => await batch.apply(store, present),
	);
	if (result instanceof FailedStep) return result.outputs;

	const outputs: INodeExecutionData[][] = Array.from({ length: batch.outputCount }, () => []);
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		const key = keys[itemIndex];
		const itemError = failed.get(itemIndex);
		if (itemError !== undefined) {
			outputs[0].push(errorItem(itemError, itemIndex));
			continue;
		}
		if (key === undefined) continue;
		const item = items[itemIndex];
		const route = batch.route(result, key);
		if (route instanceof Error) {
			// The statement ran for every item; this one's outcome is a failure (e.g. a lost lease).
			const routeError = inputError(node, route, itemIndex);
			if (!context.continueOnFail()) throw routeError;
			outputs[0].push(errorItem(routeError, itemIndex));
			continue;
		}
		const { output, idempotency } = route;
		const routed: INodeExecutionData = {
			json: { ...item.json, idempotency },
			pairedItem: { item: itemIndex },
		};
		if (item.binary !== undefined) routed.binary = item.binary;
		outputs[output].push(routed);
	}
	return outputs;
}
