import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { KeySource } from '../shared/keys/keySources';
import { runKeyedBatch } from '../shared/n8n/keyedBatch';
import { itemKeyDeriver } from './deriveItemKey';

const NEW_OUTPUT = 0;
const DUPLICATE_OUTPUT = 1;

/** Output 0 (`true`): reserved by this execution, run the business step. Output 1 (`false`): already reserved. */
export async function reserveItems(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const keyOf = itemKeyDeriver(this, {
		source: this.getNodeParameter('keySource', 0) as KeySource,
		rawBodyProperty: this.getNodeParameter('rawBodyProperty', 0, 'data') as string,
	});
	const firstSeen = this.getNodeParameter('options.firstSeen', 0, true) as boolean;

	return await runKeyedBatch(this, {
		outputCount: 2,
		action: 'reserve the keys',
		keyOf,
		apply: async (store, keys) => await store.reserve(keys, { firstSeen }),
		route: (outcome, key) => {
			// Taking the key out of `inserted` makes only the first item of a key new within the
			// execution; later items with the same key are its duplicates.
			if (outcome.inserted.delete(key)) return { output: NEW_OUTPUT, idempotency: { key, isNew: true } };
			const firstSeenMs = outcome.firstSeenMs.get(key);
			if (firstSeenMs === undefined) return { output: DUPLICATE_OUTPUT, idempotency: { key, isNew: false } };
			const firstSeenAt = new Date(firstSeenMs).toISOString();
			return { output: DUPLICATE_OUTPUT, idempotency: { key, isNew: false, firstSeenAt } };
		},
	});
}
