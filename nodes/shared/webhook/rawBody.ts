import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

/**
 * The exact bytes the sender posted: the Webhook node's raw-body binary property (option "Raw Body").
 * Signatures and body hashes are computed over these bytes, never over a re-serialised body.
 * Undefined when the item has no such binary (Raw Body off, or the item did not come from a webhook).
 */
export async function readRawBody(
	context: IExecuteFunctions,
	item: INodeExecutionData,
	itemIndex: number,
	rawBodyProperty: string,
): Promise<Uint8Array | undefined> {
	if (item.binary?.[rawBodyProperty] === undefined) return undefined;
	// Binary data may live outside memory (filesystem or S3 mode): the helper reads it wherever it is.
	return await context.helpers.getBinaryDataBuffer(itemIndex, rawBodyProperty);
}

/** What a user must do when a node needs the raw body and the item has none. */
export const RAW_BODY_HINT =
	'Turn on "Raw Body" in the Webhook node options, or check the Raw Body Property name.';
