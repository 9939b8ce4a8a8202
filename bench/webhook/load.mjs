// Traffic: the event bodies and their ids, one signed POST, a closed-loop load, percentiles.
import http from 'node:http';
import { performance } from 'node:perf_hooks';

import { stripeSignature } from '../../scripts/harness/index.mjs';
import { stripeLikeEvent } from '../support.js';

/** A Stripe-like event of ~0.8 KB, the same for every variant except its id (bench/support.js). */
export function eventBody(id, seq) {
	return Buffer.from(JSON.stringify(stripeLikeEvent(id, seq, 'webhook-level')));
}

/**
 * The ids of one load. distinct: n new ids. repeated: blocks of up to 32 new ids followed by the
 * same 32 again (each id twice, half the requests duplicates; at concurrency 16 the second copy
 * mostly arrives after the first one finished, like a provider's retry, sometimes alongside it).
 * duplicate: n ids like distinct, each sent once before the measured load (measure.mjs), so every
 * measured request is a sender's retry of an event already answered.
 */
export function loadIds(prefix, shape, n) {
	if (shape === 'distinct' || shape === 'duplicate')
		return Array.from({ length: n }, (_, i) => `${prefix}.${String(i).padStart(5, '0')}`);
	const ids = [];
	let next = 0;
	while (ids.length < n) {
		const m = Math.min(32, Math.floor((n - ids.length) / 2));
		if (m === 0) {
			ids.push(`${prefix}.${String(next++).padStart(5, '0')}`);
			continue;
		}
		const block = Array.from({ length: m }, () => `${prefix}.${String(next++).padStart(5, '0')}`);
		ids.push(...block, ...block);
	}
	return ids;
}

export function post(url, bytes, agent, { timeoutMs = 60_000, headers = {} } = {}) {
	return new Promise((resolve) => {
		const started = performance.now();
		const request = http.request(
			url,
			{
				method: 'POST',
				agent,
				// Signed as Stripe signs (the stack's secret), at send time, for every variant alike.
				headers: {
					'content-type': 'application/json',
					'content-length': bytes.length,
					'stripe-signature': stripeSignature(bytes),
					...headers,
				},
				timeout: timeoutMs,
			},
			(response) => {
				const chunks = [];
				response.on('data', (chunk) => chunks.push(chunk));
				response.on('end', () =>
					resolve({
						status: response.statusCode,
						text: Buffer.concat(chunks).toString('utf8'),
						retryAfter: response.headers['retry-after'],
						replayed: response.headers['idempotent-replayed'],
						ms: performance.now() - started,
					}),
				);
				response.on('error', (error) =>
					resolve({ status: 0, text: String(error.message), ms: performance.now() - started }),
				);
			},
		);
		request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
		request.on('error', (error) =>
			resolve({ status: 0, text: String(error.message), ms: performance.now() - started }),
		);
		request.end(bytes);
	});
}

/**
 * Closed loop: `concurrency` senders, each sending the next request as soon as its last one was
 * answered. `headersOf(id)`: a variant's extra headers (an API client's Idempotency-Key).
 */
export async function runLoad(url, ids, concurrency, seqBase, headersOf = undefined) {
	const bodies = ids.map((id, i) => eventBody(id, seqBase + i));
	const answers = new Array(ids.length);
	const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
	let next = 0;
	const startedMono = process.hrtime.bigint();
	const started = performance.now();
	await Promise.all(
		Array.from({ length: Math.min(concurrency, ids.length) }, async () => {
			for (;;) {
				const i = next++;
				if (i >= ids.length) return;
				answers[i] = await post(url, bodies[i], agent, { headers: headersOf?.(ids[i]) });
			}
		}),
	);
	const wallMs = performance.now() - started;
	const endedMono = process.hrtime.bigint();
	agent.destroy();
	return { answers, wallMs, window: [Number(startedMono / 1000n), Number(endedMono / 1000n)] };
}

export function percentile(values, p) {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
