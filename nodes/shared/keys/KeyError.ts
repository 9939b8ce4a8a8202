import type { ClientErrorKind } from './clientErrors';

/**
 * A problem with one item's key. Kept free of n8n types so key derivation stays pure;
 * the nodes turn it into a NodeOperationError carrying the item index. `kind` is set where the
 * sender caused it (clientErrors.ts): the item's error then says so, and templates answer 4xx.
 */
export class KeyError extends Error {
	constructor(
		message: string,
		readonly hint: string,
		readonly kind?: ClientErrorKind,
	) {
		super(message);
		this.name = 'KeyError';
	}
}
