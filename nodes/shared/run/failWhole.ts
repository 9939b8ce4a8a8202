import type {
	IExecuteFunctions,
	INodeExecutionData,
	NodeApiError,
	NodeOperationError,
} from 'n8n-workflow';

import { errorItem } from './itemErrors';

/**
 * A failure of the whole node (database down, bad table name). When the node continues on error,
 * every item becomes an error item on the first output, which n8n moves to the error output in
 * "continue (using error output)" mode. Throwing instead would make n8n pass the input items
 * through unchanged on the first output, i.e. route them as new events without a reservation.
 * `errorOutput` is where error items go in "continue" mode: a node whose first output means
 * "trusted" (Verify Webhook Signature's `valid`) puts them on another one.
 */
export function failWhole(
	context: IExecuteFunctions,
	error: NodeOperationError | NodeApiError,
	outputCount: number,
	itemErrors: ReadonlyMap<number, NodeOperationError> = new Map(),
	errorOutput = 0,
): INodeExecutionData[][] {
	if (!context.continueOnFail()) throw error;
	const outputs: INodeExecutionData[][] = Array.from({ length: outputCount }, () => []);
	const itemCount = context.getInputData().length;
	for (let itemIndex = 0; itemIndex < itemCount; itemIndex++)
		outputs[errorOutput].push(errorItem(context, itemErrors.get(itemIndex) ?? error, itemIndex));
	return outputs;
}
