// The report: the tables of medians per variant, shape and concurrency, the ratios between
// variants round by round, and the verdicts on the targets.
import { createRequire } from 'node:module';
import os from 'node:os';

const require = createRequire(import.meta.url);
const { formatInterval, machine, median, medianInterval } = require('../support.js');

export const fmt = (n, digits = 1) =>
	n === undefined || Number.isNaN(n) ? '–' : n.toFixed(digits);

/**
 * The tables: medians per variant, shape and concurrency, and the ratios. Also used by --summarise.
 * `pairs` and `title`: another bench's ratios and heading (bench/webhook-ab.mjs).
 */
export function summarise(
	config,
	samples,
	serverKind,
	machineInfo = machine(),
	{ pairs = RATIO_PAIRS, title = undefined } = {},
) {
	const table = [];
	const ratios = [];
	for (const shape of config.shapes) {
		for (const c of config.concurrency) {
			for (const v of config.variants) {
				const runs = samples.filter(
					(s) => s.shape === shape && s.concurrency === c && s.variant === v,
				);
				if (!runs.length) continue;
				table.push({
					shape,
					concurrency: c,
					variant: v,
					rps: median(runs.map((r) => r.rps)),
					p50: median(runs.map((r) => r.p50)),
					p99: median(runs.map((r) => r.p99)),
					cpuMain: median(runs.map((r) => r.cpuMsPerRequest.main)),
					cpuRunner: median(runs.map((r) => r.cpuMsPerRequest.runner)),
					cpuPostgres: median(runs.map((r) => r.cpuMsPerRequest.postgres)),
					otherCpuShare: median(runs.map((r) => r.otherCpuShare)),
					inFlight: runs.reduce((sum, r) => sum + (r.inFlight ?? 0), 0),
					rounds: runs.length,
				});
			}
			for (const [of, against] of pairs) {
				const ratio = ratioRow(config, samples, [shape], c, of, against);
				if (ratio) ratios.push(ratio);
			}
		}
	}
	// Both shapes together: twice the rounds behind each median.
	if (config.shapes.length > 1) {
		for (const c of config.concurrency) {
			for (const [of, against] of pairs) {
				const ratio = ratioRow(config, samples, config.shapes, c, of, against);
				if (ratio) ratios.push(ratio);
			}
		}
	}

	const out = [];
	out.push(
		`\n## ${title ?? 'Webhook level: n8n 2.41.1, one server'}, ${config.rounds} interleaved rounds of ${config.requests} requests per variant, shape and concurrency\n`,
	);
	out.push(
		`machine: ${JSON.stringify(machineInfo)}, PostgreSQL: ${serverKind}${config.profile ? ', CPU PROFILER ON (throughput not comparable)' : ''}`,
	);
	if (Object.keys(config.env).length)
		out.push(`extra n8n environment: ${JSON.stringify(config.env)}`);
	out.push('');
	out.push(
		"| shape | conc. | variant | req/s | p50 ms | p99 ms | CPU ms/req n8n main | task runner | PostgreSQL | others' CPU | 409 in flight |",
	);
	out.push('| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
	for (const r of table) {
		out.push(
			`| ${r.shape} | ${r.concurrency} | ${r.variant} | ${fmt(r.rps)} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.cpuMain)} | ${fmt(r.cpuRunner)} | ${fmt(r.cpuPostgres)} | ${fmt(r.otherCpuShare * 100, 0)}% | ${r.inFlight || ''} |`,
		);
	}
	out.push(
		`\nMedians across rounds. CPU ms/req: from /proc, over the load and the wait until n8n saved its last execution. ` +
			`others' CPU: share of the machine's ${os.cpus().length} cores used by processes outside this benchmark during the load (noise). ` +
			'409 in flight: repeats answered 409 while their original still ran (lease mode), all rounds together; each was resent after the load and answered duplicate.\n',
	);
	out.push(...threadTable(config, samples));
	const interval = (i) => formatInterval(i, 3);
	out.push(
		'| shape | conc. | ratio | req/s ratio: median of rounds | interval of the median | per round | CPU-based: median | interval | n8n CPU/req ratio: median | interval | per round |',
	);
	out.push('| --- | ---: | --- | ---: | --- | --- | ---: | --- | ---: | --- | --- |');
	for (const r of ratios) {
		out.push(
			`| ${r.shape} | ${r.concurrency} | ${r.ratio} | **${fmt(r.median, 3)}** | ${interval(r.interval)} | ${r.perRound.map((x) => fmt(x, 2)).join(', ')} | ` +
				`${fmt(r.cpuMedian, 3)} | ${interval(r.cpuInterval)} | **${fmt(r.n8nCpuMedian, 3)}** | ${interval(r.n8nCpuInterval)} | ${r.n8nCpuPerRound.map((x) => fmt(x, 2)).join(', ')} |`,
		);
	}
	out.push(
		"\nreq/s ratio: package req/s ÷ the other variant's, within each round (the two loads ran a minute or two apart), median over rounds. " +
			"CPU-based: the other variant's CPU per request (n8n main + task runner + PostgreSQL) ÷ the package's: the throughput ratio " +
			'to expect when CPU is the bottleneck (n8n uses most of both cores here); it moves less than req/s with other load. ' +
			"n8n CPU/req ratio: the first variant's CPU per request of n8n (main process + task runner) ÷ the second's, within each round: " +
			'a cost (below 1: cheaper), what the lease targets are about.',
	);
	const target = ratios.filter(
		(r) => r.ratio === 'package/floor' && r.shape === config.shapes.join('+'),
	);
	if (target.length) {
		// Met only when the whole interval of the median is at or above 0.95: the spread is then smaller than the gap.
		const verdict = (r) => {
			const state =
				r.interval.low >= 0.95
					? 'met'
					: r.interval.high < 0.95
						? 'MISSED'
						: 'NOT PROVEN (the interval straddles 0.95)';
			return `c=${r.concurrency} ${state}: median ${fmt(r.median, 3)}, interval ${interval(r.interval)}; CPU-based ${fmt(r.cpuMedian, 3)}, ${interval(r.cpuInterval)}`;
		};
		out.push(
			`\ntarget package ≥ 0.95 × floor req/s, both shapes: ${target.map(verdict).join('; ')}`,
		);
	}
	// The lease template's targets (issue 9), in n8n CPU per request, both shapes together: at most
	// 1.10 × the floor's, and below the hand-built pattern's. Met only when the whole interval is on its side.
	// Neither baseline checks a signature, so the template without its signature check is held against
	// them where that variant runs.
	const leaseTemplate = config.variants.includes('packageNoVerify') ? 'packageNoVerify' : 'package';
	for (const [against, limit, strict] of [
		['floor', 1.1, false],
		['handBuilt', 1, true],
	]) {
		const rows = ratios.filter(
			(r) => r.ratio === `${leaseTemplate}/${against}` && r.shape === config.shapes.join('+'),
		);
		if (!rows.length) continue;
		const verdict = (r) => {
			const { low, high } = r.n8nCpuInterval;
			const inside = strict ? high < limit : high <= limit;
			const outside = strict ? low >= limit : low > limit;
			const state = inside
				? 'met'
				: outside
					? 'MISSED'
					: `NOT PROVEN (the interval straddles ${limit})`;
			return `c=${r.concurrency} ${state}: median ${fmt(r.n8nCpuMedian, 3)}, interval ${interval(r.n8nCpuInterval)}`;
		};
		out.push(
			`target ${leaseTemplate} n8n CPU/req ${strict ? '<' : '≤'} ${limit} × ${against}, both shapes: ${rows.map(verdict).join('; ')}`,
		);
	}

	return { table, ratios, out };
}

/**
 * --threads: n8n's main process by thread, CPU ms per request, median across rounds, one column per
 * variant. Threads that used no CPU in any load are left out.
 */
function threadTable(config, samples) {
	const measured = samples.filter((s) => s.threadCpuMsPerRequest !== undefined);
	if (!measured.length) return [];
	const keys = [...new Set(measured.flatMap((s) => Object.keys(s.threadCpuMsPerRequest)))].sort();
	const out = [
		"n8n's main process by thread (--threads), CPU ms per request, median across rounds:\n",
		`| shape | conc. | thread | ${config.variants.join(' | ')} |`,
		`| --- | ---: | --- | ${config.variants.map(() => '---:').join(' | ')} |`,
	];
	for (const shape of config.shapes) {
		for (const c of config.concurrency) {
			const of = (v) =>
				measured.filter((s) => s.shape === shape && s.concurrency === c && s.variant === v);
			for (const key of keys) {
				const cells = config.variants.map((v) => {
					const runs = of(v);
					return runs.length ? median(runs.map((r) => r.threadCpuMsPerRequest[key] ?? 0)) : 0;
				});
				if (cells.every((ms) => Math.abs(ms) < 0.005)) continue;
				out.push(`| ${shape} | ${c} | ${key} | ${cells.map((ms) => fmt(ms, 2)).join(' | ')} |`);
			}
		}
	}
	out.push('');
	return out;
}

/** The throughput ratios reported: the package against each baseline, and one n8n node that does nothing against none. */
const RATIO_PAIRS = [
	['package', 'floor'],
	['package', 'floorLight'],
	['floorLight', 'floor'],
	['package', 'floorLiteral'],
	['floorLiteral', 'floorLight'],
	['package', 'handBuilt'],
	['package', 'packageSimple'],
	['packageSimple', 'floor'],
	['packageSimple', 'handBuilt'],
	['package', 'floorNoOp'],
	['package', 'packageNoVerify'],
	['packageNoVerify', 'floor'],
	['packageNoVerify', 'floorLight'],
	['packageNoVerify', 'handBuilt'],
	['floorNoOp', 'floor'],
	['exactlyOnce', 'floor'],
	['exactlyOnce', 'package'],
	['api', 'floorApi'],
	['package', 'packageNoFingerprint'],
	['package', 'packageNoErrorOutput'],
	['packageNoErrorOutput', 'floorLight'],
	['removeDuplicates', 'floor'],
	['package', 'removeDuplicates'],
	['rdHistory0', 'floor'],
	['rdHistory1k', 'floor'],
	['rdHistory10k', 'floor'],
	['pkgHistory0', 'floor'],
	['pkgHistory1k', 'floor'],
	['pkgHistory1m', 'floor'],
	['package', 'packageBefore'],
	['packageBefore', 'floor'],
	['exactlyOnce', 'packageBefore'],
	['multiStep', 'multiStepPlain'],
	['answerFirst', 'answerLast'],
	['answerFirst', 'package'],
	['answerFirst', 'floorAnswerFirst'],
	['answerFirst', 'answerFirstNoKeeper'],
	['answerFirstLean', 'package'],
	['floorAnswerFirst', 'floorLight'],
];

/** `of` against `against` in the given shapes at concurrency c: per-round ratios and their medians. */
function ratioRow(config, samples, shapes, c, of, against) {
	if (!config.variants.includes(of) || !config.variants.includes(against)) return undefined;
	const perRound = [];
	const cpuPerRound = [];
	const n8nCpuPerRound = [];
	for (const shape of shapes) {
		for (let round = 1; round <= config.rounds; round++) {
			const pick = (v) =>
				samples.find(
					(s) => s.shape === shape && s.concurrency === c && s.variant === v && s.round === round,
				);
			const mine = pick(of);
			const other = pick(against);
			if (!mine || !other) continue;
			perRound.push(mine.rps / other.rps);
			const stackCpu = (sample) =>
				sample.cpuMsPerRequest.main +
				sample.cpuMsPerRequest.runner +
				sample.cpuMsPerRequest.postgres;
			cpuPerRound.push(stackCpu(other) / stackCpu(mine));
			const n8nCpu = (sample) => sample.cpuMsPerRequest.main + sample.cpuMsPerRequest.runner;
			n8nCpuPerRound.push(n8nCpu(mine) / n8nCpu(other));
		}
	}
	if (!perRound.length) return undefined;
	const mid = median(perRound);
	const cpuMid = median(cpuPerRound);
	return {
		shape: shapes.join('+'),
		concurrency: c,
		ratio: `${of}/${against}`,
		median: mid,
		interval: medianInterval(perRound),
		cpuInterval: medianInterval(cpuPerRound),
		perRound,
		spread: (Math.max(...perRound) - Math.min(...perRound)) / mid,
		cpuMedian: cpuMid,
		cpuPerRound,
		cpuSpread: (Math.max(...cpuPerRound) - Math.min(...cpuPerRound)) / cpuMid,
		n8nCpuMedian: median(n8nCpuPerRound),
		n8nCpuInterval: medianInterval(n8nCpuPerRound),
		n8nCpuPerRound,
	};
}
