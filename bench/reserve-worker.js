// One variant measured in a fresh process, so memory belongs to one variant:
//   node --expose-gc bench/reserve-worker.js <variant> <items> <databaseUrl> [timed runs, default 5]
// It runs the variant twice to warm up (JIT, pool, table check), then the timed runs, each with
// fresh keys, sampling RSS; it prints one JSON line with the median time and every run.
// variant: node (Idempotency Reserve through n8n-core's WorkflowExecute), nodeWithoutFirstSeen,
// passThrough (the least any node can do with the items in the same engine: route them to two outputs
// unchanged; what n8n itself costs around a node), raw (the same reservation as one SQL statement with
// pg), perItem (one INSERT per item). Half of the keys exist before each run.
// BENCH_CPU_PROFILE=<folder> writes a CPU profile of the first timed run (open it in Chrome DevTools).
process.env.N8N_LOG_LEVEL ??= 'silent';
const { mkdtempSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
process.env.N8N_USER_FOLDER ??= mkdtempSync(path.join(os.tmpdir(), 'idem-bench-'));

const { Client } = require('pg');
const { credentialFromUrl } = require('../test/support/database');
const { median } = require('./support');

const [variant, countText, databaseUrl, timedRunsText = '5'] = process.argv.slice(2);
const count = Number(countText);
const timedRuns = Number(timedRunsText);
const WARM_UP_RUNS = 2;
const processTag = `${Date.now().toString(36)}_${process.pid}`;
let runId = processTag;

function makeItems() {
	return Array.from({ length: count }, (_, i) => ({
		json: {
			headers: { 'content-type': 'application/json' },
			body: { id: `evt_${runId}_${i}`, type: 'invoice.paid', amount: i },
		},
	}));
}

async function prepare(client) {
	await client.query(
		`CREATE TABLE IF NOT EXISTS processed_events (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())`,
	);
	await client.query(
		`CREATE INDEX IF NOT EXISTS processed_events_first_seen_idx ON processed_events (first_seen)`,
	);
	// Every other key is already reserved.
	await client.query(
		`INSERT INTO processed_events (key) SELECT 'evt:evt_${runId}_' || g FROM generate_series(0, $1::int - 1, 2) g`,
		[count],
	);
}

/** Two outputs, every item passed on unchanged with its pairedItem: no node can do less with N items. */
class PassThrough {
	description = {
		displayName: 'Pass Through',
		name: 'passThrough',
		group: ['transform'],
		version: 1,
		description: 'Benchmark floor',
		defaults: { name: 'Pass Through' },
		inputs: ['main'],
		outputs: ['main', 'main'],
		properties: [],
	};
	/** @this {import('n8n-workflow').IExecuteFunctions} */
	async execute() {
		const outputs = [[], []];
		this.getInputData().forEach((item, itemIndex) =>
			outputs[itemIndex % 2].push({ json: item.json, pairedItem: { item: itemIndex } }),
		);
		return outputs;
	}
}

const PASS_THROUGH_WORKFLOW = {
	name: 'Pass through (benchmark floor)',
	nodes: [
		{
			id: 'b0000000-0000-4000-8000-000000000001',
			name: 'Pass Through',
			type: 'bench.passThrough',
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		},
	],
	connections: {},
	settings: { executionOrder: 'v1' },
};

async function timedWorkflow(workflow, nodeName, items, options) {
	const { runWorkflow } = require('../test/support/engine');
	const started = process.hrtime.bigint();
	const run = await runWorkflow(workflow, items, options);
	const ms = Number(process.hrtime.bigint() - started) / 1e6;
	if (run.error) throw run.error;
	return {
		ms,
		newCount: run.output(nodeName, 0).length,
		duplicateCount: run.output(nodeName, 1).length,
	};
}

const variants = {
	async node(items, _client, parameters = {}) {
		const workflow = require('../test/fixtures/reserve.workflow.json');
		const options = {
			credentials: credentialFromUrl(databaseUrl),
			nodeOverrides: { 'Idempotency Reserve': { parameters } },
		};
		return await timedWorkflow(workflow, 'Idempotency Reserve', items, options);
	},
	async passThrough(items) {
		require('../test/support/engine').registerNodeType('bench.passThrough', new PassThrough());
		return await timedWorkflow(PASS_THROUGH_WORKFLOW, 'Pass Through', items, {});
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
		for (let i = 0; i < items.length; i++)
			(reserved.has(keys[i]) ? fresh : duplicates).push(items[i]);
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

async function measured(client, profileFolder) {
	await prepare(client);
	const items = makeItems();
	global.gc?.();
	const rssBefore = process.memoryUsage().rss;
	let peakRss = rssBefore;
	const sampler = setInterval(() => {
		peakRss = Math.max(peakRss, process.memoryUsage().rss);
	}, 2);
	const stopProfile = await startProfile(profileFolder);
	try {
		const result = await variants[variant](items, client);
		await stopProfile();
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
		new Promise((resolve, reject) =>
			session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
		);
	await post('Profiler.enable');
	await post('Profiler.setSamplingInterval', { interval: 100 });
	await post('Profiler.start');
	return async () => {
		const { profile } = await post('Profiler.stop');
		mkdirSync(folder, { recursive: true });
		writeFileSync(
			path.join(folder, `${variant}-${count}-${process.pid}.cpuprofile`),
			JSON.stringify(profile),
		);
		session.disconnect();
	};
}

(async () => {
	const client = new Client({ connectionString: databaseUrl });
	await client.connect();
	for (let run = 1; run <= WARM_UP_RUNS; run++) {
		runId = `warm${run}_${processTag}`;
		await measured(client);
	}
	const runs = [];
	for (let run = 1; run <= timedRuns; run++) {
		runId = `run${run}_${processTag}`;
		runs.push(await measured(client, run === 1 ? process.env.BENCH_CPU_PROFILE : undefined));
	}
	await client.end();
	const { closeAllPools } = require('../dist/nodes/shared/transport/poolCache');
	await closeAllPools();
	const ms = median(runs.map((run) => run.ms));
	const rssGrowth = median(runs.map((run) => run.peakRss - run.rssBefore));
	process.stdout.write(
		`${JSON.stringify({ variant, count, ms, rssGrowth, newCount: runs[0].newCount, duplicateCount: runs[0].duplicateCount, runs })}\n`,
	);
})().catch((error) => {
	process.stderr.write(`${error.stack}\n`);
	process.exit(1);
});
