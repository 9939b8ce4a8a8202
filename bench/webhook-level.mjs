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
//   package       the template workflows/idempotent-webhook.json (Verify Webhook Signature, then lease
//                 mode: Reserve → business step → Complete Key → Respond 200; duplicates → IF "In
//                 Flight?" → 409 / 200; processed_events)
//   packageNoVerify  the same template without Verify Webhook Signature (Webhook → Idempotency
//                 Reserve, keys in processed_events_nover), built from the template at start: the
//                 ratio package/packageNoVerify is what verifying the signature costs per request, and
//                 packageNoVerify is the lease template to hold against the floor and the hand-built
//                 pattern, neither of which checks a signature
// Every request of every variant carries a genuine Stripe-Signature for its bytes (same headers
// everywhere; only the package variant checks it).
// The others are bench/workflows/*.json; a variant is one entry in VARIANTS. Two traffic shapes:
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
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

import { startStack, stripeSignature, WEBHOOK_WORKFLOW_ID } from '../scripts/harness/index.mjs';

const require = createRequire(import.meta.url);
const { formatInterval, machine, median, medianInterval, saveResults } = require('./support.js');

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const REPO_DIR = path.resolve(BENCH_DIR, '..');

// ---------------------------------------------------------------------------------------------
// Options

function parseArgs(argv) {
	const options = { env: [] };
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
		let [name, value] = arg.slice(2).split(/=(.*)/s, 2);
		if (name === 'profile' || name === 'help') {
			options[name] = true;
			continue;
		}
		if (value === undefined) {
			value = argv[++i];
			if (value === undefined) throw new Error(`--${name} needs a value`);
		}
		if (name === 'env') options.env.push(value);
		else options[name] = value;
	}
	return options;
}

const args = parseArgs(process.argv.slice(2));
if (args.help) {
	process.stdout.write(
		'node bench/webhook-level.mjs [--rounds 6] [--requests 120] [--concurrency 1,16] [--shapes distinct,repeated]\n' +
			'                             [--variants floor,floorNoOp,bare,handBuilt,packageSimple,package,packageNoVerify] [--warmup 60] [--env NAME=VALUE] [--profile]\n',
	);
	process.exit(0);
}
const ALL_SHAPES = ['distinct', 'repeated'];
const list = (value) => String(value).split(',').map((s) => s.trim()).filter(Boolean);
const positiveInt = (name, value) => {
	const n = Number(value);
	if (!Number.isInteger(n) || n < 1 || n > 100_000) throw new Error(`--${name} must be an integer from 1 to 100000, not ${value}`);
	return n;
};
const config = {
	rounds: positiveInt('rounds', args.rounds ?? 6),
	requests: positiveInt('requests', args.requests ?? 120),
	concurrency: list(args.concurrency ?? '1,16').map((c) => positiveInt('concurrency', c)),
	shapes: list(args.shapes ?? ALL_SHAPES.join(',')),
	variants: list(args.variants ?? 'floor,floorNoOp,bare,handBuilt,packageSimple,package,packageNoVerify'),
	warmup: Number(args.warmup ?? 60),
	profile: Boolean(args.profile),
	env: Object.fromEntries(
		args.env.map((pair) => {
			const at = pair.indexOf('=');
			if (at < 1) throw new Error(`--env wants NAME=VALUE, not ${pair}`);
			return [pair.slice(0, at), pair.slice(at + 1)];
		}),
	),
};
for (const shape of config.shapes) if (!ALL_SHAPES.includes(shape)) throw new Error(`unknown shape ${shape} (${ALL_SHAPES.join(', ')})`);
if (config.concurrency.some((c) => c > 256)) throw new Error('--concurrency: at most 256');

// ---------------------------------------------------------------------------------------------
// Variants: which workflow, what its answer and its business row look like.

const TEMPLATE_FILE = 'workflows/idempotent-webhook.json';
const NO_VERIFY_TABLE = 'processed_events_nover';

/**
 * The template without its Verify Webhook Signature node and the node its `invalid` output feeds:
 * Webhook → Idempotency Reserve, as the template was before verification. Own id, webhook path and
 * key table, everything else as in the file, so package ÷ this is the cost of verification alone.
 */
function templateWithoutVerification() {
	const template = JSON.parse(readFileSync(path.join(REPO_DIR, TEMPLATE_FILE), 'utf8'));
	const verify = template.nodes.find((node) => node.type === 'n8n-nodes-idempotency.verifyWebhookSignature');
	if (!verify) throw new Error(`${TEMPLATE_FILE} has no Verify Webhook Signature node`);
	const [validTargets, invalidTargets = []] = template.connections[verify.name].main;
	const dropped = new Set([verify.name, ...invalidTargets.map((c) => c.node)]);
	const nodes = template.nodes.filter((node) => !dropped.has(node.name)).map((node) => structuredClone(node));
	for (const node of nodes) {
		if (node.type === 'n8n-nodes-base.webhook') {
			node.parameters.path = 'idempotent-webhook-noverify';
			node.webhookId = randomUUID();
		}
		if (node.type.startsWith('n8n-nodes-idempotency.')) node.parameters.table = NO_VERIFY_TABLE;
	}
	const connections = Object.fromEntries(Object.entries(structuredClone(template.connections)).filter(([from]) => !dropped.has(from)));
	for (const byType of Object.values(connections)) {
		byType.main = byType.main.map((targets) => targets.flatMap((c) => (c.node === verify.name ? validTargets : [c])));
	}
	return { ...template, id: 'IdemWebhookNoVer1', name: `${template.name} (no signature check)`, nodes, connections };
}
const generatedDir = mkdtempSync(path.join(os.tmpdir(), 'bench-webhook-level-'));
process.on('exit', () => rmSync(generatedDir, { recursive: true, force: true }));
const NO_VERIFY_FILE = path.join(generatedDir, 'template-without-verification.json');
writeFileSync(NO_VERIFY_FILE, JSON.stringify(templateWithoutVerification(), null, 2));

