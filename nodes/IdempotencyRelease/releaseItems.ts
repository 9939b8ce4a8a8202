import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { ownedKeyReader } from '../shared/n8n/ownedKeys';
import { runKeyedBatch } from '../shared/n8n/keyedBatch';
import { ownedKeyId } from '../shared/store/KeyStore';

/**
 * Deletes each item's key in one statement, so a retry of that event runs the business step again.
 * A key that comes with its reservation's token is deleted only while that token holds it.
 */
export async function releaseItems(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await runKeyedBatch(this, {
		outputCount: 1,
		action: 'release the keys',
		prepare: { create: this.getNodeParameter('createTable', 0, true) as boolean, lease: false },
		keyOf: ownedKeyReader(this, 'release'),
		apply: async (store, targets) => await store.release(targets),
		route: (results, target) => {
			const result = results.get(ownedKeyId(target));
			if (result?.done === true)
				return { output: 0, idempotency: { key: target.key, released: true } };
			// A key this execution completed stays: its effect committed, and freeing it would run it again.
			const reason =
				result?.completedByOwner === true
					? 'completed'
					: result?.rowExists === true
						? 'not_owner'
						: 'not_found';
			return { output: 0, idempotency: { key: target.key, released: false, reason } };
		},
	});
}
