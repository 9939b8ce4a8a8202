import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { runKeyedBatch } from '../shared/n8n/keyedBatch';
import {
	completeUnreachableText,
	knownLeaseEnd,
	lostKeyError,
	ownedKeyWithTokenReader,
} from '../shared/n8n/ownedKeys';
import { storedResponseReader } from '../shared/n8n/responseProperties';
import { ownedKeyId, type OwnedKey } from '../shared/store/KeyStore';
import { namedKeys } from '../shared/transport/describeStatementError';

/**
 * Marks each item's key completed, in one statement, where the item's token still owns it; with
 * Store Response, the answer is stored in the same statement and passed on as idempotency.response.
 */
export async function completeItems(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const readTarget = ownedKeyWithTokenReader(this);
	const readResponse = storedResponseReader(this);
	const keysOf = (targets: OwnedKey[]) => targets.map((target) => target.key);
	return await runKeyedBatch(this, {
		outputCount: 1,
		action: (targets: OwnedKey[]) => `complete ${namedKeys(keysOf(targets))}`,
		// Under the owner's token, completing twice gives the same row and answer: an outage of a
		// few seconds (a failover) must not leave a committed effect with its key in progress.
		repeatable: true,
		whenUnreachable: (targets: OwnedKey[]) =>
			completeUnreachableText(knownLeaseEnd(this.getInputData(), keysOf(targets))),
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
