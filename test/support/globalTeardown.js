const { rmSync } = require('node:fs');

module.exports = async function globalTeardown() {
	const runDir = process.env.IDEMPOTENCY_TEST_RUN_DIR;
	if (runDir) rmSync(runDir, { recursive: true, force: true });
	await globalThis.__IDEMPOTENCY_POSTGRES__?.stop();
};
