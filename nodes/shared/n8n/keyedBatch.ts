import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { KeyStore } from '../store/KeyStore';
import { failWhole } from './failWhole';
import { collectItemKeys, errorItem } from './itemErrors';
import { databaseError, setupError } from './nodeErrors';
import { openKeyStore } from './openKeyStore';

/** Where one item goes and what it carries as `idempotency`. */
export interface ItemRoute {
	output: number;
	idempotency: IDataObject;
}

export interface KeyedBatch<Result> {
	outputCount: number;
	/** Completes "PostgreSQL could not …" in error messages. */
	action: string;
	/** The key of one item; throws (KeyError) for a bad item. */
	keyOf: (item: INodeExecutionData, itemIndex: number) => string | Promise<string>;
	/** One statement for the keys of all items that have one (a key may repeat; the store handles that). */
	apply: (store: KeyStore, keys: string[]) => Promise<Result>;
	/** Called in item order, so a route can tell the first item of a key from its repeats. */
	route: (result: Result, key: string) => ItemRoute;
}

function presentKeys(keys: Array<string | undefined>): string[] {
	return keys.filter((key): key is string => key !== undefined);
}

/**
 * The shape Reserve and Release share: every item's key, one statement for the batch, then each
 * item routed with `idempotency` added and everything else (binary included) passed on. Failed
 * items become error items on the first output; they never reach another output.
 */
export async function runKeyedBatch<Result>(
	context: IExecuteFunctions,
	batch: KeyedBatch<Result>,
): Promise<INodeExecutionData[][]> {
	const items = context.getInputData();
	const node = context.getNode();

	let opened;
	try {
		opened = await openKeyStore(context);
	} catch (error) {
		return failWhole(context, setupError(node, error), batch.outputCount);
	}
	const { store, credential } = opened;

	const { keys, failed } = await collectItemKeys(context, items.length, (itemIndex) =>
		batch.keyOf(items[itemIndex], itemIndex),
	);

	let result: Result;
	try {
		if (context.getNodeParameter('createTable', 0, true) as boolean) await store.ensureTable();
		result = await batch.apply(store, presentKeys(keys));
	} catch (error) {
		return failWhole(context, databaseError(node, error, credential, batch.action), batch.outputCount, failed);
	}

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
		const { output, idempotency } = batch.route(result, key);
		const routed: INodeExecutionData = { json: { ...item.json, idempotency }, pairedItem: { item: itemIndex } };
		if (item.binary !== undefined) routed.binary = item.binary;
		outputs[output].push(routed);
	}
	return outputs;
}
