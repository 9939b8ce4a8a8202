/**
 * A problem with one item's key. Kept free of n8n types so key derivation stays pure;
 * the nodes turn it into a NodeOperationError carrying the item index.
 */
export class KeyError extends Error {
	constructor(
		message: string,
		readonly hint: string,
	) {
		super(message);
		this.name = 'KeyError';
	}
}
