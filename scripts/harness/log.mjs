// Progress lines for the e2e harness and the demo. They go to stderr so they never mix with a
// test reporter's output on stdout.
const startedAt = Date.now();

export function elapsed(since = startedAt) {
	return `${((Date.now() - since) / 1000).toFixed(1)}s`;
}

export function progress(message) {
	if (process.env.N8N_E2E_QUIET === '1') return;
	process.stderr.write(`[harness ${elapsed()}] ${message}\n`);
}

export function sleep(ms) {
	return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Settles with `promise`, or with `onTimeout` after `ms`, and clears its timer either way so a
 * long timeout never keeps the process alive after the work is done.
 */
export async function within(promise, ms, onTimeout) {
	let timer;
	const timeout = new Promise((resolve) => {
		timer = setTimeout(() => resolve(onTimeout), ms);
	});
	try {
		return await Promise.race([promise, timeout]);
	} finally {
		clearTimeout(timer);
	}
}

/**
 * Polls `check` until it returns a value other than undefined/false, at most `timeoutMs` and
 * `maxAttempts` times. Throws with `what` (a text, or a function giving one) and the last error when it gives up.
 */
export async function waitFor(
	what,
	check,
	{ timeoutMs = 30_000, intervalMs = 250, maxAttempts = 10_000 } = {},
) {
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
	const label = typeof what === 'function' ? what() : what;
	throw new Error(`Timed out after ${timeoutMs} ms waiting for ${label}${reason}`);
}

/**
 * Runs a check against a stack; on failure prints the tail of n8n's logs (main, workers), where the
 * cause usually is, then rethrows. Shared by the end-to-end and fault suites.
 */
export async function withStackLogs(stack, fn) {
	try {
		return await fn();
	} catch (error) {
		const parts = [
			`--- last lines of n8n's log (${stack?.n8n?.logFile}) ---\n${stack?.n8n?.logTail(40) ?? ''}`,
		];
		for (const worker of stack?.workers ?? [])
			parts.push(`--- last lines of ${worker.name} (${worker.logFile}) ---\n${worker.logTail(20)}`);
		process.stderr.write(`\n${parts.join('\n')}\n---\n`);
		throw error;
	}
}
