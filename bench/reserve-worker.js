// One measurement in a fresh process, so memory belongs to one variant:
//   node --expose-gc bench/reserve-worker.js <variant> <items> <databaseUrl>
// It runs the variant once to warm up (JIT, pool, table check), then once timed while sampling RSS.
// variant: node (Idempotency Reserve through n8n-core's WorkflowExecute), nodeWithoutFirstSeen, raw (the same
// reservation as one SQL statement with pg), perItem (one INSERT per item).
// Half of the keys exist before the run. Prints one JSON line.
// BENCH_CPU_PROFILE=<folder> writes a CPU profile of the timed run only (open it in Chrome DevTools).
process.env.N8N_LOG_LEVEL ??= 'silent';
const { mkdtempSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
process.env.N8N_USER_FOLDER ??= mkdtempSync(path.join(os.tmpdir(), 'idem-bench-'));

const { Client } = require('pg');
const { credentialFromUrl } = require('../test/support/database');

const [variant, countText, databaseUrl] = process.argv.slice(2);
const count = Number(countText);
let runId = `${Date.now().toString(36)}_${process.pid}`;

function makeItems() {
	return Array.from({ length: count }, (_, i) => ({
		json: {
			headers: { 'content-type': 'application/json' },
			body: { id: `evt_${runId}_${i}`, type: 'invoice.paid', amount: i },
		},
	}));
}

async function prepare(client) {
	await client.query(`CREATE TABLE IF NOT EXISTS processed_events (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())`);
	await client.query(`CREATE INDEX IF NOT EXISTS processed_events_first_seen_idx ON processed_events (first_seen)`);
	// Every other key is already reserved.
	await client.query(
		`INSERT INTO processed_events (key) SELECT 'evt:evt_${runId}_' || g FROM generate_series(0, $1::int - 1, 2) g`,
		[count],
	);
}

const variants = {
	async node(items, _client, parameters = {}) {
		const { runWorkflow } = require('../test/support/engine');
		const workflow = require('../test/fixtures/reserve.workflow.json');
		const credentials = credentialFromUrl(databaseUrl);
		const options = { credentials, nodeOverrides: { 'Idempotency Reserve': { parameters } } };
		const started = process.hrtime.bigint();
		const run = await runWorkflow(workflow, items, options);
		const ms = Number(process.hrtime.bigint() - started) / 1e6;
		return { ms, newCount: run.output('Idempotency Reserve', 0).length, duplicateCount: run.output('Idempotency Reserve', 1).length };
	},
	/** The node without the first_seen lookup for duplicates (Options → Look Up First Seen Time off). */
	async nodeWithoutFirstSeen(items, client) {
		return await variants.node(items, client, { options: { firstSeen: false } });
	},
	async raw(items, client) {
		const started = process.hrtime.bigint();
		const keys = items.map((item) => `evt:${item.json.body.id}`);
		const result = await client.query(
			`INSERT INTO processed_events (key) SELECT unnest($1::text[]) ON CONFLICT (key) DO NOTHING RETURNING key`,
			[keys],
		);
		const reserved = new Set(result.rows.map((row) => row.key));
		const fresh = [];
		const duplicates = [];
		for (let i = 0; i < items.length; i++) (reserved.has(keys[i]) ? fresh : duplicates).push(items[i]);
		const ms = Number(process.hrtime.bigint() - started) / 1e6;
		return { ms, newCount: fresh.length, duplicateCount: duplicates.length };
	},
	async perItem(items, client) {
		const started = process.hrtime.bigint();
		let newCount = 0;
		for (const item of items) {
			const result = await client.query(
				`INSERT INTO processed_events (key) VALUES ($1) ON CONFLICT (key) DO NOTHING RETURNING key`,
				[`evt:${item.json.body.id}`],
			);
			newCount += result.rowCount;
		}
		const ms = Number(process.hrtime.bigint() - started) / 1e6;
		return { ms, newCount, duplicateCount: items.length - newCount };
	},
};

async function measured(variant, client) {
	await prepare(client);
	const items = makeItems();
	global.gc?.();
	const rssBefore = process.memoryUsage().rss;
	let peakRss = rssBefore;
	const sampler = setInterval(() => {
		peakRss = Math.max(peakRss, process.memoryUsage().rss);
	}, 2);
	try {
		const result = await variants[variant](items, client);
		peakRss = Math.max(peakRss, process.memoryUsage().rss);
		return { ...result, rssBefore, peakRss };
	} finally {
		clearInterval(sampler);
	}
}

/** Profiles only what runs until the returned function is called; a no-op without a folder. */
async function startProfile(folder) {
	if (!folder) return async () => {};
	const inspector = require('node:inspector');
	const { writeFileSync, mkdirSync } = require('node:fs');
	const session = new inspector.Session();
	session.connect();
	const post = (method, params) =>
		new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
	await post('Profiler.enable');
	await post('Profiler.setSamplingInterval', { interval: 100 });
	await post('Profiler.start');
	return async () => {
		const { profile } = await post('Profiler.stop');
		mkdirSync(folder, { recursive: true });
		writeFileSync(path.join(folder, `${variant}-${count}-${process.pid}.cpuprofile`), JSON.stringify(profile));
		session.disconnect();
	};
}

(async () => {
	const client = new Client({ connectionString: databaseUrl });
	await client.connect();
	runId = `warm_${runId}`;
	await measured(variant, client);
	runId = runId.slice('warm_'.length);
	const stopProfile = await startProfile(process.env.BENCH_CPU_PROFILE);
	const result = await measured(variant, client);
	await stopProfile();
	await client.end();
	const { closeAllPools } = require('../dist/nodes/shared/transport/poolCache');
	await closeAllPools();
	process.stdout.write(`${JSON.stringify({ variant, count, ...result })}\n`);
})().catch((error) => {
	process.stderr.write(`${error.stack}\n`);
	process.exit(1);
});
