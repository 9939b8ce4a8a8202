import { NodeOperationError, type IExecuteFunctions, type INodeExecutionData } from 'n8n-workflow';

import { checkSignatures, withSignature } from '../shared/n8n/checkSignatures';
import { failWhole } from '../shared/n8n/failWhole';
import { errorItem } from '../shared/n8n/itemErrors';
import { signatureSetup, type SignatureSetup } from '../shared/n8n/signatureSetup';
import type { Provider } from '../shared/webhook/signatureSchemes';
import type { ReserveOutputs } from './reserveOutputs';

export interface Verified {
	/** The items whose signature holds, the only ones to reserve; undefined when nothing is verified. */
	valid?: ReadonlySet<number>;
	/** The `invalid signature` output filled (items with their reason, and unreadable items as errors). */
	outputs: INodeExecutionData[][];
	/** Nothing is left to reserve: `outputs` is the node's answer. */
	onlyInvalid: boolean;
}

/**
 * Verify Webhook Signature's check, inside Reserve: the same setup and per-item verdict, with
 * everything unverified (a failed signature, an item without raw body when the node continues on
 * error) kept on `invalid signature`, never reaching a reservation.
 */
export async function verifyBeforeReserving(
	context: IExecuteFunctions,
	signature: string,
	outputs: ReserveOutputs,
): Promise<Verified> {
	const invalidOutput = outputs.invalidSignature;
	const answer: INodeExecutionData[][] = Array.from({ length: outputs.count }, () => []);
	if (invalidOutput === undefined) return { outputs: answer, onlyInvalid: false };

	let setup: SignatureSetup;
	try {
		setup = await signatureSetup(context, signature as Provider);
	} catch (error) {
		// Settings and secret problems arrive as NodeOperationError naming the field, never a secret's value.
		const nodeError =
			error instanceof NodeOperationError
				? error
				: new NodeOperationError(context.getNode(), error as Error);
		const failed = failWhole(context, nodeError, outputs.count, new Map(), invalidOutput);
		return { outputs: failed, onlyInvalid: true };
	}

	const items = context.getInputData();
	const valid = new Set<number>();
	(await checkSignatures(context, setup)).forEach((check, itemIndex) => {
		if (check instanceof NodeOperationError)
			answer[invalidOutput].push(errorItem(check, itemIndex));
		else if (check.valid) valid.add(itemIndex);
		else answer[invalidOutput].push(withSignature(items[itemIndex], itemIndex, check.signature));
	});
	return { valid, outputs: answer, onlyInvalid: valid.size === 0 };
}
