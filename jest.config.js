/**
 * Unit and integration tests. They load the built package from dist/ (what n8n loads) and run
 * the nodes through n8n-core's WorkflowExecute against a real PostgreSQL (see test/support/postgres.js).
 * The real-n8n end-to-end suite has its own command, `npm run test:e2e`.
 */
module.exports = {
	testEnvironment: 'node',
	roots: ['<rootDir>/test'],
	testMatch: ['**/*.test.js'],
	testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/e2e/'],
	transform: {},
	globalSetup: '<rootDir>/test/support/globalSetup.js',
	globalTeardown: '<rootDir>/test/support/globalTeardown.js',
	setupFiles: ['<rootDir>/test/support/setupEnv.js'],
	testTimeout: 120000,
};
