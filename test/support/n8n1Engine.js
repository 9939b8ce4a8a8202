// n8n 1.x's own engine (n8n-core 1.122.48 and n8n-workflow 1.120 of n8n 1.123.81) for the engine
// tests, from where scripts/harness/install.mjs caches that n8n for the 1.x end-to-end suite
// (`npm run test:e2e:n8n1` installs it). Undefined when it is not installed there.
const { existsSync } = require('node:fs');
const { homedir } = require('node:os');
const path = require('node:path');
const { createRunner } = require('./engine');

/** The 1.x line of scripts/harness/install.mjs (N8N_LINES[1]). */
const N8N1_VERSION = '1.123.81';

const N8N1_MODULES = path.join(
	process.env.N8N_IDEMPOTENCY_CACHE || path.join(homedir(), '.cache', 'n8n-nodes-idempotency'),
	`n8n-${N8N1_VERSION}`,
	'node_modules',
);

/** @type {ReturnType<typeof createRunner> | undefined | null} */
let runner = null;

/**
 * A runWorkflow on n8n 1.x's WorkflowExecute, or undefined when n8n 1.x is not installed in the cache.
 * @returns {ReturnType<typeof createRunner> | undefined}
 */
function n8n1Runner() {
	if (runner !== null) return runner;
	if (!existsSync(path.join(N8N1_MODULES, 'n8n-core', 'package.json'))) return (runner = undefined);
	const core = require(path.join(N8N1_MODULES, 'n8n-core'));
	// 1.x's SSH client pool (created by the first node context) runs a cleanup interval that is not
	// unref'd, which keeps a test process alive after its last test; 2.x's does not.
	const { Container } = require(path.join(N8N1_MODULES, '@n8n', 'di'));
	const { SSHClientsManager } = require(
		path.join(N8N1_MODULES, 'n8n-core', 'dist', 'execution-engine', 'ssh-clients-manager.js'),
	);
	Container.get(SSHClientsManager).cleanupTimer.unref();
	runner = createRunner({ core, workflow: require(path.join(N8N1_MODULES, 'n8n-workflow')) });
	return runner;
}

module.exports = { n8n1Runner, N8N1_MODULES, N8N1_VERSION };
