import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { assertStorableKey } from '../shared/keys/composeKey';
import { KeyError } from '../shared/keys/KeyError';
import { normalizeId } from '../shared/keys/keySources';
import { itemParameterReader } from '../shared/n8n/itemParameter';
import { runKeyedBatch } from '../shared/n8n/keyedBatch';

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
	const readKey = itemParameterReader(this, 'key');
	return await runKeyedBatch(this, {
		outputCount: 1,
		action: 'release the keys',
		keyOf: (item, itemIndex) => keyToRelease(readKey(item, itemIndex)),
		apply: async (store, keys) => await store.release(keys),
		route: (released, key) => ({ output: 0, idempotency: { key, released: released.has(key) } }),
	});
}
