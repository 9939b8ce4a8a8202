import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { assertStorableKey } from '../keys/composeKey';
import { KeyError } from '../keys/KeyError';
import { normalizeId } from '../keys/keySources';
import type { OwnedKey } from '../store/KeyStore';
import { existingExecutionToken, soleReservedKey } from './executionReservations';
import { itemParameterReader } from './itemParameter';

/** A parameter left empty: the execution's own reservation stands in for it. */
function isEmptyParameter(context: IExecuteFunctions, name: string): boolean {
	const raw = context.getNode().parameters[name];
	return raw === undefined || raw === null || raw === '';
}

/**
 * Reads each item's key and, where there is one, the token of the reservation that holds it
 * (parameters `key` and `reservation`), as Complete Key and Release Key take them. Left empty, Key
 * is the one key this execution reserved and Reservation is this execution's lease: no expression
 * to evaluate per item, which is most of what these nodes would otherwise cost n8n.
 */
export function ownedKeyReader(
	context: IExecuteFunctions,
	action: 'complete' | 'release',
): (item: INodeExecutionData, itemIndex: number) => OwnedKey {
	const readKey = isEmptyParameter(context, 'key')
		? () => soleReservedKey(context, action)
		: itemParameterReader(context, 'key');
	const readToken = isEmptyParameter(context, 'reservation')
		? () => existingExecutionToken(context)
		: itemParameterReader(context, 'reservation');
	return (item, itemIndex) => {
		const key = normalizeId(readKey(item, itemIndex), `key to ${action}`);
		if (key === undefined) {
			throw new KeyError(
				`The key to ${action} is empty`,
				"Point Key at the reserved key, e.g. {{ $('Idempotency Reserve').item.json.idempotency.key }}, or leave Key empty for the key this execution reserved.",
			);
		}
		assertStorableKey(key);
		const token = readToken(item, itemIndex);
		if (token === undefined || token === null || token === '') return { key };
		if (typeof token !== 'string') {
			throw new KeyError(
				`The token of key "${key}" is not text`,
				"Point Reservation at idempotency.token of the Idempotency Reserve output, or leave it empty for this execution's reservation.",
			);
		}
		return { key, token };
	};
}

/**
 * Complete Key and the exactly-once step take a key only with the token of its reservation: only
 * the execution that holds a key may finish it.
 */
export function ownedKeyWithTokenReader(
	context: IExecuteFunctions,
): (item: INodeExecutionData, itemIndex: number) => OwnedKey & { token: string } {
	const read = ownedKeyReader(context, 'complete');
	return (item, itemIndex) => {
		const target = read(item, itemIndex);
		if (target.token === undefined) {
			throw new KeyError(
				`The key "${target.key}" comes without the token of its reservation`,
				'Reserve it in Lease mode earlier in this execution and leave Reservation empty, or point Reservation at idempotency.token of the Reserve output.',
			);
		}
		return { key: target.key, token: target.token };
	};
}

/** What a key's row says when the item's token no longer holds it. */
export interface LostKey {
	rowExists: boolean;
	/** The attempt of the reservation that holds it now. */
	attempt?: number;
	/** That reservation has completed it already (known to the exactly-once step, which locks the row). */
	completed?: boolean;
}

/** Who holds the key instead, as the start of a sentence; `before` ends "released or purged …". */
function lostKeySentence(key: string, found: LostKey, before: string): string {
	if (!found.rowExists)
		// An asynchronously replicated key store that failed over forgets recent reservations too.
		return `The key "${key}" is no longer reserved: it was released or purged (or lost by a key-store failover) ${before}`;
	const attempt = found.attempt === undefined ? '' : ` (attempt ${found.attempt})`;
	const there = found.completed === true ? ', which has completed it' : '';
	return `The key "${key}" was taken over by another execution${attempt}${there} after this execution's lease ended`;
}

/**
 * Why a key's token no longer owns it. Only Complete Key reports this as an error: its business step
 * ran, and another execution may run it again, which someone must know about.
 */
export function lostKeyError(key: string, found: LostKey): KeyError {
	const idempotentHint =
		'Make Lease longer than the slowest run from Reserve to Complete Key, and make the business step idempotent too (for example a unique index on its event key).';
	if (!found.rowExists) {
		return new KeyError(
			lostKeySentence(key, found, 'before Complete Key ran'),
			`A retry of this event may run the business step again. ${idempotentHint}`,
		);
	}
	return new KeyError(
		lostKeySentence(key, found, ''),
		`The business step ran here and may run there too. ${idempotentHint}`,
	);
}

/**
 * The exactly-once step found the key lost when it locked the row: nothing of its statements ran
 * or committed, so the event's effect happens once, in whichever execution holds the key.
 */
export function lostInTransactionError(key: string, found: LostKey): KeyError {
	return new KeyError(
		`${lostKeySentence(key, found, 'before this step ran')}, so this step's statements were rolled back`,
		found.rowExists
			? 'Nothing was committed here: the execution that holds the key runs the step, so the effect happens once. Make Lease longer than the slowest run from Reserve to this step.'
			: 'Nothing was committed here. A retry of the event reserves it again and runs the step then.',
	);
}

/**
 * When the lease of the targets' keys ends, where the input items carry it (Reserve's
 * `idempotency.leaseUntil`, passed through the business step) and it is one time for all of them.
 */
export function knownLeaseEnd(
	items: readonly INodeExecutionData[],
	keys: readonly string[],
): string | undefined {
	const wanted = new Set(keys);
	const ends = new Set<string>();
	for (const item of items) {
		const idempotency = item.json.idempotency as
			| { key?: unknown; leaseUntil?: unknown }
			| undefined;
		if (typeof idempotency?.leaseUntil !== 'string' || typeof idempotency.key !== 'string')
			continue;
		if (wanted.has(idempotency.key)) ends.add(idempotency.leaseUntil);
	}
	return ends.size === 1 ? [...ends][0] : undefined;
}

const leaseEnds = (leaseEnd: string | undefined) =>
	leaseEnd === undefined ? 'until its lease ends' : `until its lease ends at ${leaseEnd}`;

/**
 * Complete Key could not reach the key store through all its retries: what that leaves behind and
 * the choice it leaves, for the error's description (an Error Workflow acts on it).
 */
export function completeUnreachableText(leaseEnd: string | undefined): string {
	return [
		`The business step's effect has committed and the key is not completed: it stays in progress, held by this execution's reservation ${leaseEnds(leaseEnd)}, and the sender's retries get "in progress" until then.`,
		'Releasing it (Release Key, or Idempotency Keys → Purge) would run the step again at once, on the next retry; keeping it runs the step again after the lease ends, when a retry takes it over.',
		'Either way the step runs twice unless it is idempotent itself. For a business step on PostgreSQL, the Exactly-Once SQL node is the real answer: its effect and the completion commit together, so an outage rolls both back and the retry runs the step once.',
	].join(' ');
}

/** Release Key could not reach the key store through all its retries: what that leaves behind. */
export function releaseUnreachableText(leaseEnd: string | undefined): string {
	return `The key is not released: it stays in progress ${leaseEnds(leaseEnd)}, and the sender's retries get "in progress" until then; after that a retry takes it over and runs the step. Nothing ran twice.`;
}
