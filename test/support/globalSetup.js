const { mkdtempSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startPostgresForTests } = require('./postgres');

module.exports = async function globalSetup() {
	const postgres = await startPostgresForTests();
	globalThis.__IDEMPOTENCY_POSTGRES__ = postgres;
	// Workers start after this and inherit the environment.
	process.env.IDEMPOTENCY_TEST_SERVER_URL = postgres.url;
	// One folder for everything the test files write (n8n's user folders); globalTeardown removes it.
	process.env.IDEMPOTENCY_TEST_RUN_DIR = mkdtempSync(path.join(os.tmpdir(), 'idem-n8n-'));
	process.stdout.write(`\nPostgreSQL for the tests: ${postgres.kind}\n`);
};
