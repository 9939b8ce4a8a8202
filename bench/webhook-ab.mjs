// A/B of two builds of the package in one run: this checkout ("current") and another commit
// ("base"), each installed in its own n8n 2.41.1 stack on this machine (scripts/harness startStack;
// the base checked out and `npm ci`-ed once in a git worktree outside the repository,
// bench/webhook/baseCheckout.mjs), each stack with its own webhook template (the one of its commit)
// and the same floor. Rounds interleave the four loads (current floor, current template, base floor,
// base template; odd rounds in that order, even rounds reversed), so a drift of the machine's speed
// favours no build, and only one stack works at a time.
// Two stacks doing identical work differ by a few per cent (the one started first, its ports, its
// databases): a cross-over cancels that. The stacks sit in two slots, A (started first) and B; the
// first half of the rounds runs current in A and base in B, then both stacks are stopped and started
// again with the builds swapped (--swap no keeps one placement).
// Measured as the webhook-level bench measures (bench/webhook/measure.mjs): n8n CPU per request
// (main process + task runner) from /proc, and reported as the median of per-round ratios with its
// distribution-free interval (report.mjs, abRatios.mjs):
//   current/currentFloor  the current template against the floor, both in the current stack
//   base/baseFloor        the base template against the floor, both in the base stack
//   current/base          the two templates, across the stacks, both placements pooled
//   currentFloor/baseFloor the same floor in both stacks
//   (current/currentFloor) ÷ (base/baseFloor)  each template against its own stack's floor
//   slot A floor / slot B floor  how far apart the slots themselves are
// Every round keeps the webhook-level bench's checks (checks.mjs): each answer from the expected
// branch, one business row per event, one key row per event, every execution recorded as a success.
//
//   npm run bench:ab -- --base <commit> [--rounds 6] [--requests 120] [--concurrency 1,16]
//        [--shapes distinct] [--floor floorLight] [--warmup 20] [--swap yes|no] [--env NAME=VALUE ...]
//
// The floor defaults to floorLight (bench/workflows/floor-light.json: its Respond reads $json, the
// lightest honest floor); --floor floor is the older one that reads $('Webhook').
import { createRequire } from 'node:module';

import { startStack } from '../scripts/harness/index.mjs';
import { baseCheckout, currentBuild } from './webhook/baseCheckout.mjs';
import {
	checkBodyWithoutId,
	checkRecords,
	createLedger,
	record,
	resendInFlight,
} from './webhook/checks.mjs';
import { configFrom, parseArgs } from './webhook/config.mjs';
import { postmasterPidOf } from './webhook/cpu.mjs';
import { waitForIdle } from './webhook/idle.mjs';
import { loadIds, runLoad } from './webhook/load.mjs';
import { measureLoad } from './webhook/measure.mjs';
import { abRatioLines, abRatios } from './webhook/abRatios.mjs';
import { fmt, summarise } from './webhook/report.mjs';
import { checkVariantNames, loadVariants } from './webhook/variants.mjs';

const require = createRequire(import.meta.url);
const { saveResults } = require('./support.js');

const USAGE =
	'npm run bench:ab -- --base <commit> [--rounds 6] [--requests 120] [--concurrency 1,16]\n' +
	'                    [--shapes distinct] [--floor floorLight] [--warmup 20] [--swap yes|no]\n' +
	'                    [--env NAME=VALUE]\n';

const args = parseArgs(process.argv.slice(2));
if (args.help || !args.base) {
	process.stdout.write(USAGE);
	process.exit(args.help ? 0 : 2);
}
const floor = args.floor ?? 'floorLight';
const config = configFrom({
	...args,
	shapes: args.shapes ?? 'distinct',
	warmup: args.warmup ?? 20,
	variants: `${floor},package`,
});
if (args.profile) throw new Error('--profile: use bench/webhook-level.mjs (one stack)');
if (!['yes', 'no', undefined].includes(args.swap)) throw new Error('--swap: yes or no');
const swap = args.swap !== 'no' && config.rounds > 1;
const VARIANTS = loadVariants();
checkVariantNames(VARIANTS, config.variants);

/** The names the report gives each (stack, variant): the template is named after its build. */
const reportName = (build, variant) => (variant === 'package' ? build : `${build}Floor`);
const PAIRS = [
	['current', 'currentFloor'],
	['base', 'baseFloor'],
	['current', 'base'],
	['currentFloor', 'baseFloor'],
];

const runTag = Date.now().toString(36);

async function startBuild(build, slot, sourceDir, env) {
	const stack = await startStack({
		label: `ab-${slot}-${build}`,
		extraWorkflows: [VARIANTS[floor].file],
		env,
		sourceDir,
	});
	const urls = {
		package: stack.webhookUrl,
		[floor]: stack.extraWorkflows.find((w) => w.id === VARIANTS[floor].workflowId)?.webhookUrl,
	};
	if (!urls[floor]) throw new Error(`${build}: no webhook URL for ${floor}`);
	return {
		build,
		slot,
		stack,
		urls,
		postmasterPid: postmasterPidOf(stack),
		run: { config, variants: VARIANTS, ledger: createLedger(config.variants) },
		tag: `${runTag}${slot}${build[0]}`,
		seq: 0,
	};
}

