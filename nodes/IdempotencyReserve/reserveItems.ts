import { NodeOperationError, type IExecuteFunctions, type INodeExecutionData } from 'n8n-workflow';

import { collectItemKeys, distinctKeys, errorItem } from '../shared/n8n/itemErrors';
import { failWhole } from '../shared/n8n/failWhole';
import { databaseError, setupError } from '../shared/n8n/nodeErrors';
import { openKeyStore, type OpenedStore } from '../shared/n8n/openKeyStore';
import type { KeySource } from '../shared/keys/keySources';
import { itemKeyDeriver } from './deriveItemKey';

const OUTPUTS = 2;

/** Output 0 (`true`): reserved by this execution, run the business step. Output 1 (`false`): already reserved. */
export async function reserveItems(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const node = this.getNode();

	let opened: OpenedStore;
	try {
		opened = await openKeyStore(this);
	} catch (error) {
		return failWhole(this, setupError(node, error), OUTPUTS);
	}
	const { store, credential } = opened;

	const settings = {
		source: this.getNodeParameter('keySource', 0) as KeySource,
		rawBodyProperty: this.getNodeParameter('rawBodyProperty', 0, 'data') as string,
	};
	const deriveKey = itemKeyDeriver(this, settings);
	const { keys, failed } = await collectItemKeys(this, items.length, (itemIndex) =>
		deriveKey(items[itemIndex], itemIndex),
	);

	let reservations;
	try {
		if (this.getNodeParameter('createTable', 0, true) as boolean) await store.ensureTable();
		reservations = await store.reserve(distinctKeys(keys), {
			firstSeen: this.getNodeParameter('options.firstSeen', 0, true) as boolean,
		});
	} catch (error) {
		return failWhole(this, databaseError(node, error, credential, 'reserve the keys'), OUTPUTS, failed);
	}

	const newItems: INodeExecutionData[] = [];
	const duplicateItems: INodeExecutionData[] = [];
	// Within one execution only the first item of a key can be new; later ones are its duplicates.
	const claimed = new Set<string>();
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		const key = keys[itemIndex];
		const itemError = failed.get(itemIndex);
		if (key === undefined || itemError !== undefined) {
			// Never on `false`: an item whose key is unknown must not be answered as a duplicate.
			if (itemError) newItems.push(errorItem(itemError, itemIndex));
			continue;
		}
		const reservation = reservations.get(key);
		if (reservation === undefined) {
			// Unreachable (the store answers for every key it is given); never guess a route.
			throw new NodeOperationError(node, `The reservation result has no entry for key ${key}`, { itemIndex });
		}
		const isNew = reservation.isNew && !claimed.has(key);
		claimed.add(key);
		const item = items[itemIndex];
		const idempotency = isNew
			? { key, isNew }
			: { key, isNew, ...(reservation.firstSeenAt ? { firstSeenAt: reservation.firstSeenAt.toISOString() } : {}) };
		const output: INodeExecutionData = {
			json: { ...item.json, idempotency },
			pairedItem: { item: itemIndex },
		};
		if (item.binary !== undefined) output.binary = item.binary;
		(isNew ? newItems : duplicateItems).push(output);
	}
	return [newItems, duplicateItems];
}
