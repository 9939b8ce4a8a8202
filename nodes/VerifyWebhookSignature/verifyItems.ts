import { NodeOperationError, type IExecuteFunctions, type INodeExecutionData } from 'n8n-workflow';

import { checkSignatures, withSignature } from '../shared/n8n/checkSignatures';
import { failWhole } from '../shared/n8n/failWhole';
import { errorItem } from '../shared/n8n/itemErrors';
import { signatureSetup, type SignatureSetup } from '../shared/n8n/signatureSetup';
import type { Provider } from '../shared/webhook/signatureSchemes';

const VALID_OUTPUT = 0;
/** Error items go here in "continue" mode too: nothing unverified may ever reach `valid`. */
const INVALID_OUTPUT = 1;
const OUTPUT_COUNT = 2;

/** Output 0 (`valid`): signed by the sender. Output 1 (`invalid`): anything else, with the reason. */
export async function verifyItems(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const node = this.getNode();
	let setup: SignatureSetup;
	try {
		setup = await signatureSetup(this, this.getNodeParameter('provider', 0) as Provider);
	} catch (error) {
		// Settings and secret problems arrive as NodeOperationError naming the field, never a secret's value.
		const nodeError =
			error instanceof NodeOperationError ? error : new NodeOperationError(node, error as Error);
		return failWhole(this, nodeError, OUTPUT_COUNT, new Map(), INVALID_OUTPUT);
	}

	const items = this.getInputData();
	const outputs: INodeExecutionData[][] = [[], []];
	(await checkSignatures(this, setup)).forEach((check, itemIndex) => {
		if (check instanceof NodeOperationError)
			outputs[INVALID_OUTPUT].push(errorItem(check, itemIndex));
		else
			outputs[check.valid ? VALID_OUTPUT : INVALID_OUTPUT].push(
				withSignature(items[itemIndex], itemIndex, check.signature),
			);
	});
	return outputs;
}