// One entry per variant: adding a variant is adding an entry (and its workflow file).
//   file        the workflow; `template: true` marks the webhook template startStack publishes itself
//               (WEBHOOK_WORKFLOW_ID), every other file is an extra workflow with its own id and path
//   tag         in every event id of the variant, so no two variants share an event or a key
//   dedupe      deduplicating: one business row per distinct event, duplicates answered "duplicate"
//   inFlight409 lease mode: a repeat that arrives while its original still runs is answered 409 with
//               Retry-After (checked, then resent after the load like a sender would; see record())
//   keyTable    its key table, whose rows are counted after the run
//   businessKey the event_key of its business row (undefined: no business step)
const VARIANTS = {
	floor: { file: 'bench/workflows/floor.json', tag: 'flr', dedupe: false, businessKey: (id) => `floor:${id}` },
	floorNoOp: { file: 'bench/workflows/floor-plus-noop.json', tag: 'nop', dedupe: false, businessKey: (id) => `noop:${id}` },
	bare: { file: 'bench/workflows/bare.json', tag: 'bar', dedupe: false, businessKey: undefined },
	handBuilt: { file: 'bench/workflows/hand-built.json', tag: 'hnd', dedupe: true, keyTable: 'processed_events_hand', businessKey: (id) => `evt:${id}` },
	packageSimple: { file: 'bench/workflows/package-simple.json', tag: 'pks', dedupe: true, keyTable: 'processed_events_simple', businessKey: (id) => `evt:${id}` },
	package: { file: TEMPLATE_FILE, template: true, tag: 'pkg', dedupe: true, inFlight409: true, keyTable: 'processed_events', businessKey: (id) => `evt:${id}` },
	packageNoVerify: { file: NO_VERIFY_FILE, tag: 'pnv', dedupe: true, inFlight409: true, keyTable: NO_VERIFY_TABLE, businessKey: (id) => `evt:${id}` },
};
for (const variant of Object.values(VARIANTS)) {
	if (variant.template) {
		variant.workflowId = WEBHOOK_WORKFLOW_ID;
		continue;
	}
	const json = JSON.parse(readFileSync(path.resolve(REPO_DIR, variant.file), 'utf8'));
	variant.workflowId = json.id;
	variant.webhookPath = json.nodes.find((node) => node.type === 'n8n-nodes-base.webhook').parameters.path;
}

const ALL_VARIANTS = Object.keys(VARIANTS);
for (const variant of config.variants) if (!ALL_VARIANTS.includes(variant)) throw new Error(`unknown variant ${variant} (${ALL_VARIANTS.join(', ')})`);

const HAND_TABLE_SQL = `CREATE TABLE IF NOT EXISTS processed_events_hand (
  key text PRIMARY KEY,
  first_seen timestamptz NOT NULL DEFAULT now()
)`;

// ---------------------------------------------------------------------------------------------
// Traffic

const runTag = Date.now().toString(36);

/** A Stripe-like event of ~0.8 KB, the same for every variant except its id. */
function eventBody(id, seq) {
	return Buffer.from(
		JSON.stringify({
			id,
			object: 'event',
			api_version: '2024-06-20',
			created: 1_700_000_000 + seq,
			type: 'invoice.paid',
			livemode: false,
			pending_webhooks: 1,
			request: { id: null, idempotency_key: null },
			data: {
				object: {
					id: `in_${String(seq).padStart(8, '0')}`,
					object: 'invoice',
					amount_due: 4200,
					amount_paid: 4200,
					currency: 'eur',
					customer: 'cus_BenchCustomer0001',
					customer_email: 'bench@example.com',
					status: 'paid',
					billing_reason: 'subscription_cycle',
					lines: {
						object: 'list',
						data: [{ id: 'il_0001', amount: 4200, description: '1 × Plan (at €42.00 / month)', quantity: 1 }],
					},
					metadata: { order: `ord_${seq}`, source: 'n8n-nodes-idempotency webhook-level bench' },
				},
			},
		}),
	);
}

/**
 * The ids of one load. distinct: n new ids. repeated: blocks of up to 32 new ids followed by the
 * same 32 again (each id twice, half the requests duplicates; at concurrency 16 the second copy
 * mostly arrives after the first one finished, like a provider's retry, sometimes alongside it).
 */
function loadIds(prefix, shape, n) {
	if (shape === 'distinct') return Array.from({ length: n }, (_, i) => `${prefix}.${String(i).padStart(5, '0')}`);
	const ids = [];
	let next = 0;
	while (ids.length < n) {
		const m = Math.min(32, Math.floor((n - ids.length) / 2));
		if (m === 0) {
			ids.push(`${prefix}.${String(next++).padStart(5, '0')}`);
			continue;
		}
		const block = Array.from({ length: m }, () => `${prefix}.${String(next++).padStart(5, '0')}`);
		ids.push(...block, ...block);
	}
	return ids;
}

function post(url, bytes, agent, timeoutMs = 60_000) {
	return new Promise((resolve) => {
		const started = performance.now();
		const request = http.request(
			url,
			{
				method: 'POST',
				agent,
				// Signed as Stripe signs (the stack's secret), at send time, for every variant alike.
				headers: { 'content-type': 'application/json', 'content-length': bytes.length, 'stripe-signature': stripeSignature(bytes) },
				timeout: timeoutMs,
			},
			(response) => {
				const chunks = [];
				response.on('data', (chunk) => chunks.push(chunk));
				response.on('end', () =>
					resolve({
						status: response.statusCode,
						text: Buffer.concat(chunks).toString('utf8'),
						retryAfter: response.headers['retry-after'],
						ms: performance.now() - started,
					}),
				);
				response.on('error', (error) => resolve({ status: 0, text: String(error.message), ms: performance.now() - started }));
			},
		);
		request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
		request.on('error', (error) => resolve({ status: 0, text: String(error.message), ms: performance.now() - started }));
		request.end(bytes);
	});
}

/** Closed loop: `concurrency` senders, each sending the next request as soon as its last one was answered. */
async function runLoad(url, ids, concurrency, seqBase) {
	const bodies = ids.map((id, i) => eventBody(id, seqBase + i));
	const answers = new Array(ids.length);
	const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
	let next = 0;
	const startedMono = process.hrtime.bigint();
	const started = performance.now();
	await Promise.all(
		Array.from({ length: Math.min(concurrency, ids.length) }, async () => {
			for (;;) {
				const i = next++;
				if (i >= ids.length) return;
				answers[i] = await post(url, bodies[i], agent);
			}
		}),
	);
	const wallMs = performance.now() - started;
	const endedMono = process.hrtime.bigint();
	agent.destroy();
	return { answers, wallMs, window: [Number(startedMono / 1000n), Number(endedMono / 1000n)] };
}

