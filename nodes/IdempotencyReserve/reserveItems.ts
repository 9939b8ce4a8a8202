import { NodeOperationError, type IExecuteFunctions, type INodeExecutionData } from 'n8n-workflow';

import type { KeySource } from '../shared/keys/keySources';
import { runKeyedBatch } from '../shared/n8n/keyedBatch';
import { itemKeyDeriver } from './deriveItemKey';

const NEW_OUTPUT = 0;
const DUPLICATE_OUTPUT = 1;

/** Output 0 (`true`): reserved by this execution, run the business step. Output 1 (`false`): already reserved. */
export async function reserveItems(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const node = this.getNode();
	const keyOf = itemKeyDeriver(this, {
		source: this.getNodeParameter('keySource', 0) as KeySource,
		rawBodyProperty: this.getNodeParameter('rawBodyProperty', 0, 'data') as string,
	});
	const firstSeen = this.getNodeParameter('options.firstSeen', 0, true) as boolean;
	// Within one execution only the first item of a key can be new; later ones are its duplicates.
	const claimed = new Set<string>();

	return await runKeyedBatch(this, {
		outputCount: 2,
		action: 'reserve the keys',
		keyOf,
		apply: async (store, keys) => await store.reserve(keys, { firstSeen }),
		route: (reservations, key, itemIndex) => {
			const reservation = reservations.get(key);
			if (reservation === undefined) {
				// Unreachable (the store answers for every key it is given); never guess a route.
				throw new NodeOperationError(node, `The reservation result has no entry for key ${key}`, { itemIndex });
			}
			const isNew = reservation.isNew && !claimed.has(key);
			claimed.add(key);
			if (isNew) return { output: NEW_OUTPUT, idempotency: { key, isNew } };
			const firstSeenAt = reservation.firstSeenAt?.toISOString();
			return { output: DUPLICATE_OUTPUT, idempotency: { key, isNew, ...(firstSeenAt ? { firstSeenAt } : {}) } };
		},
	});
}
