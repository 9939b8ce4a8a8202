/**
 * Unit and integration tests. They load the built package from dist/ (what n8n loads) and run
 * the nodes through n8n-core's WorkflowExecute against a real PostgreSQL (see test/support/postgres.js).
 * The real-n8n end-to-end suite has its own command, `npm run test:e2e`.
 */
const { availableParallelism } = require('node:os');

module.exports = {
	testEnvironment: 'node',
	// Each file has its own database (test/support/database.js), and most of a file's time is spent
	// waiting on PostgreSQL, timers and Chromium, not on this CPU: three workers on a 2-core machine
	// take the suite from about 5 min to about 2 (Jest's default there is one worker).
	maxWorkers: Math.max(3, availableParallelism() - 1),
	roots: ['<rootDir>/test'],
	testMatch: ['**/*.test.js'],
	testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/e2e/'],
	transform: {},
	globalSetup: '<rootDir>/test/support/globalSetup.js',
	globalTeardown: '<rootDir>/test/support/globalTeardown.js',
	setupFiles: ['<rootDir>/test/support/setupEnv.js'],
	testTimeout: 120000,
};
