import { NodeOperationError, type IExecuteFunctions, type INodeExecutionData } from 'n8n-workflow';

import type { KeySource } from '../shared/keys/keySources';
import { executionToken, recordReservedKeys } from '../shared/n8n/executionReservations';
import { failWhole } from '../shared/n8n/failWhole';
import { runKeyedBatch, type ItemRoute } from '../shared/n8n/keyedBatch';
import type { LeaseOutcome, ReserveOutcome } from '../shared/store/KeyStore';
import { itemKeyDeriver } from './deriveItemKey';
import { MAX_LEASE_SECONDS, type ReserveMode } from './modeProperties';

const NEW_OUTPUT = 0;
const DUPLICATE_OUTPUT = 1;

const isoTime = (ms: number) => new Date(ms).toISOString();

function leaseSecondsOf(context: IExecuteFunctions): number {
	const seconds = Number(context.getNodeParameter('leaseSeconds', 0, 300));
	if (!Number.isFinite(seconds) || seconds < 1 || seconds > MAX_LEASE_SECONDS) {
		throw new NodeOperationError(
			context.getNode(),
			`Lease must be from 1 to ${MAX_LEASE_SECONDS} seconds, not ${String(seconds)}`,
			{
				description:
					'Make it longer than the slowest run from Reserve to Complete Key (a few minutes is usual).',
			},
		);
	}
	return seconds;
}

/** Simple mode: the key is new when this statement inserted it. */
function routeSimple(outcome: ReserveOutcome, key: string): ItemRoute {
	// Taking the key out of `inserted` makes only the first item of a key new within the
	// execution; later items with the same key are its duplicates.
	if (outcome.inserted.delete(key))
		return { output: NEW_OUTPUT, idempotency: { key, isNew: true } };
	const firstSeenMs = outcome.firstSeenMs.get(key);
	if (firstSeenMs === undefined)
		return { output: DUPLICATE_OUTPUT, idempotency: { key, isNew: false } };
	return {
		output: DUPLICATE_OUTPUT,
		idempotency: { key, isNew: false, firstSeenAt: isoTime(firstSeenMs) },
	};
}

/** Lease mode: new or taken over goes to true with its token; completed or in flight to false. */
function routeLease(
	outcome: LeaseOutcome,
	key: string,
	token: string,
	leaseSeconds: number,
): ItemRoute {
	const reserved = outcome.reserved.get(key);
	if (reserved !== undefined) {
		outcome.reserved.delete(key);
		// This execution now holds the key: a later item with the same key is in progress here.
		outcome.held.set(key, { status: 'in_progress', retryAfterSeconds: Math.ceil(leaseSeconds) });
		return {
			output: NEW_OUTPUT,
			idempotency: {
				key,
				isNew: true,
				token,
				leaseUntil: isoTime(reserved.leaseUntilMs),
				attempt: reserved.attempt,
			},
		};
	}
	const held = outcome.held.get(key) ?? {
		status: 'in_progress',
		retryAfterSeconds: Math.ceil(leaseSeconds),
	};
	return {
		output: DUPLICATE_OUTPUT,
		idempotency: {
			key,
			isNew: false,
			status: held.status,
			...(held.firstSeenMs !== undefined ? { firstSeenAt: isoTime(held.firstSeenMs) } : {}),
			...(held.retryAfterSeconds !== undefined
				? { retryAfterSeconds: held.retryAfterSeconds }
				: {}),
		},
	};
}

/** Output 0 (`true`): reserved by this execution, run the business step. Output 1 (`false`): already reserved. */
export async function reserveItems(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const keyOf = itemKeyDeriver(this, {
		source: this.getNodeParameter('keySource', 0) as KeySource,
		rawBodyProperty: this.getNodeParameter('rawBodyProperty', 0, 'data') as string,
	});
	const create = this.getNodeParameter('createTable', 0, true) as boolean;
	const mode = this.getNodeParameter('mode', 0, 'lease') as ReserveMode;
	const common = { outputCount: 2, action: 'reserve the keys', keyOf };

	// Complete Key and Release Key left empty act on what this execution reserved.
	const reservedHere: string[] = [];
	const noteReserved = (route: ItemRoute, key: string): ItemRoute => {
		if (route.output === NEW_OUTPUT) reservedHere.push(key);
		return route;
	};

	if (mode === 'simple') {
		const firstSeen = this.getNodeParameter('options.firstSeen', 0, true) as boolean;
		const outputs = await runKeyedBatch(this, {
			...common,
			prepare: { create, lease: false },
			apply: async (store, keys) => await store.reserve(keys, { firstSeen }),
			route: (outcome, key) => noteReserved(routeSimple(outcome, key), key),
		});
		recordReservedKeys(this, reservedHere);
		return outputs;
	}
	let leaseSeconds: number;
	try {
		leaseSeconds = leaseSecondsOf(this);
	} catch (error) {
		// Like every setup failure: error items, never the input passed on through `true` unreserved.
		return failWhole(this, error as NodeOperationError, 2);
	}
	// One token per execution: only this execution can complete or release what it reserved.
	const token = executionToken(this);
	const outputs = await runKeyedBatch(this, {
		...common,
		prepare: { create, lease: true },
		apply: async (store, keys) => await store.reserveWithLease(keys, { token, leaseSeconds }),
		route: (outcome, key) => noteReserved(routeLease(outcome, key, token, leaseSeconds), key),
	});
	recordReservedKeys(this, reservedHere);
	return outputs;
}
