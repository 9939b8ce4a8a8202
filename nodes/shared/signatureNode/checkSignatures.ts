import {
	NodeOperationError,
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
} from 'n8n-workflow';

import { RAW_BODY_HINT, readRawBody } from '../delivery/rawBody';
import {
	readVerifiedDelivery,
	verdictOf,
	type VerifiedDelivery,
} from '../delivery/verifiedDelivery';
import { inputError } from '../errors/nodeErrors';
import { KeyError } from '../keys/KeyError';
import { failWhole } from '../run/failWhole';
import { errorItem } from '../run/itemErrors';
import { passedOn } from '../run/itemFlow';
import type { InvalidReason, Provider, SignatureScheme } from '../webhook/signatureSchemes';
import { requestUrl, UNEXPRESSIBLE_QUERY } from '../webhook/requestUrl';
import { unsignedBodyCause } from '../webhook/signedBody';
import { fillsBody } from '../webhook/signedParse';
import { verifySignature } from '../webhook/verifySignature';
import {
	answerHandshake,
	isHandshake,
	signedHandshakeBody,
	type HandshakeOutcome,
} from '../webhook/handshakes';
import { answerHandshakes, unsignedHandshake } from './answerHandshakes';
import { signatureSetup, type SignatureSetup } from './signatureSetup';
import { nodeParameter } from '../parameters/nodeParameter';

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

/** The URL for schemes that sign it; a query that cannot be rebuilt exactly is malformed, never left out. */
function urlOf(item: INodeExecutionData, scheme: SignatureScheme) {
	return scheme.needsUrl ? requestUrl(item.json) : undefined;
}

/**
 * One item's verdict: `signature` is what the item carries on, valid or not; or the sender's
 * handshake, which the node answers itself and hands on to no output.
 */
type SignatureCheck =
	| { valid: true; signature: IDataObject; delivery: VerifiedDelivery }
	| { valid: false; signature: IDataObject }
	| { handshake: HandshakeOutcome };

const invalid = (provider: Provider, reason: InvalidReason): SignatureCheck => ({
	valid: false,
	signature: { valid: false, provider, reason },
});

/**
 * A valid item read once more from what was signed (verifiedDelivery.ts): its parse, its replay
 * guard digest; or the item error that refuses a media type its sender does not use.
 */
function verifiedCheck(
	context: IExecuteFunctions,
	setup: SignatureSetup,
	item: INodeExecutionData,
	itemIndex: number,
	bytes: Uint8Array,
	url: string | undefined,
): SignatureCheck | NodeOperationError {
	const { headers, body } = item.json;
	const delivery = readVerifiedDelivery(setup.provider, setup.scheme.label, setup.rules, {
		bytes,
		headers,
		url,
		n8nBody: body,
	});
	if (delivery instanceof KeyError) return inputError(context.getNode(), delivery, itemIndex);
	// A `+json` body n8n did not parse: the workflow reads the signed parse as it would JSON's.
	if (fillsBody(delivery.parse.mediaType, body))
		item.json.body = delivery.parse.body as IDataObject;
	return { valid: true, signature: verdictOf(delivery), delivery };
}

/**
 * Each input item's signature over its exact raw bytes, in item order. An item whose body is not
 * those bytes (multipart, an uploaded file in the raw body's place: signedBody.ts) is invalid before
 * any reading or crypto, and so is a signed URL whose query cannot be rebuilt. An item without a raw
 * body is an error, never valid; so is a valid one under a media type its sender does not use
 * (signedParse.ts): it throws, or when the node continues on error is returned as the item's error
 * for the caller to route where unverified items go.
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
		// An unsigned handshake (Meta's GET) has no body to check: recognised before any body check.
		const unsigned = await unsignedHandshake(context, setup, item, itemIndex);
		if (unsigned !== undefined) {
			checks.push({ handshake: unsigned });
			continue;
		}
		const rawBodyBinary = item.binary?.[setup.rawBodyProperty];
		if (unsignedBodyCause(item.json.headers, rawBodyBinary) !== undefined) {
			checks.push(invalid(setup.provider, 'unsigned_body'));
			continue;
		}
		const url = urlOf(item, setup.scheme);
		if (url === UNEXPRESSIBLE_QUERY) {
			checks.push(invalid(setup.provider, 'malformed'));
			continue;
		}
		const raw = await rawBodyOf(context, item, itemIndex, setup.rawBodyProperty);
		if (raw instanceof NodeOperationError) {
			if (!continueOnFail) throw raw;
			checks.push(raw);
			continue;
		}
		const signed = { headers: item.json.headers, body: raw, url };
		const verifyWith = (keys: readonly Uint8Array[]) =>
			verifySignature(setup.scheme, signed, keys, {
				nowSeconds,
				toleranceSeconds: setup.toleranceSeconds,
			});
		const verification = verifyWith(setup.keys);
		if (!verification.valid) {
			checks.push(invalid(setup.provider, verification.reason));
			continue;
		}
		const check = verifiedCheck(context, setup, item, itemIndex, raw, url);
		if (check instanceof NodeOperationError && !continueOnFail) throw check;
		const verifiedBy = (key: Uint8Array) => verifyWith([key]).valid;
		checks.push(signedHandshake(setup, item, check, raw, verifiedBy) ?? check);
	}
	return checks;
}

/**
 * A signed handshake, recognised from the signed body only (its parse, never n8n's): a real event
 * whose signed body says otherwise is never answered as one.
 */
