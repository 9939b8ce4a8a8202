// Connections: 1,000 consecutive executions through the same credential after warm-up should
// open no new PostgreSQL connection. Counted twice: by the pool (every physical connect) and by
// the server (the backends of application_name n8n-nodes-idempotency and their start times).
//   node bench/connections.js [--executions 1000]
process.env.N8N_LOG_LEVEL ??= 'silent';
const { mkdtempSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
process.env.N8N_USER_FOLDER ??= mkdtempSync(path.join(os.tmpdir(), 'idem-bench-'));

const { Client } = require('pg');
const { poolFor, closeAllPools } = require('../dist/nodes/shared/transport/poolCache');
const { credentialFromUrl } = require('../test/support/database');
const { runWorkflow } = require('../test/support/engine');
const { benchDatabase, option, saveResults } = require('./support');
const workflow = require('../test/fixtures/reserve.workflow.json');

const executions = Number(option('executions', 1000));

async function serverBackends(client) {
	const { rows } = await client.query(
		`SELECT pid, backend_start FROM pg_stat_activity WHERE application_name = 'n8n-nodes-idempotency' ORDER BY pid`,
	);
	return rows.map((row) => `${row.pid}@${row.backend_start.toISOString()}`);
}

(async () => {
	const db = await benchDatabase('idem_bench_conn');
	const observer = new Client({ connectionString: db.url });
	await observer.connect();
	try {
		const credentials = credentialFromUrl(db.url);
		const item = (i) => ({ json: { body: { id: `conn_${i}` } } });
		for (let i = 0; i < 20; i++) await runWorkflow(workflow, [item(`warm_${i}`)], { credentials });
		const before = await serverBackends(observer);
		let connects = 0;
		poolFor(credentials).pool.on('connect', () => (connects += 1));
		for (let i = 0; i < executions; i++) {
			const run = await runWorkflow(workflow, [item(i)], { credentials });
			if (run.output('Idempotency Reserve', 0).length !== 1)
				throw new Error(`execution ${i} was not routed as new`);
		}
		const after = await serverBackends(observer);
		const newBackends = after.filter((backend) => !before.includes(backend));
		const result = {
			executions,
			poolConnects: connects,
			backendsBefore: before.length,
			backendsAfter: after.length,
			newBackends: newBackends.length,
		};
		console.log(JSON.stringify(result));
		console.log(
			`${executions} executions after warm-up opened ${connects} new connection(s) (pool) and ${newBackends.length} new backend(s) (server).`,
		);
		console.log(`results: ${saveResults('connections', result)}`);
	} finally {
		await observer.end();
		await closeAllPools();
		await db.close();
	}
})().catch((error) => {
	console.error(error);
	process.exit(1);
});
