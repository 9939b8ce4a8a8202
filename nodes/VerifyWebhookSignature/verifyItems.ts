import { NodeOperationError, type IExecuteFunctions, type INodeExecutionData } from 'n8n-workflow';

import { failWhole } from '../shared/n8n/failWhole';
import { errorItem } from '../shared/n8n/itemErrors';
import { RAW_BODY_HINT, readRawBody } from '../shared/webhook/rawBody';
import { verifySignature } from '../shared/webhook/verifySignature';
import { signatureSetup, type SignatureSetup } from './signatureSetup';

const VALID_OUTPUT = 0;
/** Error items go here in "continue" mode too: nothing unverified may ever reach `valid`. */
const INVALID_OUTPUT = 1;
const OUTPUT_COUNT = 2;

/** The exact request bytes, or the item's error (returned, so the caller decides: throw or continue). */
async function rawBodyOf(
	context: IExecuteFunctions,
	item: INodeExecutionData,
	itemIndex: number,
	property: string,
): Promise<Uint8Array | NodeOperationError> {
	let raw: Uint8Array | undefined;
	let readFailure = '';
	try {
		raw = await readRawBody(context, item, itemIndex, property);
	} catch (error) {
		readFailure = `: ${(error as Error).message}`;
	}
	if (raw !== undefined) return raw;
	const message = readFailure
		? `Could not read the raw body (binary property "${property}")${readFailure}`
		: `The item has no raw body (binary property "${property}"), so its signature cannot be checked`;
	return new NodeOperationError(context.getNode(), message, {
		itemIndex,
		description: RAW_BODY_HINT,
	});
}

/** Output 0 (`valid`): signed by the sender. Output 1 (`invalid`): anything else, with the reason. */
export async function verifyItems(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const node = this.getNode();
	let setup: SignatureSetup;
	try {
		setup = await signatureSetup(this);
	} catch (error) {
		// Settings and secret problems arrive as NodeOperationError naming the field, never a secret's value.
		const nodeError =
			error instanceof NodeOperationError ? error : new NodeOperationError(node, error as Error);
		return failWhole(this, nodeError, OUTPUT_COUNT, new Map(), INVALID_OUTPUT);
	}

	const items = this.getInputData();
	const continueOnFail = this.continueOnFail();
	const nowSeconds = Math.floor(Date.now() / 1000);
	const outputs: INodeExecutionData[][] = [[], []];
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		const item = items[itemIndex];
		const raw = await rawBodyOf(this, item, itemIndex, setup.rawBodyProperty);
		if (raw instanceof NodeOperationError) {
			if (!continueOnFail) throw raw;
			outputs[INVALID_OUTPUT].push(errorItem(raw, itemIndex));
			continue;
		}
		const verification = verifySignature(setup.scheme, item.json.headers, raw, setup.keys, {
			nowSeconds,
			toleranceSeconds: setup.toleranceSeconds,
		});
		const signature = verification.valid
			? { valid: true, provider: setup.provider }
			: { valid: false, provider: setup.provider, reason: verification.reason };
		const routed: INodeExecutionData = {
			json: { ...item.json, signature },
			pairedItem: { item: itemIndex },
		};
		if (item.binary !== undefined) routed.binary = item.binary;
		outputs[verification.valid ? VALID_OUTPUT : INVALID_OUTPUT].push(routed);
	}
	return outputs;
}
