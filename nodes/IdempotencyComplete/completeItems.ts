import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { KeyError } from '../shared/keys/KeyError';
import { runKeyedBatch } from '../shared/n8n/keyedBatch';
import { lostKeyError, ownedKeyReader } from '../shared/n8n/ownedKeys';
import { ownedKeyId, type OwnedKey } from '../shared/store/KeyStore';

const readOwnedKey = (context: IExecuteFunctions) => {
	const read = ownedKeyReader(context, 'complete');
	return (item: INodeExecutionData, itemIndex: number): OwnedKey => {
		const target = read(item, itemIndex);
		if (target.token === undefined) {
			throw new KeyError(
				`The key "${target.key}" comes without the token of its reservation`,
				'Reserve it in Lease mode earlier in this execution and leave Reservation empty, or point Reservation at idempotency.token of the Reserve output.',
			);
		}
		return target;
	};
};

/** Marks each item's key completed, in one statement, where the item's token still owns it. */
export async function completeItems(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	return await runKeyedBatch(this, {
		outputCount: 1,
		action: 'complete the keys',
		prepare: { create: false, lease: false },
		keyOf: readOwnedKey(this),
		apply: async (store, targets) => await store.complete(targets),
		route: (results, target) => {
			const result = results.get(ownedKeyId(target));
			if (result?.done === true)
				return { output: 0, idempotency: { key: target.key, completed: true } };
			return lostKeyError(target.key, result ?? { rowExists: false });
		},
	});
}
