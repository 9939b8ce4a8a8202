module.exports = async function globalTeardown() {
	await globalThis.__IDEMPOTENCY_POSTGRES__?.stop();
};
