// n8n-core writes its instance settings under $N8N_USER_FOLDER/.n8n; keep them out of the home
// folder. Each test file gets its own folder (n8n-core writes that file when it first loads, and
// files run in parallel), inside the run's folder that globalTeardown removes.
const { mkdtempSync } = require('node:fs');
const path = require('node:path');

const runDir = process.env.IDEMPOTENCY_TEST_RUN_DIR;
if (!runDir)
	throw new Error('IDEMPOTENCY_TEST_RUN_DIR is not set: run the tests through jest (globalSetup)');
process.env.N8N_USER_FOLDER ??= mkdtempSync(path.join(runDir, 'n8n-'));
process.env.N8N_DIAGNOSTICS_ENABLED = 'false';
process.env.N8N_LOG_LEVEL ??= 'silent';
