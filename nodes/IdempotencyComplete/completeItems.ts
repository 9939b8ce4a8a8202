import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { runKeyedBatch } from '../shared/n8n/keyedBatch';
import { lostKeyError, ownedKeyWithTokenReader } from '../shared/n8n/ownedKeys';
import { ownedKeyId } from '../shared/store/KeyStore';

/** Marks each item's key completed, in one statement, where the item's token still owns it. */
export async function completeItems(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await runKeyedBatch(this, {
		outputCount: 1,
		action: 'complete the keys',
		prepare: { create: false, lease: false },
		keyOf: ownedKeyWithTokenReader(this),
		apply: async (store, targets) => await store.complete(targets),
		route: (results, target) => {
			const result = results.get(ownedKeyId(target));
			if (result?.done === true)
				return { output: 0, idempotency: { key: target.key, completed: true } };
			return lostKeyError(target.key, result ?? { rowExists: false });
		},
	});
}
