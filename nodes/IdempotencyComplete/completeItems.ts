import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { runKeyedBatch } from '../shared/n8n/keyedBatch';
import { lostKeyError, ownedKeyWithTokenReader } from '../shared/n8n/ownedKeys';
import { storedResponseReader } from '../shared/n8n/responseProperties';
import { ownedKeyId } from '../shared/store/KeyStore';

/**
 * Marks each item's key completed, in one statement, where the item's token still owns it; with
 * Store Response, the answer is stored in the same statement and passed on as idempotency.response.
 */
export async function completeItems(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const readTarget = ownedKeyWithTokenReader(this);
	const readResponse = storedResponseReader(this);
	return await runKeyedBatch(this, {
		outputCount: 1,
		action: 'complete the keys',
		prepare: {
			create: false,
			addColumns: true,
			lease: false,
			response: readResponse !== undefined,
		},
		keyOf: (item, itemIndex) => ({
			...readTarget(item, itemIndex),
			...(readResponse ? { response: readResponse(itemIndex) } : {}),
		}),
		apply: async (store, targets) =>
			await store.complete(targets, { response: readResponse !== undefined }),
		route: (results, target) => {
			const result = results.get(ownedKeyId(target));
			if (result?.done === true)
				return {
					output: 0,
					idempotency: {
						key: target.key,
						completed: true,
						...(target.response ? { response: target.response } : {}),
					},
				};
			return lostKeyError(target.key, result ?? { rowExists: false });
		},
	});
}