function percentile(values, p) {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

// ---------------------------------------------------------------------------------------------
// Bookkeeping for the checks: every answer, every business row, every execution.

const ledger = {
	/** variant → Map(businessKey → number of requests that carried it) */
	sent: Object.fromEntries(ALL_VARIANTS.map((v) => [v, new Map()])),
	/** variant → Map(businessKey → number of "processed" answers) */
	processed: Object.fromEntries(ALL_VARIANTS.map((v) => [v, new Map()])),
	/** variant → requests sent (every one must become one successful execution) */
	requests: Object.fromEntries(ALL_VARIANTS.map((v) => [v, 0])),
	/** variant → 409 in-flight answers (checked), each resent after its load like a sender's retry */
	inFlight: Object.fromEntries(ALL_VARIANTS.map((v) => [v, 0])),
	/** the ids answered 409 in the load that runs now: resent once the load is over (resendInFlight) */
	resend: [],
	failures: [],
};

function fail(message) {
	if (ledger.failures.length < 200) ledger.failures.push(message);
	else if (ledger.failures.length === 200) ledger.failures.push('… (more failures left out)');
}

/** Checks one answer against what the variant must say, and records it. */
function record(variantName, id, answer) {
	const variant = VARIANTS[variantName];
	ledger.requests[variantName] += 1;
	const key = variant.businessKey?.(id) ?? `bare:${id}`;
	ledger.sent[variantName].set(key, (ledger.sent[variantName].get(key) ?? 0) + 1);
	if (answer.status === 409 && variant.inFlight409) {
		recordInFlight(variantName, id, key, answer);
		return;
	}
	if (answer.status !== 200) {
		fail(`${variantName} ${id}: HTTP ${answer.status} ${answer.text.slice(0, 200)}`);
		return;
	}
	let json;
	try {
		json = JSON.parse(answer.text);
	} catch {
		fail(`${variantName} ${id}: 200 without a JSON body (${JSON.stringify(answer.text.slice(0, 100))}): no Respond node ran?`);
		return;
	}
	if (variantName === 'bare') {
		if (json.status !== 'ok' || json.id !== id) fail(`bare ${id}: answered ${answer.text.slice(0, 200)}`);
		return;
	}
	if (json.key !== key || !['processed', 'duplicate'].includes(json.status) || (!variant.dedupe && json.status !== 'processed')) {
		fail(`${variantName} ${id}: answered ${answer.text.slice(0, 200)}, expected key ${key}`);
		return;
	}
	if (json.status === 'processed') ledger.processed[variantName].set(key, (ledger.processed[variantName].get(key) ?? 0) + 1);
}

/**
 * Lease mode: a repeat that arrives while its original still runs is answered 409 with Retry-After
 * (the template's "In Flight?" branch). That is the right answer, not a failure: the original may
 * still fail, and a sender retries a 409 (Stripe, Shopify, Slack, Standard Webhooks retry any
 * non-2xx). It counts only when it is exactly that answer (409, status in_progress, this event's key,
 * a Retry-After header of at least 1 s that matches the body). The id is then resent once the load is
 * over and n8n is idle (resendInFlight), as the sender's retry, outside the measured window: the retry
 * must be answered 200 "duplicate" (the original completed), so a lost or doubled business row, a
 * 5xx or a wrong branch still fails the run. Any other 409, and any 409 from a variant without
 * inFlight409, is a failure.
 */
function recordInFlight(variantName, id, key, answer) {
	let json;
	try {
		json = JSON.parse(answer.text);
	} catch {
		json = {};
	}
	const seconds = Number(answer.retryAfter);
	if (json.status !== 'in_progress' || json.key !== key || !Number.isInteger(seconds) || seconds < 1 || json.retryAfterSeconds !== seconds) {
		fail(`${variantName} ${id}: 409 ${answer.text.slice(0, 200)} (Retry-After ${answer.retryAfter}), expected in_progress for ${key} with a matching Retry-After`);
		return;
	}
	ledger.inFlight[variantName] += 1;
	ledger.resend.push({ variantName, id });
}

/**
 * Resends the ids answered 409 in the last load, one after another, as a sender's retry (without
 * waiting the Retry-After: n8n is idle, every original has finished). Each must now be answered
 * 200 "duplicate"; the answers go through record() like any other (a second 409 is resent again,
 * at most 3 times). Runs after the load's CPU was read: not part of any measurement.
 */
async function resendInFlight(stack, urls) {
	for (let attempt = 1; ledger.resend.length && attempt <= 3; attempt++) {
		const batch = ledger.resend.splice(0);
		const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
		for (const { variantName, id } of batch) {
			const answer = await post(urls[variantName], eventBody(id, 0), agent);
			record(variantName, id, answer);
			let json = {};
			try {
				json = JSON.parse(answer.text);
			} catch {
				// record() reported it
			}
			if (answer.status === 200 && json.status !== 'duplicate') fail(`${variantName} ${id}: the retry of a 409 was answered ${answer.text.slice(0, 200)}, expected duplicate`);
		}
		agent.destroy();
		await waitForIdle(stack);
	}
	for (const { variantName, id } of ledger.resend.splice(0)) fail(`${variantName} ${id}: still 409 after 3 retries on an idle n8n`);
}

// ---------------------------------------------------------------------------------------------
// CPU of n8n's main process, its task runner and PostgreSQL, from /proc (Linux; zero elsewhere).

const CLOCK_TICKS = 100; // USER_HZ on Linux

function processTable() {
	const table = [];
	let entries = [];
	try {
		entries = readdirSync('/proc');
	} catch {
		return table;
	}
	for (const entry of entries) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
			const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
			// fields[0] is field 3 (state): ppid is field 4, pgrp 5, utime 14, stime 15
			table.push({
				pid: Number(entry),
				ppid: Number(fields[1]),
				pgrp: Number(fields[2]),
				cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS,
				// cutime + cstime: children that exited and were waited for (PostgreSQL backends that ended)
				reapedChildrenCpuMs: ((Number(fields[13]) + Number(fields[14])) * 1000) / CLOCK_TICKS,
			});
		} catch {
			// gone meanwhile
		}
	}
	return table;
}

