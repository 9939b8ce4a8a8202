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
 * Why a key's token no longer owns it. Only Complete Key reports this as an error: its business step
 * ran, and another execution may run it again, which someone must know about.
 */
export function lostKeyError(
	key: string,
	found: { rowExists: boolean; attempt?: number },
): KeyError {
	const idempotentHint =
		'Make Lease longer than the slowest run from Reserve to Complete Key, and make the business step idempotent too (for example a unique index on its event key).';
	if (!found.rowExists) {
		return new KeyError(
			`The key "${key}" is no longer reserved: it was released or purged before Complete Key ran`,
			`A retry of this event may run the business step again. ${idempotentHint}`,
		);
	}
	const attempt = found.attempt === undefined ? '' : ` (attempt ${found.attempt})`;
	return new KeyError(
		`The key "${key}" was taken over by another execution${attempt} after this execution's lease ended`,
		`The business step ran here and may run there too. ${idempotentHint}`,
	);
}