/** The warm-up (not measured) and the body-without-id smoke of one stack. */
async function warmUp(instance) {
	const { stack, run, urls } = instance;
	await checkBodyWithoutId(run, urls, instance.tag);
	for (const v of config.variants) {
		for (const c of config.concurrency) {
			const ids = loadIds(
				`${instance.tag}.${VARIANTS[v].tag}.warm.c${c}`,
				'distinct',
				Math.ceil(config.warmup / config.concurrency.length),
			);
			const { answers } = await runLoad(urls[v], ids, c, instance.seq, VARIANTS[v].headers);
			instance.seq += ids.length;
			ids.forEach((id, i) => record(run, v, id, answers[i]));
		}
	}
	await waitForIdle(stack, run);
	await resendInFlight(stack, urls, run);
	if (run.ledger.failures.length)
		throw new Error(
			`${instance.build}: the warm-up failed:\n${run.ledger.failures.slice(0, 20).join('\n')}`,
		);
}

/** One round: every load of both stacks, in this round's order, at each shape and concurrency. */
async function measureRound(instances, round) {
	const samples = [];
	// Slot A's loads then slot B's, whichever build each holds; reversed on even rounds.
	const loads = instances.flatMap((instance) => config.variants.map((v) => ({ instance, v })));
	for (const shape of config.shapes) {
		for (const c of config.concurrency) {
			const order = round % 2 === 1 ? loads : [...loads].reverse();
			for (const { instance, v } of order) {
				const name = reportName(instance.build, v);
				const { sample } = await measureLoad(instance.stack, instance.run, {
					urls: instance.urls,
					postmasterPid: instance.postmasterPid,
					runTag: instance.tag,
					round,
					shape,
					concurrency: c,
					variant: v,
					seq: instance.seq,
					label: name,
				});
				instance.seq += sample.requests;
				samples.push({
					...sample,
					variant: name,
					slot: instance.slot,
					serverKind: instance.stack.server.kind,
				});
			}
		}
	}
	return samples;
}

async function main() {
	const started = Date.now();
	const current = currentBuild();
	const base = baseCheckout(args.base);
	const env = { EXECUTIONS_DATA_PRUNE: 'false', ...config.env };
	process.stderr.write(
		`\nA/B: current ${current.label} against base ${base.sha.slice(0, 12)} (${base.dir}); ` +
			`${config.rounds} rounds × ${config.shapes.join('/')} × concurrency ${config.concurrency.join('/')}, ` +
			`${config.requests} requests per load, floor ${floor}, ${swap ? 'builds swap slots halfway' : 'no swap'}\n`,
	);
	const samples = [];
	const failures = [];
	// Rounds 1..half with current in slot A; the rest (with --swap) with base in slot A.
	const half = swap ? Math.ceil(config.rounds / 2) : config.rounds;
	const placements = [
		{ first: 1, last: half, slots: { A: 'current', B: 'base' } },
		...(swap ? [{ first: half + 1, last: config.rounds, slots: { A: 'base', B: 'current' } }] : []),
	];
	const sourceDirs = { current: undefined, base: base.dir };
	for (const placement of placements) {
		const instances = [];
		try {
			for (const slot of ['A', 'B']) {
				const build = placement.slots[slot];
				instances.push(await startBuild(build, slot, sourceDirs[build], env));
			}
			for (const instance of instances) await warmUp(instance);
			for (let round = placement.first; round <= placement.last; round++)
				samples.push(...(await measureRound(instances, round)));
			for (const instance of instances) {
				process.stderr.write(`checks of the ${instance.build} stack (slot ${instance.slot}):\n`);
				await checkRecords(instance.stack, instance.run, {});
			}
		} catch (error) {
			failures.push(`benchmark aborted: ${error.stack ?? error}`);
			for (const instance of instances)
				process.stderr.write(
					`\n--- last lines of the ${instance.build} n8n's log ---\n${instance.stack.n8n.logTail(30)}\n---\n`,
				);
		} finally {
			for (const instance of instances) await instance.stack.stop();
		}
		for (const instance of instances)
			failures.push(
				...instance.run.ledger.failures.map(
					(f) => `${instance.build} (slot ${instance.slot}): ${f}`,
				),
			);
		if (failures.length) break;
	}

	const reportConfig = {
		...config,
		variants: ['currentFloor', 'current', 'baseFloor', 'base'],
	};
	const { table, ratios, out } = summarise(
		reportConfig,
		samples,
		samples[0]?.serverKind ?? '?',
		undefined,
		{
			pairs: PAIRS,
			title: `A/B: current ${current.label} against base ${base.sha.slice(0, 12)}, one n8n 2.41.1 each, floor ${floor}`,
		},
	);
	const abRows = abRatios(reportConfig, samples);
	out.push(...abRatioLines(abRows));
	const runSeconds = (Date.now() - started) / 1000;
	out.push(
		`\nchecks: ${failures.length ? `FAILED (${failures.length})` : 'passed'}; run time ${fmt(runSeconds / 60)} min`,
	);
	process.stdout.write(`${out.join('\n')}\n`);
	const file = saveResults('webhook-ab', {
		command: `npm run bench:ab -- ${process.argv.slice(2).join(' ')}`.trim(),
		config: reportConfig,
		floor,
		builds: { current, base: { sha: base.sha } },
		n8n: '2.41.1',
		runSeconds,
		table,
		ratios,
		abRatios: abRows,
		swap,
		samples,
		checks: { passed: failures.length === 0, failures },
	});
	process.stdout.write(`results: ${file}\n`);
	if (failures.length) {
		process.stderr.write(`\nFAILED:\n${failures.slice(0, 50).join('\n')}\n`);
		process.exitCode = 1;
	}
}

main().catch((error) => {
	process.stderr.write(`${error.stack ?? error}\n`);
	process.exitCode = 1;
});
