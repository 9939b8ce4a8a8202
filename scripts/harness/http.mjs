// Sends webhook deliveries the way a provider does: exact bytes, chosen content type and headers,
// plus an x-e2e-request id header so the harness can find the execution n8n recorded for it.
import { createHmac, randomUUID } from 'node:crypto';

import { REQUEST_ID_HEADER } from './records.mjs';

/**
 * The Stripe signing secret of every stack (the "Webhook Signing Secret" credential the harness
 * imports): the template verifies Stripe signatures, so deliveries must be signed with it.
 */
export const E2E_STRIPE_SECRET = 'whsec_e2e_harness_0123456789abcdefABCDEF';

/** A genuine `Stripe-Signature` value for these exact bytes: HMAC-SHA256 hex of "<t>.<bytes>", as Stripe signs. */
export function stripeSignature(
	bytes,
	{ secret = E2E_STRIPE_SECRET, timestamp = Math.floor(Date.now() / 1000) } = {},
) {
	const hex = createHmac('sha256', secret).update(`${timestamp}.`).update(bytes).digest('hex');
	return `t=${timestamp},v1=${hex}`;
}

function hasHeader(headers, name) {
	return Object.keys(headers).some((key) => key.toLowerCase() === name);
}

/**
 * @param {string} url
 * @param {Buffer|string|object} body  an object is sent as JSON.stringify(body)
 * @param {object} [options]
 *   signedAt: the Stripe timestamp (seconds) of the signature added to the request; the request is
 *   signed with E2E_STRIPE_SECRET unless `headers` carries its own stripe-signature (a forged or
 *   replayed one) or `sign: false`. method: 'GET' sends no body and no Content-Type (a sender's
 *   verification request); `body` is then ignored.
 * @returns {Promise<{ requestId: string, status: number, headers: Record<string, string>, text: string, json: any, bytes: Buffer, ms: number, signature?: string }>}
 */
export async function sendEvent(
	url,
	body,
	{
		headers = {},
		contentType = 'application/json',
		requestId = randomUUID(),
		timeoutMs = 60_000,
		sign = true,
		signedAt,
		method = 'POST',
	} = {},
) {
	if (method === 'GET') {
		contentType = undefined;
		sign = false;
	}
	const bytes = Buffer.isBuffer(body)
		? body
		: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body), 'utf8');
	const signature =
		sign && !hasHeader(headers, 'stripe-signature')
			? stripeSignature(bytes, { timestamp: signedAt })
			: undefined;
	const started = Date.now();
	const response = await fetch(url, {
		method,
		headers: {
			...(contentType ? { 'content-type': contentType } : {}),
			[REQUEST_ID_HEADER]: requestId,
			...(signature ? { 'stripe-signature': signature } : {}),
			...headers,
		},
		body: method === 'GET' ? undefined : bytes,
		signal: AbortSignal.timeout(timeoutMs),
	});
	const text = await response.text();
	let json;
	try {
		json = text ? JSON.parse(text) : undefined;
	} catch {
		json = undefined;
	}
	const responseHeaders = Object.fromEntries(response.headers.entries());
	return {
		requestId,
		status: response.status,
		headers: responseHeaders,
		text,
		json,
		bytes,
		ms: Date.now() - started,
		signature: signature ?? headers['stripe-signature'],
	};
}

/** A header in Stripe's format whose signature is not valid for any body: a forgery, which the template answers with 401. */
export function fakeStripeSignature(seed) {
	const timestamp = Math.floor(Date.now() / 1000);
	const hex = Buffer.from(`${seed}:${timestamp}:${randomUUID()}`)
		.toString('hex')
		.slice(0, 64)
		.padEnd(64, '0');
	return `t=${timestamp},v1=${hex}`;
}
