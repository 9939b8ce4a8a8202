import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { assertStorableKey } from '../shared/keys/composeKey';
import { KeyError } from '../shared/keys/KeyError';
import { normalizeId } from '../shared/keys/keySources';
import { collectItemKeys, distinctKeys, errorItem } from '../shared/n8n/itemErrors';
import { failWhole } from '../shared/n8n/failWhole';
import { databaseError, setupError } from '../shared/n8n/nodeErrors';
import { itemParameterReader } from '../shared/n8n/itemParameter';
import { openKeyStore, type OpenedStore } from '../shared/n8n/openKeyStore';

function keyToRelease(value: unknown): string {
	const key = normalizeId(value, 'key to release');
	if (key === undefined) {
		throw new KeyError('The key to release is empty', 'Point Key at the reserved key, by default {{ $json.idempotency.key }}.');
	}
	assertStorableKey(key);
	return key;
}

/** Deletes each item's key in one statement, so a retry of that event runs the business step again. */
export async function releaseItems(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const node = this.getNode();

	let opened: OpenedStore;
	try {
		opened = await openKeyStore(this);
	} catch (error) {
		return failWhole(this, setupError(node, error), 1);
	}
	const { store, credential } = opened;

	const readKey = itemParameterReader(this, 'key');
	const { keys, failed } = await collectItemKeys(this, items.length, (itemIndex) =>
		keyToRelease(readKey(items[itemIndex], itemIndex)),
	);

	let released: Set<string>;
	try {
		if (this.getNodeParameter('createTable', 0, true) as boolean) await store.ensureTable();
		released = await store.release(distinctKeys(keys));
	} catch (error) {
		return failWhole(this, databaseError(node, error, credential, 'release the keys'), 1, failed);
	}

	const output: INodeExecutionData[] = [];
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		const key = keys[itemIndex];
		const itemError = failed.get(itemIndex);
		if (key === undefined || itemError !== undefined) {
			if (itemError) output.push(errorItem(itemError, itemIndex));
			continue;
		}
		const item = items[itemIndex];
		const result: INodeExecutionData = {
			json: { ...item.json, idempotency: { key, released: released.has(key) } },
			pairedItem: { item: itemIndex },
		};
		if (item.binary !== undefined) result.binary = item.binary;
		output.push(result);
	}
	return [output];
}
