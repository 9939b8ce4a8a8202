const { startPostgresForTests } = require('./postgres');

module.exports = async function globalSetup() {
	const postgres = await startPostgresForTests();
	globalThis.__IDEMPOTENCY_POSTGRES__ = postgres;
	// Workers start after this and inherit the environment.
	process.env.IDEMPOTENCY_TEST_SERVER_URL = postgres.url;
	process.stdout.write(`\nPostgreSQL for the tests: ${postgres.kind}\n`);
};
