import type {
	IExecuteFunctions,
	INodeExecutionData,
	NodeApiError,
	NodeOperationError,
} from 'n8n-workflow';

import { clientErrorDetails } from '../keys/clientErrors';
import { clientErrorKindOf, inputError } from '../errors/nodeErrors';

/**
 * The item n8n expects for a failed item when the node continues on error. It carries only the
 * error (`error`, `message` and `details`, the keys n8n recognises), so with "continue (using error
 * output)" n8n moves it to the error output. A failure the sender caused carries its kind in
 * `details` (`kind`, `status`, `title`, `type`), which the templates answer as problem+json.
 */
export function errorItem(
	error: NodeOperationError | NodeApiError,
	itemIndex: number,
): INodeExecutionData {
	const kind = clientErrorKindOf(error);
	return {
		json: {
			error: error.message,
			...(error.description ? { message: error.description } : {}),
			...(kind !== undefined ? { details: { ...clientErrorDetails(kind) } } : {}),
		},
		pairedItem: { item: itemIndex },
	};
}

export interface ItemKeys<Target = string> {
	/** The key (or key and token) of each item, undefined where the item failed. */
	keys: Array<Target | undefined>;
	/** Failed items by index, only filled when the node continues on error (otherwise the first failure throws). */
	failed: Map<number, NodeOperationError>;
}

/** Computes one key per item; a bad item throws or, when the node continues on error, is set aside. */
export async function collectItemKeys<Target>(
	context: IExecuteFunctions,
	itemCount: number,
	keyOf: (itemIndex: number) => Promise<Target> | Target,
): Promise<ItemKeys<Target>> {
	const continueOnFail = context.continueOnFail();
	const keys: Array<Target | undefined> = new Array(itemCount);
	const failed = new Map<number, NodeOperationError>();
	for (let itemIndex = 0; itemIndex < itemCount; itemIndex++) {
		try {
			const key = keyOf(itemIndex);
			// Awaiting only real promises keeps 10,000 synchronous keys from costing 10,000 microtasks.
			keys[itemIndex] = key instanceof Promise ? await key : key;
		} catch (error) {
			const nodeError = inputError(context.getNode(), error as Error, itemIndex);
			if (!continueOnFail) throw nodeError;
			failed.set(itemIndex, nodeError);
		}
	}
	return { keys, failed };
}
