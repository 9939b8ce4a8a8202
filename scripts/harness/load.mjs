// A bounded load generator for the fault suite: a fixed list of jobs, each one or more deliveries
// sent at the same moment (a provider's retry racing the original), at most `concurrency`
// requests in flight, every request with its own timeout and the whole run with a deadline. A
// request that cannot be sent or answered is reported (status 0 and the error), never retried here:
// retrying is the caller's decision, as it is the provider's.
import { sendEvent } from './http.mjs';
import { sleep } from './log.mjs';

/**
 * @typedef {object} Delivery
 * @property {Buffer|string|object} body
 * @property {Record<string, string>} [headers]
 * @property {string} [contentType]
 * @property {any} [tag]   anything the caller wants back with the result (event id, kind, ...)
 *
 * @typedef {object} DeliveryResult
 * @property {Delivery} delivery
 * @property {number} status        HTTP status, 0 when no answer arrived
 * @property {any} json
 * @property {string} text
 * @property {string} requestId
 * @property {Record<string, string>} [headers]  the answer's headers (Retry-After, ...)
 * @property {string} [error]       why no answer arrived
 * @property {number} sentAt        Date.now() when sent
 * @property {number} ms
 */

/**
 * @param {string} url
 * @param {Delivery[][]} jobs  each job's deliveries are sent together
 * @param {{ concurrency: number, timeoutMs?: number, deadlineMs?: number, paceMs?: number,
 *   onResult?: (result: DeliveryResult, done: number) => void }} options
 *   paceMs: at least this long between the starts of two jobs (a steady sender, not a burst)
 * @returns {Promise<{ results: DeliveryResult[], notSent: Delivery[], seconds: number, maxInFlight: number }>}
 */
export async function runLoad(
	url,
	jobs,
	{ concurrency, timeoutMs = 120_000, deadlineMs = 600_000, paceMs = 0, onResult },
) {
	if (!(concurrency >= 1)) throw new Error('runLoad: concurrency must be at least 1');
	for (const job of jobs) {
		if (job.length < 1 || job.length > concurrency)
			throw new Error(`runLoad: a job must have 1..${concurrency} deliveries`);
	}
	const started = Date.now();
	const deadline = started + deadlineMs;
	const results = [];
	const notSent = [];
	const pending = new Set();
	let inFlight = 0;
	let maxInFlight = 0;
	let wake;
	let lastJobAt = 0;

	async function deliver(delivery) {
		const sentAt = Date.now();
		let result;
		try {
			const response = await sendEvent(url, delivery.body, {
				headers: delivery.headers ?? {},
				contentType: delivery.contentType ?? 'application/json',
				timeoutMs: Math.max(1_000, Math.min(timeoutMs, deadline - sentAt)),
			});
			result = {
				delivery,
				status: response.status,
				json: response.json,
				text: response.text,
				headers: response.headers,
				requestId: response.requestId,
				sentAt,
				ms: response.ms,
			};
		} catch (error) {
			result = {
				delivery,
				status: 0,
				json: undefined,
				text: '',
				requestId: undefined,
				error: String(error?.cause?.code ?? error?.name ?? error),
				sentAt,
				ms: Date.now() - sentAt,
			};
		}
		results.push(result);
		onResult?.(result, results.length);
	}

	for (const job of jobs) {
		// Wait (bounded by the deadline) until the whole job fits, then send its deliveries at once.
		while (inFlight + job.length > concurrency && Date.now() < deadline) {
			await new Promise((resolve) => {
				wake = resolve;
				setTimeout(resolve, 250);
			});
		}
		const wait = lastJobAt + paceMs - Date.now();
		if (wait > 0) await sleep(Math.min(wait, paceMs));
		if (Date.now() >= deadline) {
			notSent.push(...job);
			continue;
		}
		lastJobAt = Date.now();
		inFlight += job.length;
		maxInFlight = Math.max(maxInFlight, inFlight);
		for (const delivery of job) {
			const promise = deliver(delivery).finally(() => {
				inFlight -= 1;
				pending.delete(promise);
				wake?.();
			});
			pending.add(promise);
		}
	}
	// Every request has its own timeout, so this ends.
	await Promise.all([...pending]);
	await sleep(0);
	return { results, notSent, seconds: (Date.now() - started) / 1000, maxInFlight };
}

/** A small deterministic PRNG (mulberry32), so a run's event mix can be reproduced from its seed. */
export function seededRandom(seed) {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

/** Counts values: { value: count }. */
export function tally(values) {
	const counts = {};
	for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
	return counts;
}