function cpuSnapshot(stack, postmasterPid) {
	const table = processTable();
	const n8nPid = stack.n8n.pid;
	let main = 0;
	let runner = 0;
	let postgres = 0;
	for (const p of table) {
		if (p.pid === n8nPid) main += p.cpuMs;
		else if (p.pgrp === n8nPid) runner += p.cpuMs;
		// PostgreSQL's backends make themselves group leaders: they are found as the postmaster's children.
		else if (postmasterPid && p.pid === postmasterPid) postgres += p.cpuMs + p.reapedChildrenCpuMs;
		else if (postmasterPid && p.ppid === postmasterPid) postgres += p.cpuMs;
	}
	return { main, runner, postgres, machine: machineBusyMs(), client: clientCpuMs(), at: performance.now() };
}

/** Busy CPU of the whole machine (all cores), ms, from /proc/stat. */
function machineBusyMs() {
	try {
		const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
		// user nice system idle iowait irq softirq steal …: busy = all but idle and iowait
		const busy = fields.slice(0, 8).reduce((sum, v) => sum + v, 0) - fields[3] - fields[4];
		return (busy * 1000) / CLOCK_TICKS;
	} catch {
		return 0;
	}
}

function clientCpuMs() {
	const { user, system } = process.cpuUsage();
	return (user + system) / 1000;
}

function postmasterPidOf(stack) {
	const file = path.join(stack.workDir, 'postgres', 'data', 'postmaster.pid');
	if (stack.server.kind !== 'embedded' || !existsSync(file)) return undefined;
	return Number(readFileSync(file, 'utf8').split('\n')[0]);
}

// ---------------------------------------------------------------------------------------------
// n8n's own records

const FINISHED = ['success', 'error', 'crashed', 'canceled'];
const savesSuccess = () => (config.env.EXECUTIONS_DATA_SAVE_ON_SUCCESS ?? 'all') !== 'none';

async function executionCounts(stack) {
	const { rows } = await stack.n8nDb.query(
		`SELECT "workflowId" AS workflow, status, count(*)::int AS n FROM execution_entity GROUP BY 1, 2`,
	);
	return rows;
}

/** Waits (bounded) until n8n finished and saved every execution sent so far: each load starts on an idle n8n. */
async function waitForIdle(stack, { timeoutMs = 180_000 } = {}) {
	const deadline = Date.now() + timeoutMs;
	let state = '';
	while (Date.now() < deadline) {
		const rows = await executionCounts(stack);
		const open = rows.filter((r) => !FINISHED.includes(r.status)).reduce((sum, r) => sum + r.n, 0);
		const lagging = savesSuccess()
			? config.variants.filter((v) => {
					const done = rows.filter((r) => r.workflow === VARIANTS[v].workflowId && FINISHED.includes(r.status)).reduce((s, r) => s + r.n, 0);
					return done < ledger.requests[v];
				})
			: [];
		if (open === 0 && lagging.length === 0) return;
		state = `${open} executions open, waiting for ${lagging.join(', ') || 'nothing'}`;
		await new Promise((resolve) => setTimeout(resolve, 200));
	}
	fail(`n8n did not finish the executions sent so far within ${timeoutMs} ms (${state})`);
}

// ---------------------------------------------------------------------------------------------
// CPU profile (--profile)

// The installed package (…/.n8n/nodes/node_modules/n8n-nodes-idempotency/dist/…). Not just
// "/n8n-nodes-idempotency/": n8n itself is cached under ~/.cache/n8n-nodes-idempotency/.
const PACKAGE_URL = /\/node_modules\/n8n-nodes-idempotency\//;

function moduleOf(url, functionName) {
	if (!url) return functionName.startsWith('(') ? functionName : '(native / builtin)';
	if (PACKAGE_URL.test(url)) return 'n8n-nodes-idempotency (this package)';
	if (url.startsWith('node:')) return 'node (internals)';
	const at = url.lastIndexOf('/node_modules/');
	if (at === -1) return 'other';
	const rest = url.slice(at + '/node_modules/'.length).split('/');
	return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
}

