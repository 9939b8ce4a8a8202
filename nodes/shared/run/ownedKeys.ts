import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { assertStorableKey } from '../keys/composeKey';
import { KeyError } from '../keys/KeyError';
import { normalizeId } from '../keys/keySources';
import { forgetKnownSteps } from '../run/knownSteps';
import {
	adoptRedriveClaim,
	existingExecutionToken,
	knownStepsScope,
	soleReservedKey,
	type OwnedKeyAction,
} from './executionReservations';
import type { OwnedKey } from '../store/KeyStore';
import { itemParameterReader } from '../parameters/itemParameter';
import { nodeOfRun } from '../parameters/runNode';
import { redriveClaimOf, redriveClaimOfTrigger, type RedriveClaim } from './redriveClaim';

/** What a node does with the key, as its messages say it ("the key to complete is empty"). */

/** A parameter left empty: the execution's own reservation stands in for it. */
function isEmptyParameter(context: IExecuteFunctions, name: string): boolean {
	const raw = nodeOfRun(context).parameters[name];
	return raw === undefined || raw === null || raw === '';
}

/**
 * In an execution the Redrive Trigger started (answer first: a stored delivery run again), nothing
 * was reserved by the execution: the trigger claimed the key, and its item carries the key and the
 * claim's token (`idempotency.redrive`). The first package node that reads it adopts it as the
 * execution's reservation, so Key and Reservation left empty mean that claim from then on, in every
 * later node. That node finds the claim in its input, or else in the trigger's own output: Complete
 * Key right after a business step whose output carries no claim still completes it. Never in an
 * execution that holds a lease already (every run Reserve started): that check comes first, so those
 * runs look at nothing. The token is checked by each statement, so an item with a made-up claim can
 * complete nothing.
 */
function adoptRedriveClaimOfExecution(context: IExecuteFunctions): void {
	if (existingExecutionToken(context) !== undefined) return;
	let claim: RedriveClaim | undefined;
	for (const item of context.getInputData()) {
		claim = redriveClaimOf(item.json);
		if (claim !== undefined) break;
	}
	claim ??= redriveClaimOfTrigger(context);
	if (claim !== undefined) adoptRedriveClaim(context, claim.key, claim.token);
}

/**
 * Reads each item's key and, where there is one, the token of the reservation that holds it
 * (parameters `key` and `reservation`), as Complete Key and Release Key take them. Left empty, Key
 * is the one key this execution reserved and Reservation is this execution's lease: no expression
 * to evaluate per item, which is most of what these nodes would otherwise cost n8n.
 */
export function ownedKeyReader(
	context: IExecuteFunctions,
	action: OwnedKeyAction,
): (item: INodeExecutionData, itemIndex: number) => OwnedKey {
	const keyEmpty = isEmptyParameter(context, 'key');
	const reservationEmpty = isEmptyParameter(context, 'reservation');
	if (keyEmpty || reservationEmpty) adoptRedriveClaimOfExecution(context);
	const readKey = keyEmpty
		? () => soleReservedKey(context, action)
		: itemParameterReader(context, 'key');
	const readToken = reservationEmpty
		? () => existingExecutionToken(context)
		: itemParameterReader(context, 'reservation');
	// Completing, releasing or recording changes the row: what Reserve found no longer answers
	// Skip If Done (knownSteps.ts). Only checking a step leaves it standing.
	const changes = action !== 'check a step of';
	const scope = changes ? knownStepsScope(context) : undefined;
	return (item, itemIndex) => {
		const key = normalizeId(readKey(item, itemIndex), `key to ${action}`);
		if (key === undefined) {
			throw new KeyError(
				`The key to ${action} is empty`,
				"Point Key at the reserved key, e.g. {{ $('Idempotency Reserve').item.json.idempotency.key }}, or leave Key empty for the key this execution reserved.",
			);
		}
		assertStorableKey(key);
		if (scope !== undefined) forgetKnownSteps(scope, key);
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
	action: Exclude<OwnedKeyAction, 'release'> = 'complete',
): (item: INodeExecutionData, itemIndex: number) => OwnedKey & { token: string } {
	const read = ownedKeyReader(context, action);
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
