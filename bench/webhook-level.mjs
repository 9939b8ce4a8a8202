// Webhook level: the same deliveries, on loopback, to several workflows published in ONE real n8n
// 2.41.1 server (scripts/harness startStack), measured interleaved, round after round:
//   floor         Webhook → business step (n8n Postgres INSERT INTO business_log) → Respond 200
//   floorNoOp     the floor with n8n's No Operation node after the Webhook: what one more node that does
//                 nothing costs in n8n (reference for what is n8n's and what is the package's)
//   bare          Webhook → Respond 200 (reference only)
//   handBuilt     the design note's pattern: Webhook → Code (evt:<id> / sha256:<raw body>) → Postgres
//                 INSERT … ON CONFLICT DO NOTHING RETURNING key → IF "Row Returned?" → business step →
//                 Respond 200 / Respond 200 duplicate (keys in processed_events_hand)
//   packageSimple the webhook template as it was before lease mode and signature checks: Reserve (mode
//                 simple) → business step → Respond 200 / Respond 200 duplicate (processed_events_simple)
//   package       the template workflows/idempotent-webhook.json: Reserve (version 2.2: checks the
//                 Stripe signature, then reserves in lease mode) → business step → Complete Key →
//                 Respond 200; duplicate → 200, in flight → 409, invalid signature → 401
//                 (processed_events)
//   packageBefore the template as it was before Reserve version 2 (bench/workflows/package-before.json:
//                 Verify Webhook Signature → Reserve v1 → IF "In Flight?"; processed_events_before):
//                 package/packageBefore is what the node fewer on each path saves
//   exactlyOnce   workflows/exactly-once-postgres.json: Reserve → Exactly-Once SQL (business insert
//                 and completion in one transaction) → Respond 200 (processed_events_once)
//   answerFirst   workflows/answer-first.json: Reserve stores the delivery with its key → Respond
//                 200 accepted → Event to Run → business step → Complete Key, the Redrive Trigger
//                 beside it (processed_events_af)
//   answerLast    the same workflow with Reserve's Answer First off: business step → Complete Key
//                 and Answer (processed_events_al): answerFirst/answerLast is what answering first
//                 costs per event; the key tables' bytes per key are printed at the end
//   packageNoVerify  the template with Reserve's signature check off (keys in processed_events_nover),
//                 built from the template at start: package/packageNoVerify is what verifying the
//                 signature costs per request, and packageNoVerify is the lease template to hold
//                 against the floor and the hand-built pattern, neither of which checks a signature
// Every request of every variant carries a genuine Stripe-Signature for its bytes (same headers
// everywhere; only the package variant checks it).
// The others are bench/workflows/*.json; a variant is one entry in VARIANTS (bench/webhook/variants.mjs). Two traffic shapes:
// distinct (every request a new event id) and repeated (every id sent twice, so half are
// duplicates), each at every concurrency.
// Reported: requests/s and p50/p99 latency (medians across rounds), CPU per request of n8n's main
// process, its task runner and PostgreSQL (from /proc), the share of the machine other processes
// used meanwhile, and the ratios (package against floor, handBuilt, packageSimple, packageNoVerify
// and floorNoOp, …) round by round: req/s, and CPU per request, which moves less when the machine is
// shared. Afterwards every answer, every business row, every key row and every execution n8n recorded
// is checked: a lost or doubled row, a non-200 answer (but see below), an answer from the wrong branch
// or a missing or failed execution fails the run (exit 1). The one exception: in lease mode a repeat
// that arrives while its original still runs is answered 409 with Retry-After, which is right; it is
// checked, then resent after the load like a sender's retry and must then be answered duplicate
// (recordInFlight, resendInFlight).
//
//   node bench/webhook-level.mjs [--rounds 6] [--requests 120] [--concurrency 1,16]
//        [--shapes distinct,repeated] [--variants floor,floorNoOp,bare,handBuilt,packageSimple,package,packageNoVerify]
//        [--warmup 60] [--env NAME=VALUE ...] [--profile]
//   node bench/webhook-level.mjs --history [--rounds 5] [--concurrency 1]: cost as the history grows
//        (bench/webhook/history.mjs): Remove Duplicates at 0, 1,000 and 10,000 remembered values and
//        the template at 0, 1,000 and 1,000,000 keys, each against the floor; distinct events only
//   node bench/webhook-level.mjs --summarise bench-results/webhook-level-….json [--shapes distinct]
//
// Defaults: 6 rounds × 120 requests per variant, shape and concurrency (17,280 measured requests
// with all six variants, ~30 min on an idle 2-core machine, more when other sessions keep it
// busy). Many short interleaved rounds rather than few long ones, because this machine's speed
// drifts by ±15% over minutes (the same workflow's CPU per request moves that much with nothing
// else running); odd rounds run the variants in one order, even rounds in the reverse one. Each ratio is reported as
// the median of its per-round ratios with a distribution-free interval of that median (order
// statistics; 6 rounds give min…max at 97 % coverage); a target counts as met only when the
// whole interval is on its side.
// n8n runs with EXECUTIONS_DATA_PRUNE=false (the checks count every execution) and
// NODE_FUNCTION_ALLOW_BUILTIN=crypto (the hand-built Code node); --env adds or overrides, e.g.
// --env N8N_EXPRESSION_ENGINE=legacy.
//
// --profile starts n8n's main process with NODE_OPTIONS=--cpu-prof and attributes its CPU samples
// to the load windows of each variant (V8's profile clock and process.hrtime are both
// CLOCK_MONOTONIC): CPU per request by module (this package, n8n-core, typeorm, pg, …) and the
// top functions. The profiler slows n8n down: use its numbers for where the time goes, not for
// throughput.
//
// This file parses the command line and runs the benchmark; the parts live in bench/webhook/:
// config (flags), variants (the VARIANTS table), load (bodies, ids, the closed loop), measure (one
// measured load), checks (the ledger and the checks against n8n's and PostgreSQL's records), cpu
// (/proc), idle (n8n's execution counts), profile (--profile), report (the tables and ratios).
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

