import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { verifyItemSignatures } from '../../shared/signatureNode/checkSignatures';

/** Output 0 (`valid`): signed by the sender. Output 1 (`invalid`): anything else, with the reason. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const { outputs } = await verifyItemSignatures(this, {
		outputCount: 2,
		schemeParameter: 'provider',
		validOutput: 0,
		// Error items go here in "continue" mode too: nothing unverified may ever reach `valid`.
		invalidOutput: 1,
	});
	return outputs;
}