function analyseProfile(file, windows) {
	const profile = JSON.parse(readFileSync(file, 'utf8'));
	const byId = new Map(profile.nodes.map((node) => [node.id, node]));
	const parent = new Map();
	for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
	const insidePackage = new Map();
	const isPackage = (id) => {
		if (insidePackage.has(id)) return insidePackage.get(id);
		const node = byId.get(id);
		const own = PACKAGE_URL.test(node.callFrame.url);
		const result = own || (parent.has(id) ? isPackage(parent.get(id)) : false);
		insidePackage.set(id, result);
		return result;
	};
	const keyOf = (node) => {
		const { functionName, url, lineNumber } = node.callFrame;
		return `${functionName || '(anonymous)'} ${url ? `${url.replace(/^.*\/node_modules\//, '')}:${lineNumber + 1}` : ''}`.trim();
	};
	// Every distinct function on a node's stack (itself and its callers), for inclusive time.
	const stackKeys = new Map();
	const keysOnStack = (id) => {
		let keys = stackKeys.get(id);
		if (keys) return keys;
		const own = keyOf(byId.get(id));
		const above = parent.has(id) ? keysOnStack(parent.get(id)) : [];
		keys = above.includes(own) ? above : [...above, own];
		stackKeys.set(id, keys);
		return keys;
	};
	const stats = windows.map(() => ({ activeMs: 0, packageMs: 0, gcMs: 0, modules: new Map(), functions: new Map(), inclusive: new Map() }));
	let t = profile.startTime;
	for (let i = 0; i < profile.samples.length; i++) {
		t += profile.timeDeltas[i];
		// A sample's time is the gap to the next sample.
		const dt = (profile.timeDeltas[i + 1] ?? 0) / 1000;
		const w = windows.findIndex((win) => t >= win.window[0] && t < win.window[1]);
		if (w === -1) continue;
		const node = byId.get(profile.samples[i]);
		const { functionName, url } = node.callFrame;
		if (functionName === '(idle)') continue;
		const s = stats[w];
		s.activeMs += dt;
		if (functionName === '(garbage collector)') s.gcMs += dt;
		if (isPackage(node.id)) s.packageMs += dt;
		const module = moduleOf(url, functionName);
		s.modules.set(module, (s.modules.get(module) ?? 0) + dt);
		const fn = keyOf(node);
		s.functions.set(fn, (s.functions.get(fn) ?? 0) + dt);
		for (const key of keysOnStack(node.id)) s.inclusive.set(key, (s.inclusive.get(key) ?? 0) + dt);
	}
	return { startTime: profile.startTime, endTime: profile.endTime, stats };
}

function mergeProfileStats(entries) {
	const merged = { requests: 0, activeMs: 0, packageMs: 0, gcMs: 0, modules: new Map(), functions: new Map(), inclusive: new Map() };
	for (const { stats, requests } of entries) {
		merged.requests += requests;
		merged.activeMs += stats.activeMs;
		merged.packageMs += stats.packageMs;
		merged.gcMs += stats.gcMs;
		for (const [k, v] of stats.modules) merged.modules.set(k, (merged.modules.get(k) ?? 0) + v);
		for (const [k, v] of stats.functions) merged.functions.set(k, (merged.functions.get(k) ?? 0) + v);
		for (const [k, v] of stats.inclusive) merged.inclusive.set(k, (merged.inclusive.get(k) ?? 0) + v);
	}
	return merged;
}

// ---------------------------------------------------------------------------------------------
// Main

const fmt = (n, digits = 1) => (n === undefined || Number.isNaN(n) ? '–' : n.toFixed(digits));

async function main() {
	const started = Date.now();
	const profileDir = config.profile
		? path.join(REPO_DIR, 'bench-results', `webhook-level-profile-${new Date().toISOString().replace(/[:.]/g, '-')}`)
		: undefined;
	if (profileDir) mkdirSync(profileDir, { recursive: true });
	const env = {
		NODE_FUNCTION_ALLOW_BUILTIN: 'crypto',
		// n8n prunes beyond 10,000 executions by default; the checks count every execution.
		EXECUTIONS_DATA_PRUNE: 'false',
		...config.env,
		...(profileDir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` } : {}),
	};
	const extraWorkflows = config.variants.filter((v) => !VARIANTS[v].template).map((v) => VARIANTS[v].file);
	const beforeStack = Number(process.hrtime.bigint() / 1000n);
	const stack = await startStack({ label: 'bench', extraWorkflows, env });
	const urls = {};
	const samples = [];
	const windows = [];
	let serverPid;
	let failed = false;
	try {
		for (const v of config.variants) {
			urls[v] = VARIANTS[v].template ? stack.webhookUrl : stack.extraWorkflows.find((w) => w.id === VARIANTS[v].workflowId)?.webhookUrl;
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
		for (const v of config.variants.filter((name) => VARIANTS[name].dedupe)) {
			const bytes = Buffer.from(JSON.stringify({ type: 'no.id', note: `${runTag} ${v}` }));
			const key = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
			const agent = new http.Agent({ keepAlive: false });
			const statuses = [];
			for (let i = 0; i < 2; i++) {
				const answer = await post(urls[v], bytes, agent);
				ledger.requests[v] += 1;
				ledger.sent[v].set(key, (ledger.sent[v].get(key) ?? 0) + 1);
				let json;
				try {
					json = JSON.parse(answer.text);
				} catch {
					json = {};
				}
				statuses.push(`${answer.status} ${json.status}`);
				if (answer.status !== 200 || json.key !== key) fail(`${v} body without id: answered ${answer.status} ${answer.text.slice(0, 200)}, expected key ${key}`);
				if (json.status === 'processed') ledger.processed[v].set(key, (ledger.processed[v].get(key) ?? 0) + 1);
			}
			if (statuses.join(',') !== '200 processed,200 duplicate') fail(`${v} body without id, sent twice: ${statuses.join(', ')}`);
			agent.destroy();
		}

		// Warm-up (not measured): JIT, pools, the task runner.
		let seq = 0;
		for (const v of config.variants) {
			for (const c of config.concurrency) {
				const ids = loadIds(`${runTag}.${VARIANTS[v].tag}.warm.c${c}`, 'distinct', Math.ceil(config.warmup / config.concurrency.length));
				const { answers } = await runLoad(urls[v], ids, c, seq);
				seq += ids.length;
				ids.forEach((id, i) => record(v, id, answers[i]));
			}
		}
		await waitForIdle(stack);
		await resendInFlight(stack, urls);
		if (ledger.failures.length) throw new Error(`the warm-up failed:\n${ledger.failures.slice(0, 20).join('\n')}`);

		for (let round = 1; round <= config.rounds; round++) {
			for (const shape of config.shapes) {
				for (const c of config.concurrency) {
					// A B C D, then D C B A: a drift of the machine's speed within a round favours no variant.
					const order = round % 2 === 1 ? config.variants : [...config.variants].reverse();
					for (const v of order) {
						const ids = loadIds(`${runTag}.${VARIANTS[v].tag}.r${round}.${shape}.c${c}`, shape, config.requests);
						const cpuBefore = cpuSnapshot(stack, postmasterPid);
						const { answers, wallMs, window } = await runLoad(urls[v], ids, c, seq);
						seq += ids.length;
						const inFlightBefore = ledger.inFlight[v];
						ids.forEach((id, i) => record(v, id, answers[i]));
						await waitForIdle(stack);
						const cpuAfter = cpuSnapshot(stack, postmasterPid);
						const inFlight = ledger.inFlight[v] - inFlightBefore;
						await resendInFlight(stack, urls);
						const latencies = answers.map((a) => a.ms);
						const sample = {
							round,
							shape,
							concurrency: c,
							variant: v,
							requests: ids.length,
							/** answered 409 in flight (lease mode; resent after the measurement) */
							inFlight,
							rps: ids.length / (wallMs / 1000),
							p50: percentile(latencies, 50),
							p99: percentile(latencies, 99),
							cpuMsPerRequest: {
								main: (cpuAfter.main - cpuBefore.main) / ids.length,
								runner: (cpuAfter.runner - cpuBefore.runner) / ids.length,
								postgres: (cpuAfter.postgres - cpuBefore.postgres) / ids.length,
								client: (cpuAfter.client - cpuBefore.client) / ids.length,
							},
							// CPU used on this machine by anything but this stack and this process, as a share of
							// all cores over the load: other sessions' work, which slows the load down.
							otherCpuShare:
								(cpuAfter.machine -
									cpuBefore.machine -
									['main', 'runner', 'postgres', 'client'].reduce((sum, k) => sum + (cpuAfter[k] - cpuBefore[k]), 0)) /
								((cpuAfter.at - cpuBefore.at) * os.cpus().length),
						};
						samples.push(sample);
						windows.push({ variant: v, shape, concurrency: c, round, requests: ids.length, window });
						process.stderr.write(
							`round ${round} ${shape.padEnd(8)} c=${String(c).padEnd(3)} ${v.padEnd(15)} ${fmt(sample.rps).padStart(6)} req/s  ` +
								`p50 ${fmt(sample.p50).padStart(6)} ms  p99 ${fmt(sample.p99).padStart(7)} ms  ` +
								`CPU/req main ${fmt(sample.cpuMsPerRequest.main)} runner ${fmt(sample.cpuMsPerRequest.runner)} pg ${fmt(sample.cpuMsPerRequest.postgres)} ms, ` +
								`others' CPU ${fmt(sample.otherCpuShare * 100, 0)}%${inFlight ? `, ${inFlight} × 409 in flight (resent)` : ''}\n`,
						);
					}
				}
			}
		}

		await checkRecords(stack);
	} catch (error) {
		failed = true;
		fail(`benchmark aborted: ${error.stack ?? error}`);
		process.stderr.write(`\n--- last lines of n8n's log ---\n${stack.n8n.logTail(30)}\n---\n`);
	} finally {
		await stack.stop();
	}

	// -------------------------------------------------------------------------------------------
	// Summary
	const { table, ratios, out } = summarise(samples, stack.server.kind);

	if (Object.keys(executionDataBytes).length) {
		out.push(
			`\nexecution data n8n saved per execution (average bytes): ${Object.entries(executionDataBytes)
				.map(([v, bytes]) => `${v} ${bytes}`)
				.join(', ')}`,
		);
	}

	let profileSummary;
	if (profileDir && serverPid) {
		profileSummary = summariseProfile(profileDir, serverPid, windows, beforeStack, out);
	}

	const runSeconds = (Date.now() - started) / 1000;
	out.push(`\nchecks: ${ledger.failures.length ? `FAILED (${ledger.failures.length})` : 'passed'}; run time ${fmt(runSeconds / 60)} min`);
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
		checks: { passed: ledger.failures.length === 0, failures: ledger.failures, requests: ledger.requests },
	});
	process.stdout.write(`results: ${file}\n`);
	if (ledger.failures.length || failed) {
		process.stderr.write(`\nFAILED:\n${ledger.failures.slice(0, 50).join('\n')}\n`);
		process.exitCode = 1;
	}
}