import { startStack } from '../scripts/harness/index.mjs';
import {
	checkBodyWithoutId,
	checkRecords,
	createLedger,
	record,
	resendInFlight,
} from './webhook/checks.mjs';
import { configFrom, list, parseArgs, REPO_DIR, USAGE } from './webhook/config.mjs';
import { postmasterPidOf } from './webhook/cpu.mjs';
import { waitForIdle } from './webhook/idle.mjs';
import { loadIds, runLoad } from './webhook/load.mjs';
import { measureAnswerFirstCosts } from './webhook/answerFirstCosts.mjs';
import { measureLoad } from './webhook/measure.mjs';
import { summariseProfile } from './webhook/profile.mjs';
import { fmt, summarise } from './webhook/report.mjs';
import { checkVariantNames, HAND_TABLE_SQL, loadVariants } from './webhook/variants.mjs';

const require = createRequire(import.meta.url);
const { saveResults } = require('./support.js');

const args = parseArgs(process.argv.slice(2));
if (args.help) {
	process.stdout.write(USAGE);
	process.exit(0);
}
const config = configFrom(args);
const VARIANTS = loadVariants();
checkVariantNames(VARIANTS, config.variants);

const runTag = Date.now().toString(36);

async function main() {
	const run = { config, variants: VARIANTS, ledger: createLedger(Object.keys(VARIANTS)) };
	const { ledger } = run;
	/** variant → average bytes n8n saved per execution ({ data, workflowSnapshot }), filled by checkRecords */
	const executionDataBytes = {};
	/** variant → bytes its key table holds per key ({ row, onDisk }), filled by checkRecords */
	const keyBytes = {};
	const started = Date.now();
	const profileDir = config.profile
		? path.join(
				REPO_DIR,
				'bench-results',
				`webhook-level-profile-${new Date().toISOString().replace(/[:.]/g, '-')}`,
			)
		: undefined;
	if (profileDir) mkdirSync(profileDir, { recursive: true });
	const env = {
		NODE_FUNCTION_ALLOW_BUILTIN: 'crypto',
		// n8n prunes beyond 10,000 executions by default; the checks count every execution.
		EXECUTIONS_DATA_PRUNE: 'false',
		...config.env,
		...(profileDir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` } : {}),
	};
	const extraWorkflows = config.variants
		.filter((v) => !VARIANTS[v].template)
		.map((v) => VARIANTS[v].file);
	const beforeStack = Number(process.hrtime.bigint() / 1000n);
	const stack = await startStack({
		label: 'bench',
		extraWorkflows,
		env,
		// --answer-first-costs counts an idle Redrive Trigger's statements with pg_stat_statements.
		...(config.answerFirstCosts
			? { serverSettings: { shared_preload_libraries: 'pg_stat_statements' } }
			: {}),
	});
	const urls = {};
	const samples = [];
	const windows = [];
	let serverPid;
	let failed = false;
	let answerFirstCosts;
	try {
		for (const v of config.variants) {
			urls[v] = VARIANTS[v].template
				? stack.webhookUrl
				: stack.extraWorkflows.find((w) => w.id === VARIANTS[v].workflowId)?.webhookUrl;
			if (!urls[v]) throw new Error(`no webhook URL for ${v}`);
		}
		serverPid = stack.n8n.pid;
		await stack.keysDb.query(HAND_TABLE_SQL);
		const postmasterPid = postmasterPidOf(stack);
		process.stderr.write(
			`\nwebhook level: ${config.rounds} rounds × ${config.shapes.join('/')} × concurrency ${config.concurrency.join('/')} × ` +
				`${config.variants.join(', ')}; ${config.requests} requests each; n8n ${stack.n8n.baseUrl} (pid ${serverPid})\n`,
		);

		// Smoke: a body without id, twice, to each deduplicating variant: the key is sha256 of the raw bytes.
		await checkBodyWithoutId(run, urls, runTag);

		// Warm-up (not measured): JIT, pools, the task runner.
		let seq = 0;
		for (const v of config.variants) {
			for (const c of config.concurrency) {
				const ids = loadIds(
					`${runTag}.${VARIANTS[v].tag}.warm.c${c}`,
					'distinct',
					Math.ceil(config.warmup / config.concurrency.length),
				);
				const { answers } = await runLoad(urls[v], ids, c, seq, VARIANTS[v].headers);
				seq += ids.length;
				ids.forEach((id, i) => record(run, v, id, answers[i]));
			}
		}
		await waitForIdle(stack, run);
		await resendInFlight(stack, urls, run);
		if (ledger.failures.length)
			throw new Error(`the warm-up failed:\n${ledger.failures.slice(0, 20).join('\n')}`);
		// Stores filled before the rounds (--history: Remove Duplicates' row proven, key tables pre-filled).
		for (const v of config.variants) await VARIANTS[v].prepare?.(stack, run, urls[v]);
		if (ledger.failures.length)
			throw new Error(`preparing the stores failed:\n${ledger.failures.slice(0, 20).join('\n')}`);

		for (let round = 1; round <= config.rounds; round++) {
			for (const shape of config.shapes) {
				for (const c of config.concurrency) {
					// A B C D, then D C B A: a drift of the machine's speed within a round favours no variant.
					const order = round % 2 === 1 ? config.variants : [...config.variants].reverse();
					for (const v of order) {
						const { sample, window } = await measureLoad(stack, run, {
							urls,
							postmasterPid,
							runTag,
							round,
							shape,
							concurrency: c,
							variant: v,
							seq,
						});
						seq += sample.requests;
						samples.push(sample);
						windows.push(window);
					}
				}
			}
		}

		await checkRecords(stack, run, executionDataBytes, keyBytes);
		if (config.answerFirstCosts)
			answerFirstCosts = await measureAnswerFirstCosts(stack, config, samples);
	} catch (error) {
		failed = true;
		ledger.fail(`benchmark aborted: ${error.stack ?? error}`);
		process.stderr.write(`\n--- last lines of n8n's log ---\n${stack.n8n.logTail(30)}\n---\n`);
	} finally {
		await stack.stop();
	}

	// -------------------------------------------------------------------------------------------
	// Summary
	const { table, ratios, out } = summarise(config, samples, stack.server.kind);

	if (Object.keys(executionDataBytes).length) {
		out.push(
			`\nexecution data n8n saved per execution (average bytes): ${Object.entries(
				executionDataBytes,
			)
				.map(([v, bytes]) => `${v} ${bytes.data} (+ workflow snapshot ${bytes.workflowSnapshot})`)
				.join(', ')}`,
		);
	}

	if (Object.keys(keyBytes).length) {
		out.push(
			`key table per key (average row bytes, on disk with TOAST and indexes): ${Object.entries(
				keyBytes,
			)
				.map(([v, bytes]) => `${v} ${bytes.row} (${bytes.onDisk})`)
				.join(', ')}`,
		);
	}

	if (answerFirstCosts) out.push(...answerFirstCosts.out);

	let profileSummary;
	if (profileDir && serverPid) {
		profileSummary = summariseProfile(config, profileDir, serverPid, windows, beforeStack, out);
	}

	const runSeconds = (Date.now() - started) / 1000;
	out.push(
		`\nchecks: ${ledger.failures.length ? `FAILED (${ledger.failures.length})` : 'passed'}; run time ${fmt(runSeconds / 60)} min`,
	);
	process.stdout.write(`${out.join('\n')}\n`);
	const file = saveResults('webhook-level', {
		command: `node bench/webhook-level.mjs ${process.argv.slice(2).join(' ')}`.trim(),
		config,
		n8n: '2.41.1',
		postgres: stack.server.kind,
		runSeconds,
		table,
		ratios,
		samples,
		windows,
		profile: profileSummary,
		executionDataBytes,
		keyBytes,
		...(answerFirstCosts ? { answerFirstCosts: { ...answerFirstCosts, out: undefined } } : {}),
		checks: {
			passed: ledger.failures.length === 0,
			failures: ledger.failures,
			requests: ledger.requests,
			/** raceProne variants: events processed more than once */
			doubled: ledger.doubled,
		},
	});
	process.stdout.write(`results: ${file}\n`);
	if (ledger.failures.length || failed) {
		process.stderr.write(`\nFAILED:\n${ledger.failures.slice(0, 50).join('\n')}\n`);
		process.exitCode = 1;
	}
}

if (args.summarise) {
	// Prints the tables of an earlier run again: node bench/webhook-level.mjs --summarise bench-results/webhook-level-….json
	// (--shapes distinct: only those loads; the profile is analysed again when its file is still there)
	const saved = JSON.parse(readFileSync(args.summarise, 'utf8'));
	Object.assign(config, saved.config);
	if (args.shapes) config.shapes = list(args.shapes);
	const inShapes = (entry) => config.shapes.includes(entry.shape);
	const { out } = summarise(config, saved.samples.filter(inShapes), saved.postgres, saved.machine);
	if (saved.profile?.file && existsSync(saved.profile.file) && saved.windows) {
		const pid = path.basename(saved.profile.file).split('.')[3];
		summariseProfile(
			config,
			path.dirname(saved.profile.file),
			Number(pid),
			saved.windows.filter(inShapes),
			0,
			out,
		);
	}
	out.push(
		`\nchecks: ${saved.checks.passed ? 'passed' : `FAILED (${saved.checks.failures.length})`}; run time ${fmt(saved.runSeconds / 60)} min`,
	);
	process.stdout.write(`${out.join('\n')}\n`);
} else {
	main().catch((error) => {
		process.stderr.write(`${error.stack ?? error}\n`);
		process.exitCode = 1;
	});
}
