import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { knownLeaseEnd, ownedKeyReader, releaseUnreachableText } from '../shared/n8n/ownedKeys';
import { runKeyedBatch } from '../shared/n8n/keyedBatch';
import { ownedKeyId, type OwnedKey } from '../shared/store/KeyStore';
import { namedKeys } from '../shared/transport/describeStatementError';

/**
 * Deletes each item's key in one statement, so a retry of that event runs the business step again.
 * A key that comes with its reservation's token is deleted only while that token holds it.
 */
export async function releaseItems(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const keysOf = (targets: OwnedKey[]) => targets.map((target) => target.key);
	return await runKeyedBatch(this, {
		outputCount: 1,
		action: (targets: OwnedKey[]) => `release ${namedKeys(keysOf(targets))}`,
		// Deleting twice under the owner's token deletes once; a key without a token is deleted
		// whoever holds it, as on the first attempt (see KeyStore.release).
		repeatable: true,
		whenUnreachable: (targets: OwnedKey[]) =>
			releaseUnreachableText(knownLeaseEnd(this.getInputData(), keysOf(targets))),
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