/** The tables: medians per variant, shape and concurrency, and the ratios. Also used by --summarise. */
function summarise(samples, serverKind, machineInfo = machine()) {
	const table = [];
	const ratios = [];
	for (const shape of config.shapes) {
		for (const c of config.concurrency) {
			for (const v of config.variants) {
				const runs = samples.filter((s) => s.shape === shape && s.concurrency === c && s.variant === v);
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
			for (const [of, against] of RATIO_PAIRS) {
				const ratio = ratioRow(samples, [shape], c, of, against);
				if (ratio) ratios.push(ratio);
			}
		}
	}
	// Both shapes together: twice the rounds behind each median.
	if (config.shapes.length > 1) {
		for (const c of config.concurrency) {
			for (const [of, against] of RATIO_PAIRS) {
				const ratio = ratioRow(samples, config.shapes, c, of, against);
				if (ratio) ratios.push(ratio);
			}
		}
	}

	const out = [];
	out.push(
		`\n## Webhook level: n8n 2.41.1, one server, ${config.rounds} interleaved rounds of ${config.requests} requests per variant, shape and concurrency\n`,
	);
	out.push(`machine: ${JSON.stringify(machineInfo)}, PostgreSQL: ${serverKind}${config.profile ? ', CPU PROFILER ON (throughput not comparable)' : ''}`);
	if (Object.keys(config.env).length) out.push(`extra n8n environment: ${JSON.stringify(config.env)}`);
	out.push('');
	out.push('| shape | conc. | variant | req/s | p50 ms | p99 ms | CPU ms/req n8n main | task runner | PostgreSQL | others\' CPU | 409 in flight |');
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
	const interval = (i) => formatInterval(i, 3);
	out.push('| shape | conc. | ratio | req/s ratio: median of rounds | interval of the median | per round | CPU-based: median | interval | n8n CPU/req ratio: median | interval | per round |');
	out.push('| --- | ---: | --- | ---: | --- | --- | ---: | --- | ---: | --- | --- |');
	for (const r of ratios) {
		out.push(
			`| ${r.shape} | ${r.concurrency} | ${r.ratio} | **${fmt(r.median, 3)}** | ${interval(r.interval)} | ${r.perRound.map((x) => fmt(x, 2)).join(', ')} | ` +
				`${fmt(r.cpuMedian, 3)} | ${interval(r.cpuInterval)} | **${fmt(r.n8nCpuMedian, 3)}** | ${interval(r.n8nCpuInterval)} | ${r.n8nCpuPerRound.map((x) => fmt(x, 2)).join(', ')} |`,
		);
	}
	out.push(
		'\nreq/s ratio: package req/s ÷ the other variant\'s, within each round (the two loads ran a minute or two apart), median over rounds. ' +
			"CPU-based: the other variant's CPU per request (n8n main + task runner + PostgreSQL) ÷ the package's: the throughput ratio " +
			'to expect when CPU is the bottleneck (n8n uses most of both cores here); it moves less than req/s with other load. ' +
			"n8n CPU/req ratio: the first variant's CPU per request of n8n (main process + task runner) ÷ the second's, within each round: " +
			'a cost (below 1: cheaper), what the lease targets are about.',
	);
	const target = ratios.filter((r) => r.ratio === 'package/floor' && r.shape === config.shapes.join('+'));
	if (target.length) {
		// Met only when the whole interval of the median is at or above 0.95: the spread is then smaller than the gap.
		const verdict = (r) => {
			const state = r.interval.low >= 0.95 ? 'met' : r.interval.high < 0.95 ? 'MISSED' : 'NOT PROVEN (the interval straddles 0.95)';
			return `c=${r.concurrency} ${state}: median ${fmt(r.median, 3)}, interval ${interval(r.interval)}; CPU-based ${fmt(r.cpuMedian, 3)}, ${interval(r.cpuInterval)}`;
		};
		out.push(`\ntarget package ≥ 0.95 × floor req/s, both shapes: ${target.map(verdict).join('; ')}`);
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
		const rows = ratios.filter((r) => r.ratio === `${leaseTemplate}/${against}` && r.shape === config.shapes.join('+'));
		if (!rows.length) continue;
		const verdict = (r) => {
			const { low, high } = r.n8nCpuInterval;
			const inside = strict ? high < limit : high <= limit;
			const outside = strict ? low >= limit : low > limit;
			const state = inside ? 'met' : outside ? 'MISSED' : `NOT PROVEN (the interval straddles ${limit})`;
			return `c=${r.concurrency} ${state}: median ${fmt(r.n8nCpuMedian, 3)}, interval ${interval(r.n8nCpuInterval)}`;
		};
		out.push(`target ${leaseTemplate} n8n CPU/req ${strict ? '<' : '≤'} ${limit} × ${against}, both shapes: ${rows.map(verdict).join('; ')}`);
	}

	return { table, ratios, out };
}

/** The throughput ratios reported: the package against each baseline, and one n8n node that does nothing against none. */
const RATIO_PAIRS = [
	['package', 'floor'],
	['package', 'handBuilt'],
	['package', 'packageSimple'],
	['packageSimple', 'floor'],
	['packageSimple', 'handBuilt'],
	['package', 'floorNoOp'],
	['package', 'packageNoVerify'],
	['packageNoVerify', 'floor'],
	['packageNoVerify', 'handBuilt'],
	['floorNoOp', 'floor'],
];

/** `of` against `against` in the given shapes at concurrency c: per-round ratios and their medians. */
function ratioRow(samples, shapes, c, of, against) {
	if (!config.variants.includes(of) || !config.variants.includes(against)) return undefined;
	const perRound = [];
	const cpuPerRound = [];
	const n8nCpuPerRound = [];
	for (const shape of shapes) {
		for (let round = 1; round <= config.rounds; round++) {
			const pick = (v) => samples.find((s) => s.shape === shape && s.concurrency === c && s.variant === v && s.round === round);
			const mine = pick(of);
			const other = pick(against);
			if (!mine || !other) continue;
			perRound.push(mine.rps / other.rps);
			const stackCpu = (sample) => sample.cpuMsPerRequest.main + sample.cpuMsPerRequest.runner + sample.cpuMsPerRequest.postgres;
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

/** variant → average size of the execution data n8n saved per execution (bytes) */
const executionDataBytes = {};

/** After all loads: business rows, key rows and executions against what was sent and answered. */
async function checkRecords(stack) {
	const { rows } = await stack.keysDb.query(`SELECT event_key, count(*)::int AS n FROM business_log GROUP BY event_key`);
	const business = new Map(rows.map((r) => [r.event_key, r.n]));
	const claimed = new Set();
	for (const v of config.variants) {
		const variant = VARIANTS[v];
		if (!variant.businessKey) continue;
		let problems = 0;
		for (const [key, sentCount] of ledger.sent[v]) {
			claimed.add(key);
			const expected = variant.dedupe ? 1 : sentCount;
			const got = business.get(key) ?? 0;
			if (got !== expected) {
				problems += 1;
				fail(`${v}: ${got} business rows for ${key}, expected ${expected} (${sentCount} requests)`);
			}
			if (variant.dedupe) {
				const processed = ledger.processed[v].get(key) ?? 0;
				if (processed !== 1) fail(`${v}: ${key} was answered "processed" ${processed} times, expected once`);
			}
		}
		const expectedRows = [...ledger.sent[v]].reduce((sum, [, n]) => sum + (variant.dedupe ? 1 : n), 0);
		process.stderr.write(`check ${v}: ${ledger.requests[v]} requests, ${ledger.sent[v].size} distinct events, ${expectedRows} business rows expected, ${problems} keys wrong\n`);
		if (variant.keyTable) {
			const { rows: keyRows } = await stack.keysDb.query(`SELECT count(*)::int AS n FROM ${variant.keyTable}`);
			if (keyRows[0].n !== ledger.sent[v].size) fail(`${v}: ${keyRows[0].n} rows in ${variant.keyTable}, expected ${ledger.sent[v].size}`);
		}
	}
	for (const [key, n] of business) if (!claimed.has(key)) fail(`business_log has ${n} rows for ${key}, which no request carried`);

	// What n8n saved per execution (execution_data.data, flatted JSON): each node's output is in it.
	const { rows: sizes } = await stack.n8nDb.query(
		`SELECT e."workflowId" AS workflow, avg(octet_length(d.data))::int AS bytes, count(*)::int AS n
		 FROM execution_entity e JOIN execution_data d ON d."executionId" = e.id GROUP BY 1`,
	);
	for (const v of config.variants) {
		const row = sizes.find((r) => r.workflow === VARIANTS[v].workflowId);
		if (row) executionDataBytes[v] = row.bytes;
	}

	const counts = await executionCounts(stack);
	for (const v of config.variants) {
		const mine = counts.filter((r) => r.workflow === VARIANTS[v].workflowId);
		const bad = mine.filter((r) => r.status !== 'success');
		for (const r of bad) fail(`${v}: ${r.n} executions with status ${r.status}`);
		const total = mine.reduce((sum, r) => sum + r.n, 0);
		if (savesSuccess() && total !== ledger.requests[v]) fail(`${v}: n8n recorded ${total} executions for ${ledger.requests[v]} requests`);
	}
}

function summariseProfile(profileDir, serverPid, windows, beforeStack, out) {
	const file = readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile') && name.split('.').includes(String(serverPid)));
	if (!file) {
		out.push(`\nprofile: no .cpuprofile of pid ${serverPid} in ${profileDir} (n8n did not exit cleanly?)`);
		return undefined;
	}
	const analysed = analyseProfile(path.join(profileDir, file), windows);
	// Both clocks are CLOCK_MONOTONIC: the profile must start after this process started the stack.
	const aligned = analysed.startTime >= beforeStack && analysed.startTime <= windows[0]?.window[0];
	out.push(`\n## CPU profile of n8n's main process (${path.relative(REPO_DIR, path.join(profileDir, file))})`);
	if (!aligned) out.push(`WARNING: the profile's clock does not line up with the load windows (start ${analysed.startTime} µs, stack started at ${beforeStack} µs)`);
	const perVariant = {};
	for (const v of config.variants) {
		const entries = windows.map((w, i) => ({ ...w, stats: analysed.stats[i] })).filter((w) => w.variant === v);
		perVariant[v] = mergeProfileStats(entries);
	}
	const modules = new Set();
	for (const v of config.variants) for (const [m] of perVariant[v].modules) modules.add(m);
	const perReq = (v, ms) => ms / perVariant[v].requests;
	// The differences shown: the package against the floor (its whole idempotency) and against the
	// simple-mode template (what lease mode adds: Complete Key, and the IF node for duplicates).
	const diffPairs = [
		['package', 'floor'],
		['package', 'packageSimple'],
	].filter(([a, b]) => config.variants.includes(a) && config.variants.includes(b));
	out.push('\nSampled CPU of n8n\'s main process per request, by module (self time), all load windows of each variant:\n');
	out.push(`| module | ${config.variants.join(' | ')} |${diffPairs.map(([a, b]) => ` ${a} − ${b} |`).join('')}`);
	out.push(`| --- |${config.variants.map(() => ' ---: |').join('')}${diffPairs.map(() => ' ---: |').join('')}`);
	const rowsOut = [...modules]
		.map((m) => ({ m, values: config.variants.map((v) => perReq(v, perVariant[v].modules.get(m) ?? 0)) }))
		.sort((a, b) => Math.max(...b.values) - Math.max(...a.values))
		.filter((r) => Math.max(...r.values) >= 0.05);
	const diff = (r) =>
		diffPairs.map(([a, b]) => ` ${fmt(r.values[config.variants.indexOf(a)] - r.values[config.variants.indexOf(b)], 2)} |`).join('');
	out.push(
		`| **total (non-idle)** | ${config.variants.map((v) => fmt(perReq(v, perVariant[v].activeMs), 2)).join(' | ')} |${diff({ values: config.variants.map((v) => perReq(v, perVariant[v].activeMs)) })}`,
	);
	out.push(
		`| of which inside this package's code (inclusive) | ${config.variants.map((v) => fmt(perReq(v, perVariant[v].packageMs), 2)).join(' | ')} |${diff({ values: config.variants.map((v) => perReq(v, perVariant[v].packageMs)) })}`,
	);
	for (const r of rowsOut) out.push(`| ${r.m} | ${r.values.map((x) => fmt(x, 2)).join(' | ')} |${diff(r)}`);
	const summary = { file: path.join(profileDir, file), aligned, variants: {} };
	for (const v of config.variants) {
		const top = [...perVariant[v].functions].sort((a, b) => b[1] - a[1]).slice(0, 15);
		summary.variants[v] = {
			requests: perVariant[v].requests,
			cpuMsPerRequest: perReq(v, perVariant[v].activeMs),
			packageMsPerRequest: perReq(v, perVariant[v].packageMs),
			gcMsPerRequest: perReq(v, perVariant[v].gcMs),
			modulesMsPerRequest: Object.fromEntries([...perVariant[v].modules].map(([m, ms]) => [m, perReq(v, ms)]).sort((a, b) => b[1] - a[1])),
			topFunctionsMsPerRequest: top.map(([fn, ms]) => [fn, perReq(v, ms)]),
		};
	}
	for (const v of config.variants.filter((name) => ['package', 'packageSimple', 'floor'].includes(name))) {
		out.push(`\nTop functions (self ms/request), ${v}:`);
		for (const [fn, ms] of summary.variants[v].topFunctionsMsPerRequest.slice(0, 12)) out.push(`  ${fmt(ms, 2).padStart(6)}  ${fn}`);
	}
	for (const [a, b] of diffPairs) {
		// Where the two differ: functions by inclusive time (itself and what it calls, on the
		// synchronous stack), largest difference first.
		const keys = new Set([...perVariant[a].inclusive.keys(), ...perVariant[b].inclusive.keys()]);
		const rows = [...keys]
			.map((key) => {
				const mine = perReq(a, perVariant[a].inclusive.get(key) ?? 0);
				const other = perReq(b, perVariant[b].inclusive.get(key) ?? 0);
				return { key, [a]: mine, [b]: other, diff: mine - other };
			})
			.filter((r) => !/^\((root|program|garbage collector)\)/.test(r.key))
			.sort((x, y) => Math.abs(y.diff) - Math.abs(x.diff))
			.slice(0, 30);
		// The name the results files have used for package − floor.
		summary[b === 'floor' ? 'inclusiveDiffPackageMinusFloor' : `inclusiveDiff_${a}_minus_${b}`] = rows;
		out.push(`\nLargest differences ${a} − ${b}, inclusive ms/request (function with everything it calls synchronously):`);
		out.push(`| function | ${b} | ${a} | ${a} − ${b} |`);
		out.push('| --- | ---: | ---: | ---: |');
		for (const r of rows) out.push(`| ${r.key.replace(/\|/g, '\\|')} | ${fmt(r[b], 2)} | ${fmt(r[a], 2)} | ${fmt(r.diff, 2)} |`);
	}
	return summary;
}

if (args.summarise) {
	// Prints the tables of an earlier run again: node bench/webhook-level.mjs --summarise bench-results/webhook-level-….json
	// (--shapes distinct: only those loads; the profile is analysed again when its file is still there)
	const saved = JSON.parse(readFileSync(args.summarise, 'utf8'));
	Object.assign(config, saved.config);
	if (args.shapes) config.shapes = list(args.shapes);
	const inShapes = (entry) => config.shapes.includes(entry.shape);
	const { out } = summarise(saved.samples.filter(inShapes), saved.postgres, saved.machine);
	if (saved.profile?.file && existsSync(saved.profile.file) && saved.windows) {
		const pid = path.basename(saved.profile.file).split('.')[3];
		summariseProfile(path.dirname(saved.profile.file), Number(pid), saved.windows.filter(inShapes), 0, out);
	}
	out.push(`\nchecks: ${saved.checks.passed ? 'passed' : `FAILED (${saved.checks.failures.length})`}; run time ${fmt(saved.runSeconds / 60)} min`);
	process.stdout.write(`${out.join('\n')}\n`);
} else {
	main().catch((error) => {
		process.stderr.write(`${error.stack ?? error}\n`);
		process.exitCode = 1;
	});
}
