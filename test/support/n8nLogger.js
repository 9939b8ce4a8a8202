// The logger n8n-core hands to nodes (`this.logger`), resolved from n8n-core's own copy of the DI
// container so it is the very instance the engine uses. Tests watch its calls; nothing is replaced.
// Jest's module wrapper already declares `jest` in every CommonJS file it loads.
const { jest: jestApi } = require('@jest/globals');
const path = require('node:path');

function n8nLogger() {
	const from = { paths: [path.dirname(require.resolve('n8n-core'))] };
	const { Container } = require(require.resolve('@n8n/di', from));
	const { Logger } = require(require.resolve('@n8n/backend-common', from));
	return Container.get(Logger);
}

/**
 * Records what is logged at `level` until the returned `stop()`; the logger still logs as before.
 * @param {'error' | 'warn' | 'info' | 'debug'} level
 */
function watchN8nLogger(level) {
	const spy = jestApi.spyOn(n8nLogger(), level);
	return {
		messages: () =>
			/** @type {Array<{ message: string, meta: unknown }>} */ (
				spy.mock.calls.map(([message, meta]) => ({ message, meta }))
			),
		stop: () => spy.mockRestore(),
	};
}

module.exports = { n8nLogger, watchN8nLogger };
