// Progress lines for the e2e harness and the demo. They go to stderr so they never mix with a
// test reporter's output on stdout.
const startedAt = Date.now();

export function elapsed(since = startedAt) {
	return `${((Date.now() - since) / 1000).toFixed(1)}s`;
}

export function progress(message) {
	if (process.env.N8N_E2E_QUIET === '1') return;
	process.stderr.write(`[e2e ${elapsed()}] ${message}\n`);
}

export function sleep(ms) {
	return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Polls `check` until it returns a value other than undefined/false, at most `timeoutMs` and
 * `maxAttempts` times. Throws with `what` and the last error when it gives up.
 */
export async function waitFor(what, check, { timeoutMs = 30_000, intervalMs = 250, maxAttempts = 10_000 } = {}) {
	const deadline = Date.now() + timeoutMs;
	let lastError;
	for (let attempt = 1; attempt <= maxAttempts; attempt++) {
		try {
			const result = await check();
			if (result !== undefined && result !== false) return result;
			lastError = undefined;
		} catch (error) {
			lastError = error;
		}
		if (Date.now() + intervalMs > deadline) break;
		await sleep(intervalMs);
	}
	const reason = lastError ? `: ${lastError.message ?? lastError}` : '';
	throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}${reason}`);
}
