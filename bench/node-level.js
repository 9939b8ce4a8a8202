// Node level: one execution with N items (half new, half already reserved) through Idempotency
// Reserve in n8n-core's WorkflowExecute, against the same reservation as one raw SQL statement
// with pg, against one statement per item, and against a pass-through node in the same engine (what
// n8n costs around any node given N items). Variants run interleaved (A B C A B C …), each in a fresh
// process that warms up twice and then times several runs; medians and ratios are reported, never a
// lone absolute time. The workers run on the Node.js that n8n 2.x runs on (24, from the harness
// cache, installed from the npm registry when missing): V8's speed differs between versions (object
// spread, for one, is several times faster in 24 than in 20). --node current uses this process's.
//   node bench/node-level.js [--rounds 5] [--sizes 1000,10000,100000] [--per-item-max 10000] [--timed-runs 5] [--node current]
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const {
	benchDatabase,
	formatInterval,
	machine,
	median,
	medianInterval,
	option,
	saveResults,
} = require('./support');

const rounds = Number(option('rounds', 5));
const sizes = option('sizes', '1000,10000,100000').split(',').map(Number);
const perItemMax = Number(option('per-item-max', 10000));
const timedRuns = Number(option('timed-runs', 5));
const variants = ['raw', 'passThrough', 'node', 'nodeWithoutFirstSeen', 'perItem'];

let nodeBinary = process.execPath;

function measure(variant, size, url) {
	const output = execFileSync(
		nodeBinary,
		// One statement per item is ≥ 20× slower: one timed run of it is enough.
		[
			'--expose-gc',
			path.join(__dirname, 'reserve-worker.js'),
			variant,
			String(size),
			url,
			String(variant === 'perItem' ? 1 : timedRuns),
		],
		{ encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
	);
	const result = JSON.parse(output.trim().split('\n').pop());
	for (const run of result.runs) {
		if (run.newCount !== size / 2 || run.duplicateCount !== size / 2) {
			throw new Error(
				`${variant} ${size}: routed ${run.newCount} new / ${run.duplicateCount} duplicates, expected half each`,
			);
		}
	}
	return result;
}

(async () => {
	if (option('node', 'n8n') !== 'current') {
		const { ensureNode } = await import('../scripts/harness/install.mjs');
		nodeBinary = (await ensureNode()).nodeBin;
	}
	const nodeVersion = execFileSync(nodeBinary, ['--version'], { encoding: 'utf8' }).trim();
	const db = await benchDatabase('idem_bench_node');
	const samples = {};
	try {
		for (let round = 1; round <= rounds; round++) {
			for (const size of sizes) {
				for (const variant of variants) {
					if (variant === 'perItem' && size > perItemMax) continue;
					const result = measure(variant, size, db.url);
					(samples[`${size}:${variant}`] ??= []).push(result);
					process.stdout.write(
						`round ${round} ${String(size).padStart(6)} ${variant.padEnd(20)} ${result.ms.toFixed(1)} ms\n`,
					);
				}
			}
		}
	} finally {
		await db.close();
	}

	const rows = [];
	const ratios = [];
	for (const size of sizes) {
		const rawMs = median(samples[`${size}:raw`].map((r) => r.ms));
		const floorMs = median(samples[`${size}:passThrough`].map((r) => r.ms));
		for (const variant of variants) {
			const results = samples[`${size}:${variant}`];
			if (!results) continue;
			const ms = median(results.map((r) => r.ms));
			rows.push({
				size,
				variant,
				medianMs: +ms.toFixed(1),
				vsRaw: +(ms / rawMs).toFixed(2),
				// What the node adds beyond n8n's own cost of handing N items to any node.
				aboveEngineVsRaw: variant.startsWith('node')
					? +((ms - floorMs) / rawMs).toFixed(2)
					: undefined,
				bytesPerItem: Math.round(median(results.map((r) => r.rssGrowth / size))),
			});
		}
		// Round by round (the two processes ran seconds apart), with an interval for the median.
		for (const [variant, against] of [
			['node', 'raw'],
			['nodeWithoutFirstSeen', 'raw'],
			['perItem', 'node'],
			['perItem', 'nodeWithoutFirstSeen'],
		]) {
			const a = samples[`${size}:${variant}`];
			const b = samples[`${size}:${against}`];
			if (!a || !b) continue;
			const perRound = a.map((result, i) => result.ms / b[i].ms);
			ratios.push({
				size,
				ratio: `${variant}/${against}`,
				median: median(perRound),
				interval: medianInterval(perRound),
				perRound,
			});
		}
	}
	console.log(
		`\nNode level, ${rounds} interleaved rounds, ${timedRuns} timed runs per process, PostgreSQL: ${db.kind}, ${JSON.stringify({ ...machine(), node: nodeVersion })}`,
	);
	console.log(
		'| items | variant | median ms | × raw statement | above pass-through, × raw | RSS growth per item (bytes) |',
	);
	console.log('| ---: | --- | ---: | ---: | ---: | ---: |');
	for (const row of rows) {
		console.log(
			`| ${row.size} | ${row.variant} | ${row.medianMs} | ${row.vsRaw} | ${row.aboveEngineVsRaw ?? ''} | ${row.bytesPerItem} |`,
		);
	}
	console.log('\n| items | ratio | median of rounds | interval of the median | per round |');
	console.log('| ---: | --- | ---: | --- | --- |');
	for (const r of ratios) {
		console.log(
			`| ${r.size} | ${r.ratio} | ${r.median.toFixed(2)} | ${formatInterval(r.interval)} | ${r.perRound.map((x) => x.toFixed(2)).join(', ')} |`,
		);
	}
	console.log(
		`\nresults: ${saveResults('node-level', { node: nodeVersion, rounds, timedRuns, rows, ratios, samples })}`,
	);
})().catch((error) => {
	console.error(error);
	process.exit(1);
});
