// The real-n8n harness of n8n-nodes-idempotency: see stack.mjs for what startStack() sets up.
export { ensureN8n, ensureNode, cachePaths, cacheDir, N8N_VERSION } from './install.mjs';
export { startPostgres } from './postgres.mjs';
export { buildAndPack, installAsReadmeSays, installIntoUserFolder } from './package.mjs';
export {
	n8nEnv,
	runN8nCli,
	runN8nCliBesideServer,
	startN8nServer,
	waitForWebhook,
} from './n8n.mjs';
export { executionReader, branchOf, loadFlatted, REQUEST_ID_HEADER } from './records.mjs';
export { sendEvent, fakeStripeSignature, stripeSignature, E2E_STRIPE_SECRET } from './http.mjs';
export {
	startStack,
	BUSINESS_LOG_SQL,
	BUSINESS_STEP,
	RESERVE,
	RESERVE_OUTPUTS,
	WEBHOOK_WORKFLOW_ID,
	PURGE_WORKFLOW_ID,
} from './stack.mjs';
export {
	deliverWithFailingBusinessStep,
	runBurst,
	runSeedSequence,
	formatTable,
	EVENT_A,
	EVENT_B,
} from './scenarios.mjs';
export { runCleanups, onCleanup, isShuttingDown } from './processes.mjs';
export { progress, waitFor, sleep, withStackLogs } from './log.mjs';
