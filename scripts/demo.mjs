#!/usr/bin/env node
// npm run demo [-- --once] [-- --port=5678]
//
// Starts a real n8n 2.41.1 with this package installed from its packed tarball and the template
// workflows/idempotent-webhook.json published (the same stack as `npm run test:e2e`), sends the
// seed sequence (event A, A again with a new stripe-signature, B), prints what happened, then keeps
// n8n running so you can open the editor and look at the executions, until Ctrl-C.
// --once stops everything after the table.
import {
	formatTable,
	isShuttingDown,
	progress,
	runCleanups,
	runSeedSequence,
	startStack,
} from './harness/index.mjs';

const args = process.argv.slice(2);
const once = args.includes('--once');
const portArg = args.find((arg) => arg.startsWith('--port='));
const port = portArg ? Number(portArg.slice('--port='.length)) : undefined;
if (portArg && !(Number.isInteger(port) && port > 0 && port < 65536)) {
	console.error(`--port must be a TCP port number, not ${portArg.slice('--port='.length)}`);
	process.exit(2);
}
if (args.includes('--help') || args.includes('-h')) {
	console.log('Usage: npm run demo [-- --once] [-- --port=5678]');
	process.exit(0);
}

let stack;
try {
	progress(
		'demo: starting PostgreSQL and n8n with n8n-nodes-idempotency (the first run installs n8n, ~5 min)',
	);
	stack = await startStack({ label: 'demo', port });
	const owner = await stack.setupOwner();

	console.log(`\nSeed sequence against ${stack.webhookUrl}\n`);
	const rows = await runSeedSequence(stack);
	console.log(
		formatTable(
			['#', 'request', 'HTTP', 'answer', 'branch taken (recorded by n8n)', 'business rows'],
			rows.map((row, i) => ({
				'#': i + 1,
				request: row.request,
				HTTP: row.status,
				answer: row.answer
					? `${row.answer.status} ${row.answer.key ?? ''}`.trim()
					: row.response.text.slice(0, 40),
				'branch taken (recorded by n8n)': row.branch,
				'business rows': row.businessRows,
			})),
		),
	);
	const executions = await stack.executions.list({ workflowId: stack.webhookWorkflowId });
	console.log(
		`\n${executions.length} executions recorded by n8n; ${rows.at(-1).businessRows} rows in business_log.`,
	);

	if (once) {
		await stack.stop();
		process.exit(0);
	}

	console.log(`
n8n is running. Open the editor:   ${stack.baseUrl}/
  log in as                        ${owner.email}
  password                         ${owner.password}
The published template:            ${stack.baseUrl}/workflow/${stack.webhookWorkflowId}  (Executions tab shows the runs above)
The purge template (not published): ${stack.baseUrl}/workflow/${stack.purgeWorkflowId}
Webhook:                           ${stack.webhookUrl}

Send an event yourself:
  curl -i -X POST ${stack.webhookUrl} -H 'content-type: application/json' -d '{"id":"evt_C","type":"charge.refunded"}'
Keys and business rows (PostgreSQL ${stack.server.host}:${stack.server.port}, database ${stack.keysDatabase}, user ${stack.server.user}${stack.server.password ? `, password ${stack.server.password}` : ''}):
  SELECT * FROM processed_events;  SELECT * FROM business_log;

Press Ctrl-C to stop n8n and PostgreSQL and delete the demo's temp folder.`);

	// Stay up until Ctrl-C (the harness's signal handler stops everything) or until n8n dies.
	const keepAlive = setInterval(() => undefined, 60_000);
	const status = await stack.n8n.process.exited;
	if (isShuttingDown()) {
		// Ctrl-C: the signal handler is stopping everything and exits when done.
		await new Promise(() => undefined);
	}
	clearInterval(keepAlive);
	console.error(
		`n8n exited unexpectedly (${JSON.stringify(status)}). Last lines of its log:\n${stack.n8n.logTail(30)}`,
	);
	await stack.stop();
	process.exit(1);
} catch (error) {
	console.error(`demo failed: ${error?.stack ?? error}`);
	if (stack) console.error(`Last lines of n8n's log:\n${stack.n8n.logTail(30)}`);
	await runCleanups();
	process.exit(1);
}
