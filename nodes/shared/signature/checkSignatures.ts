import {
	NodeOperationError,
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
} from 'n8n-workflow';

import { failWhole } from '../run/failWhole';
import { errorItem } from '../run/itemErrors';
import { passedOn } from '../run/itemFlow';
import { RAW_BODY_HINT, readRawBody } from '../webhook/rawBody';
import type { InvalidReason, Provider, SignatureScheme } from '../webhook/signatureSchemes';
import { requestUrl } from '../webhook/requestUrl';
import { unsignedBodyCause } from '../webhook/signedBody';
import { verifySignature, type VerifiedRequest } from '../webhook/verifySignature';
import { signatureSetup, type SignatureSetup } from './signatureSetup';

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

/** What a signature can cover: the Webhook item's headers, the exact bytes, and the URL for schemes that sign it. */
function requestOf(
	item: INodeExecutionData,
	body: Uint8Array,
	scheme: SignatureScheme,
): VerifiedRequest {
	const url = scheme.needsUrl ? requestUrl(item.json) : undefined;
	return { headers: item.json.headers, body, url };
}

/** One item's verdict: `signature` is what the item carries on, valid or not. */
interface SignatureCheck {
	valid: boolean;
	signature: IDataObject;
}

const invalid = (provider: Provider, reason: InvalidReason): SignatureCheck => ({
	valid: false,
	signature: { valid: false, provider, reason },
});

/**
 * Each input item's signature over its exact raw bytes, in item order. An item whose body is not
 * those bytes (multipart, an uploaded file in the raw body's place: signedBody.ts) is invalid before
 * any reading or crypto. An item without a raw body is an error, never valid: it throws, or when the
 * node continues on error is returned as the item's error for the caller to route where unverified
 * items go.
 */
async function checkSignatures(
	context: IExecuteFunctions,
	setup: SignatureSetup,
): Promise<Array<SignatureCheck | NodeOperationError>> {
	const items = context.getInputData();
	const continueOnFail = context.continueOnFail();
	const nowSeconds = Math.floor(Date.now() / 1000);
	const checks: Array<SignatureCheck | NodeOperationError> = [];
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		const item = items[itemIndex];
		const rawBodyBinary = item.binary?.[setup.rawBodyProperty];
		if (unsignedBodyCause(item.json.headers, rawBodyBinary) !== undefined) {
			checks.push(invalid(setup.provider, 'unsigned_body'));
			continue;
		}
		const raw = await rawBodyOf(context, item, itemIndex, setup.rawBodyProperty);
		if (raw instanceof NodeOperationError) {
			if (!continueOnFail) throw raw;
			checks.push(raw);
			continue;
		}
		const verification = verifySignature(
			setup.scheme,
			requestOf(item, raw, setup.scheme),
			setup.keys,
			{
				nowSeconds,
				toleranceSeconds: setup.toleranceSeconds,
			},
		);
		checks.push(
			verification.valid
				? { valid: true, signature: { valid: true, provider: setup.provider } }
				: invalid(setup.provider, verification.reason),
		);
	}
	return checks;
}

export interface SignatureOutputs {
	outputCount: number;
	/** The parameter that holds the scheme: Verify's `provider`, Reserve's `signature`. */
	schemeParameter: string;
	/** Where signed items go, with their verdict; undefined: nowhere (Reserve reserves them instead). */
	validOutput?: number;
	/** Where everything else goes: a failed signature with its reason, an unreadable item as an error. */
	invalidOutput: number;
}

export interface VerifiedItems {
	/** The outputs filled so far; with a setup failure, every item as an error on `invalidOutput`. */
	outputs: INodeExecutionData[][];
	/** The input items whose signature holds (none after a setup failure). */
	valid: Set<number>;
	/** The scheme they were checked with; undefined after a setup failure. */
	scheme?: SignatureScheme;
}

/**
 * The signature flow Verify Webhook Signature and Reserve (version 2) share: the setup (scheme,
 * secrets, tolerance), then every item checked over its exact raw bytes. Nothing unverified ever
 * reaches the valid side: a setup failure fails every item onto `invalidOutput` (in "continue" mode
 * too), and so does an item whose raw body cannot be read.
 */
export async function verifyItemSignatures(
	context: IExecuteFunctions,
	{ outputCount, schemeParameter, validOutput, invalidOutput }: SignatureOutputs,
): Promise<VerifiedItems> {
	let setup: SignatureSetup;
	try {
		setup = await signatureSetup(context, context.getNodeParameter(schemeParameter, 0) as Provider);
	} catch (error) {
		// Settings and secret problems arrive as NodeOperationError naming the field, never a secret's value.
		const nodeError =
			error instanceof NodeOperationError
				? error
				: new NodeOperationError(context.getNode(), error as Error);
		const failed = failWhole(context, nodeError, outputCount, new Map(), invalidOutput);
		return { outputs: failed, valid: new Set() };
	}

	const items = context.getInputData();
	const outputs: INodeExecutionData[][] = Array.from({ length: outputCount }, () => []);
	const valid = new Set<number>();
	(await checkSignatures(context, setup)).forEach((check, itemIndex) => {
		if (check instanceof NodeOperationError) {
			outputs[invalidOutput].push(errorItem(context, check, itemIndex));
			return;
		}
		if (check.valid) valid.add(itemIndex);
		const output = check.valid ? validOutput : invalidOutput;
		if (output !== undefined)
			outputs[output].push(passedOn(items[itemIndex], itemIndex, { signature: check.signature }));
	});
	return { outputs, valid, scheme: setup.scheme };
}
