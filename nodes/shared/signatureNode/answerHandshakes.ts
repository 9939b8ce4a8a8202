import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { readRawBody } from '../delivery/rawBody';
import { respondToWebhook } from '../run/respondToWebhook';
import {
	answerHandshake,
	isHandshake,
	type HandshakeOutcome,
	type HandshakeRequest,
	unauthenticated,
} from '../webhook/handshakes';
import { verifySignature } from '../webhook/verifySignature';
import type { SignatureSetup } from './signatureSetup';

/** n8n's `$json.body` of a request that sent none: `{}` (n8n's parser), or nothing at all. */
function emptyBody(body: unknown): boolean {
	if (body === undefined || body === null || body === '') return true;
	return typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0;
}

/**
 * The answer to an unsigned handshake (Meta's GET), or undefined when the item is not one. Read
 * before any body check: a GET has no body to sign, and its raw body (when n8n gives one) is empty.
 */
export async function unsignedHandshake(
	context: IExecuteFunctions,
	setup: SignatureSetup,
	item: INodeExecutionData,
	itemIndex: number,
): Promise<HandshakeOutcome | undefined> {
	const { handshake } = setup;
	if (handshake === undefined || handshake.signed) return undefined;
	const request: HandshakeRequest = {
		headers: item.json.headers,
		query: item.json.query,
		body: item.json.body,
		bodiless: emptyBody(item.json.body),
	};
	if (!isHandshake(handshake, request)) return undefined;
	// n8n's parse says "no body": the bytes must say so too.
	let raw: Uint8Array | undefined;
	try {
		raw = await readRawBody(context, item, itemIndex, setup.rawBodyProperty);
	} catch {
		return undefined;
	}
	if (raw !== undefined && raw.length > 0) return undefined;
	// Okta sends its shared secret with the verification too: checked as a delivery's, first.
	if (handshake.authenticated === 'sharedSecret') {
		const check = verifySignature(
			setup.scheme,
			{ headers: item.json.headers, body: new Uint8Array() },
			setup.keys,
			{ nowSeconds: 0, toleranceSeconds: 0 },
		);
		if (setup.scheme.kind !== 'sharedSecret' || !check.valid)
			return unauthenticated(
				handshake,
				check.valid ? 'no shared secret to check' : `shared secret ${check.reason}`,
			);
	}
	return answerHandshake(handshake, request, { verifyToken: setup.verifyToken });
}

/**
 * Sends the first handshake's answer as the webhook's response (n8n keeps the first answer of an
 * execution, as with Complete Key) and says in the execution what happened, since the item goes to
 * no output: an execution hint per handshake.
 */
export async function answerHandshakes(
	context: IExecuteFunctions,
	setup: SignatureSetup,
	handshakes: readonly HandshakeOutcome[],
): Promise<void> {
	if (handshakes.length === 0 || setup.handshake === undefined) return;
	await respondToWebhook(context, handshakes[0].answer);
	const sender = `${setup.scheme.label}'s ${setup.handshake.name}`;
	for (const { answer, refused } of handshakes) {
		const message =
			refused === undefined
				? `Answered ${sender} handshake (${answer.statusCode}): nothing reserved, no business step`
				: `Refused ${sender} handshake (${answer.statusCode}): ${refused}`;
		context.addExecutionHints({ message, location: 'outputPane' });
	}
}
