// Polls a condition that becomes true on its own (a timer closing a pool, a backend going away).
const sleep = async (ms) => await new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once `check()` is truthy; throws with `what` when it is still false after `timeoutMs`. */
async function waitFor(what, check, { timeoutMs = 5_000, everyMs = 50 } = {}) {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		if (await check()) return;
		if (Date.now() > deadline) throw new Error(`Still not true after ${timeoutMs} ms: ${what}`);
		await sleep(everyMs);
	}
}

module.exports = { sleep, waitFor };
