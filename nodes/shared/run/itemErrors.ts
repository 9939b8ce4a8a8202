import type {
	IExecuteFunctions,
	INodeExecutionData,
	NodeApiError,
	NodeOperationError,
} from 'n8n-workflow';

import { clientErrorDetails } from '../keys/clientErrors';
import { clientErrorKindOf, inputError } from '../errors/nodeErrors';
import { nodeOfRun } from '../parameters/runNode';

/**
 * The item n8n expects for a failed item when the node continues on error: json `error`, `message`
 * (the hint) and, for a failure the sender caused, `details` (`kind`, `status`, `title`, `type`),
 * which the templates answer as problem+json.
 *
 * With "continue (using error output)" n8n moves an item to the error output when the item carries
 * its error (`item.error`), or when its json has only the keys n8n recognises, which differ by line:
 * 2.x accepts `error`, `message` and `details`; 1.x only `error`, or `error` and `message`
 * (n8n-core 1.122 `WorkflowExecute.handleNodeErrorOutput`). By json alone a client error (it has
 * `details`) stayed on the first output on 1.x: an invalid id routed as a new event. So in that mode
 * the item carries its error too, which both lines check first; but not as an enumerable property:
 * after routing, both lines replace the json of any item that still has `error` with
 * `{ error: message }` (`WorkflowExecute.normalizeNodeErrors`), which would drop `message`,
 * `details` and the input item's fields merged in. The error output's item is a copy
 * (`{ ...item, json: { ...inputItem.json, ...item.json } }`) that leaves a non-enumerable `error`
 * behind, so the templates read the json as the node wrote it. Other modes get no `error`: there
 * n8n would replace the json of the item on the regular output the same way.
 */
export function errorItem(
	context: IExecuteFunctions,
	error: NodeOperationError | NodeApiError,
	itemIndex: number,
): INodeExecutionData {
	const kind = clientErrorKindOf(error);
	const item: INodeExecutionData = {
		json: {
			error: error.message,
			...(error.description ? { message: error.description } : {}),
			...(kind !== undefined ? { details: { ...clientErrorDetails(kind) } } : {}),
		},
		pairedItem: { item: itemIndex },
	};
	if (nodeOfRun(context).onError === 'continueErrorOutput')
		Object.defineProperty(item, 'error', {
			value: error,
			enumerable: false,
			writable: true,
			configurable: true,
		});
	return item;
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
