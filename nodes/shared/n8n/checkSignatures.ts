import {
	NodeOperationError,
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
} from 'n8n-workflow';

import { RAW_BODY_HINT, readRawBody } from '../webhook/rawBody';
import { verifySignature } from '../webhook/verifySignature';
import type { SignatureSetup } from './signatureSetup';

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

/** One item's verdict: `signature` is what the item carries on, valid or not. */
export interface SignatureCheck {
	valid: boolean;
	signature: IDataObject;
}

/**
 * Each input item's signature over its exact raw bytes, in item order. An item without a raw body
 * is an error, never valid: it throws, or when the node continues on error is returned as the item's
 * error for the caller to route where unverified items go.
 */
export async function checkSignatures(
	context: IExecuteFunctions,
	setup: SignatureSetup,
): Promise<Array<SignatureCheck | NodeOperationError>> {
	const items = context.getInputData();
	const continueOnFail = context.continueOnFail();
	const nowSeconds = Math.floor(Date.now() / 1000);
	const checks: Array<SignatureCheck | NodeOperationError> = [];
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		const item = items[itemIndex];
		const raw = await rawBodyOf(context, item, itemIndex, setup.rawBodyProperty);
		if (raw instanceof NodeOperationError) {
			if (!continueOnFail) throw raw;
			checks.push(raw);
			continue;
		}
		const verification = verifySignature(setup.scheme, item.json.headers, raw, setup.keys, {
			nowSeconds,
			toleranceSeconds: setup.toleranceSeconds,
		});
		checks.push(
			verification.valid
				? { valid: true, signature: { valid: true, provider: setup.provider } }
				: {
						valid: false,
						signature: { valid: false, provider: setup.provider, reason: verification.reason },
					},
		);
	}
	return checks;
}

/** The input item with its verdict added and everything else (binary included) passed on. */
export function withSignature(
	item: INodeExecutionData,
	itemIndex: number,
	signature: IDataObject,
): INodeExecutionData {
	const routed: INodeExecutionData = {
		json: { ...item.json, signature },
		pairedItem: { item: itemIndex },
	};
	if (item.binary !== undefined) routed.binary = item.binary;
	return routed;
}