function signedHandshake(
	setup: SignatureSetup,
	item: INodeExecutionData,
	check: SignatureCheck | NodeOperationError,
	raw: Uint8Array,
	verifiedBy: (key: Uint8Array) => boolean,
): SignatureCheck | undefined {
	const { handshake } = setup;
	if (handshake === undefined || !handshake.signed) return undefined;
	if (check instanceof NodeOperationError || !('valid' in check) || !check.valid) return undefined;
	const request = {
		headers: item.json.headers,
		query: item.json.query,
		body: signedHandshakeBody(handshake, check.delivery.parse),
		bodiless: raw.length === 0,
	};
	if (!isHandshake(handshake, request)) return undefined;
	// During a rotation the sender signs, and expects its answer keyed, with one secret: the one whose
	// signature held (Zoom's encryptedToken), not always the current one.
	return {
		handshake: answerHandshake(handshake, request, {
			secret: setup.keys.find(verifiedBy),
			verifyToken: setup.verifyToken,
		}),
	};
}

/** A verdict another copy of the secret could change: an invalid signature or a refused handshake. */
function refusedWithHeldSecret(check: SignatureCheck | NodeOperationError): boolean {
	if (check instanceof NodeOperationError) return false;
	if ('handshake' in check) return check.handshake.refused !== undefined;
	return !check.valid;
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
	/** The input items whose signature holds (none after a setup failure), each read once (verifiedDelivery.ts). */
	valid: Map<number, VerifiedDelivery>;
	/** The scheme they were checked with; undefined after a setup failure. */
	scheme?: SignatureScheme;
}

/**
 * The signature flow Verify Webhook Signature and Reserve (version 2) share: the setup (scheme,
 * secrets, tolerance), then every item checked over its exact raw bytes. A sender's handshake
 * (handshakeTypes.ts) is answered here, after its signature where the sender signs it, and goes to
 * no output: nothing is reserved for it, no business step runs (answerHandshakes.ts). Nothing
 * unverified ever reaches the valid side: a setup failure fails every item onto `invalidOutput` (in
 * "continue" mode too), and so does an item whose raw body cannot be read.
 */
export async function verifyItemSignatures(
	context: IExecuteFunctions,
	{ outputCount, schemeParameter, validOutput, invalidOutput }: SignatureOutputs,
): Promise<VerifiedItems> {
	// Settings and secret problems arrive as NodeOperationError naming the field, never a secret's value.
	const setupFailed = (error: unknown): VerifiedItems => {
		const nodeError =
			error instanceof NodeOperationError
				? error
				: new NodeOperationError(context.getNode(), error as Error);
		const failed = failWhole(context, nodeError, outputCount, new Map(), invalidOutput);
		return { outputs: failed, valid: new Map() };
	};
	let provider: Provider;
	let setup: SignatureSetup;
	try {
		provider = nodeParameter(context, schemeParameter) as Provider;
		setup = await signatureSetup(context, provider);
	} catch (error) {
		return setupFailed(error);
	}
	let checks = await checkSignatures(context, setup);
	// A held copy of the secret only ever accepts: what it refuses is checked again afresh.
	if (setup.held && checks.some(refusedWithHeldSecret)) {
		try {
			setup = await signatureSetup(context, provider, { fresh: true });
		} catch (error) {
			return setupFailed(error);
		}
		checks = await checkSignatures(context, setup);
	}

	const items = context.getInputData();
	const outputs: INodeExecutionData[][] = Array.from({ length: outputCount }, () => []);
	const valid = new Map<number, VerifiedDelivery>();
	const handshakes: HandshakeOutcome[] = [];
	checks.forEach((check, itemIndex) => {
		if (check instanceof NodeOperationError) {
			outputs[invalidOutput].push(errorItem(context, check, itemIndex));
			return;
		}
		// Answered here, before anything is reserved; on no output, so no business step runs.
		if ('handshake' in check) {
			handshakes.push(check.handshake);
			return;
		}
		if (check.valid) valid.set(itemIndex, check.delivery);
		const output = check.valid ? validOutput : invalidOutput;
		if (output !== undefined)
			outputs[output].push(passedOn(items[itemIndex], itemIndex, { signature: check.signature }));
	});
	await answerHandshakes(context, setup, handshakes);
	return { outputs, valid, scheme: setup.scheme };
}
