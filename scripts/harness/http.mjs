// Sends webhook deliveries the way a provider does: exact bytes, chosen content type and headers,
// plus an x-e2e-request id header so the harness can find the execution n8n recorded for it.
import { randomUUID } from 'node:crypto';

import { REQUEST_ID_HEADER } from './records.mjs';

/**
 * @param {string} url
 * @param {Buffer|string|object} body  an object is sent as JSON.stringify(body)
 * @returns {Promise<{ requestId: string, status: number, headers: Record<string, string>, text: string, json: any, bytes: Buffer, ms: number }>}
 */
export async function sendEvent(url, body, { headers = {}, contentType = 'application/json', requestId = randomUUID(), timeoutMs = 60_000 } = {}) {
	const bytes = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body), 'utf8');
	const started = Date.now();
	const response = await fetch(url, {
		method: 'POST',
		headers: {
			...(contentType ? { 'content-type': contentType } : {}),
			[REQUEST_ID_HEADER]: requestId,
			...headers,
		},
		body: bytes,
		signal: AbortSignal.timeout(timeoutMs),
	});
	const text = await response.text();
	let json;
	try {
		json = text ? JSON.parse(text) : undefined;
	} catch {
		json = undefined;
	}
	const responseHeaders = Object.fromEntries(response.headers);
	return { requestId, status: response.status, headers: responseHeaders, text, json, bytes, ms: Date.now() - started };
}

/** A Stripe-like signature header value. The template does not verify it; only the header changing matters. */
export function fakeStripeSignature(seed) {
	const timestamp = Math.floor(Date.now() / 1000);
	const hex = Buffer.from(`${seed}:${timestamp}:${randomUUID()}`).toString('hex').slice(0, 64).padEnd(64, '0');
	return `t=${timestamp},v1=${hex}`;
}
