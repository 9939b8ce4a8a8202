// Node level: one execution with N items (half new, half already reserved) through Idempotency
// Reserve in n8n-core's WorkflowExecute, against the same reservation as one raw SQL statement
// with pg, and against one statement per item. Variants run interleaved (A B C A B C …), each
// measurement in a fresh process after a warm-up run of the same size; medians and ratios are
// reported, never a lone absolute time.
//   node bench/node-level.js [--rounds 3] [--sizes 1000,10000,100000] [--per-item-max 10000]
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { benchDatabase, machine, median, option, saveResults } = require('./support');

const rounds = Number(option('rounds', 3));
const sizes = option('sizes', '1000,10000,100000').split(',').map(Number);
const perItemMax = Number(option('per-item-max', 10000));
const variants = ['raw', 'node', 'nodeWithoutFirstSeen', 'perItem'];

function measure(variant, size, url) {
	const output = execFileSync(
		process.execPath,
		['--expose-gc', path.join(__dirname, 'reserve-worker.js'), variant, String(size), url],
		{ encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
	);
	const result = JSON.parse(output.trim().split('\n').pop());
	if (result.newCount !== size / 2 || result.duplicateCount !== size / 2) {
		throw new Error(`${variant} ${size}: routed ${result.newCount} new / ${result.duplicateCount} duplicates, expected half each`);
	}
	return result;
}

(async () => {
	const db = await benchDatabase('idem_bench_node');
	const samples = {};
	try {
		for (let round = 1; round <= rounds; round++) {
			for (const size of sizes) {
				for (const variant of variants) {
					if (variant === 'perItem' && size > perItemMax) continue;
					const result = measure(variant, size, db.url);
					(samples[`${size}:${variant}`] ??= []).push(result);
					process.stdout.write(`round ${round} ${String(size).padStart(6)} ${variant.padEnd(20)} ${result.ms.toFixed(1)} ms\n`);
				}
			}
		}
	} finally {
		await db.close();
	}

	const rows = [];
	for (const size of sizes) {
		const rawMs = median(samples[`${size}:raw`].map((r) => r.ms));
		for (const variant of variants) {
			const runs = samples[`${size}:${variant}`];
			if (!runs) continue;
			const ms = median(runs.map((r) => r.ms));
			const bytesPerItem = median(runs.map((r) => (r.peakRss - r.rssBefore) / size));
			rows.push({ size, variant, medianMs: +ms.toFixed(1), vsRaw: +(ms / rawMs).toFixed(2), bytesPerItem: Math.round(bytesPerItem) });
		}
	}
	console.log(`\nNode level, ${rounds} interleaved rounds, PostgreSQL: ${db.kind}, ${JSON.stringify(machine())}`);
	console.log('| items | variant | median ms | × raw statement | RSS growth per item (bytes) |');
	console.log('| ---: | --- | ---: | ---: | ---: |');
	for (const row of rows) {
		console.log(`| ${row.size} | ${row.variant} | ${row.medianMs} | ${row.vsRaw} | ${row.bytesPerItem} |`);
	}
	for (const size of sizes) {
		const node = rows.find((r) => r.size === size && r.variant === 'node');
		const perItem = rows.find((r) => r.size === size && r.variant === 'perItem');
		if (node && perItem) console.log(`${size} items: one statement per item is ${(perItem.medianMs / node.medianMs).toFixed(1)}× slower than the node`);
	}
	console.log(`\nresults: ${saveResults('node-level', { rounds, rows, samples })}`);
})().catch((error) => {
	console.error(error);
	process.exit(1);
});
