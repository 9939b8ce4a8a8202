// The A/B bench's own ratios (bench/webhook-ab.mjs), beyond the plain pairs of report.mjs: the two
// templates each held against the floor of its own stack, and how far the two stacks' slots
// differ doing identical work. Each is a median of per-round ratios of n8n CPU per request, with
// the distribution-free interval of that median.
import { createRequire } from 'node:module';

import { fmt } from './report.mjs';

const require = createRequire(import.meta.url);
const { formatInterval, median, medianInterval } = require('../support.js');

const n8nCpu = (sample) => sample.cpuMsPerRequest.main + sample.cpuMsPerRequest.runner;

function row(label, concurrency, perRound) {
	if (!perRound.length) return undefined;
	return {
		ratio: label,
		concurrency,
		median: median(perRound),
		interval: medianInterval(perRound),
		perRound,
	};
}

/**
 * Per round and concurrency: (current ÷ its stack's floor) ÷ (base ÷ its stack's floor), which a
 * stack that is uniformly faster or slower cancels out of; and slotA floor ÷ slotB floor (the slot
 * bias, whichever build each slot held that round).
 */
export function abRatios(config, samples) {
	const rows = [];
	for (const c of config.concurrency) {
		const normalised = [];
		const slotBias = [];
		for (const shape of config.shapes) {
			for (let round = 1; round <= config.rounds; round++) {
				const pick = (variant) =>
					samples.find(
						(s) =>
							s.shape === shape &&
							s.concurrency === c &&
							s.round === round &&
							s.variant === variant,
					);
				const [current, currentFloor, base, baseFloor] = [
					'current',
					'currentFloor',
					'base',
					'baseFloor',
				].map(pick);
				if (!current || !currentFloor || !base || !baseFloor) continue;
				normalised.push(
					n8nCpu(current) / n8nCpu(currentFloor) / (n8nCpu(base) / n8nCpu(baseFloor)),
				);
				const [slotA, slotB] =
					currentFloor.slot === 'A' ? [currentFloor, baseFloor] : [baseFloor, currentFloor];
				slotBias.push(n8nCpu(slotA) / n8nCpu(slotB));
			}
		}
		rows.push(
			row('(current/currentFloor) ÷ (base/baseFloor)', c, normalised),
			row('slot A floor / slot B floor', c, slotBias),
		);
	}
	return rows.filter(Boolean);
}

/** The lines of the report for abRatios' rows. */
export function abRatioLines(rows) {
	const out = [
		'',
		'| conc. | n8n CPU/req ratio | median | interval of the median | per round |',
		'| ---: | --- | ---: | --- | --- |',
	];
	for (const r of rows)
		out.push(
			`| ${r.concurrency} | ${r.ratio} | **${fmt(r.median, 3)}** | ${formatInterval(r.interval, 3)} | ${r.perRound.map((x) => fmt(x, 2)).join(', ')} |`,
		);
	out.push(
		'\nThe first row holds each template against the floor of its own stack, so a stack that is ' +
			'faster or slower as a whole cancels out. The second is the same floor in the two slots ' +
			'(slot A started first); with --swap the builds change slots halfway, so current/base above ' +
			'pools both placements.',
	);
	return out;
}
