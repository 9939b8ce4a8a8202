import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { noteWitnessedVerdicts } from '../../shared/run/witnessedVerdicts';
import { verifyItemSignatures } from '../../shared/signatureNode/checkSignatures';

/** Output 0 (`valid`): signed by the sender. Output 1 (`invalid`): anything else, with the reason. */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const { outputs, valid } = await verifyItemSignatures(this, {
		outputCount: 2,
		schemeParameter: 'provider',
		validOutput: 0,
		// Error items go here in "continue" mode too: nothing unverified may ever reach `valid`.
		invalidOutput: 1,
	});
	// A Reserve after this one trusts the verdicts it finds on items only where they were made here.
	noteWitnessedVerdicts(this, [...valid.values()]);
	return outputs;
}
