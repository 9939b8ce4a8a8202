// Where Reserve's time goes per delivery, on the webhook template's new-event path: one
// Stripe-signed new event per execution, as n8n's Webhook node hands it (json + raw-body binary),
// through the template's own Idempotency Reserve and Complete Key (their parameters read from
// workflows/idempotent-webhook.json), run by n8n-core's real WorkflowExecute (test/support/engine.js)
// against a real PostgreSQL. Run it with a CPU profile, then read the profile with --summarise:
//
//   DATABASE_URL=postgres://… node --cpu-prof --cpu-prof-dir=/tmp/prof --cpu-prof-interval 100 \
//       bench/reserve-delivery.js [--deliveries 3000] [--warmup 300]
//   node bench/reserve-delivery.js --summarise /tmp/prof/<file>.cpuprofile
//
// The summary attributes every sample whose stack holds a frame of this package (dist/) to the
// deepest such frame, so what a package function calls (crypto, JSON.parse, n8n-workflow) counts as
// that function's, and gives each function's share of the package's time: relative shares hold on a
// busy machine, absolute times do not. Node.js 24 (n8n 2.x's) is the one to run it with.
process.env.N8N_LOG_LEVEL ??= 'silent';
const { createHmac } = require('node:crypto');
const { mkdtempSync, readFileSync, writeFileSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
process.env.N8N_USER_FOLDER ??= mkdtempSync(path.join(os.tmpdir(), 'idem-bench-'));

const { option, stripeLikeEvent } = require('./support');

const SECRET = 'whsec_reserve_delivery_bench';
const TEMPLATE = path.join(__dirname, '..', 'workflows', 'idempotent-webhook.json');
const RESERVE = 'Idempotency Reserve';
const COMPLETE = 'Complete Key';

/** One delivery as n8n 2.41's Webhook node emits it with Raw Body on (the bench's ~0.8 KB event). */
function deliveryItem(id, seq) {
	const body = stripeLikeEvent(id, seq, 'reserve-delivery');
	const bytes = Buffer.from(JSON.stringify(body));
	const t = Math.floor(Date.now() / 1000);
	const v1 = createHmac('sha256', SECRET).update(`${t}.`).update(bytes).digest('hex');
	return {
		json: {
			headers: {
				host: '127.0.0.1:5678',
				'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
				'content-type': 'application/json; charset=utf-8',
				'content-length': String(bytes.length),
				'stripe-signature': `t=${t},v1=${v1}`,
				connection: 'keep-alive',
			},
			params: {},
			query: {},
			body: JSON.parse(bytes.toString('utf8')),
			webhookUrl: 'http://127.0.0.1:5678/webhook/idempotent-webhook',
			executionMode: 'production',
		},
		binary: {
			data: {
				data: bytes.toString('base64'),
				mimeType: 'application/json',
				fileSize: `${bytes.length} B`,
			},
		},
	};
}

/** Reserve → Complete Key of the template, on their own (the business step is n8n's, not the package's). */
function templateSlice(table) {
	const template = JSON.parse(readFileSync(TEMPLATE, 'utf8'));
	const nodes = template.nodes
		.filter((node) => node.name === RESERVE || node.name === COMPLETE)
		.map((node) => ({ ...node, parameters: { ...node.parameters, table } }));
	return {
		name: 'reserve-delivery bench',
		nodes,
		connections: { [RESERVE]: { main: [[{ node: COMPLETE, type: 'main', index: 0 }]] } },
		settings: { executionOrder: 'v1' },
	};
}

async function run() {
	const { runWorkflow } = require('../test/support/engine');
	const { credentialFromUrl } = require('../test/support/database');
	const url = process.env.DATABASE_URL;
	if (!url) throw new Error('DATABASE_URL=postgres://… is required');
	const deliveries = Number(option('deliveries', 3000));
	const warmup = Number(option('warmup', 300));
	const table = `bench_delivery_${Date.now().toString(36)}`;
	const workflow = templateSlice(table);
	const options = {
		credentials: credentialFromUrl(url),
		credentialsByType: { webhookSigningSecretApi: { secret: SECRET } },
	};
	const tag = `${Date.now().toString(36)}_${process.pid}`;
	let started = 0;
	let startedUs = 0;
	for (let i = 0; i < warmup + deliveries; i++) {
		if (i === warmup) {
			started = performance.now();
			startedUs = Number(process.hrtime.bigint() / 1000n);
		}
		const result = await runWorkflow(workflow, [deliveryItem(`evt_${tag}_${i}`, i)], options);
		const completed = result.ran(COMPLETE) ? result.output(COMPLETE) : [];
		if (result.status !== 'success' || completed.length !== 1)
			throw new Error(`delivery ${i}: ${result.status} ${result.error?.message ?? ''}`);
	}
	const ms = performance.now() - started;
	// The measured deliveries on the profile's clock (both CLOCK_MONOTONIC): start-up and warm-up left out.
	writeFileSync(
		windowFile(process.pid),
		JSON.stringify([startedUs, Number(process.hrtime.bigint() / 1000n)]),
	);
	const { Client } = require('pg');
	const client = new Client({ connectionString: url });
	await client.connect();
	await client.query(`DROP TABLE IF EXISTS ${table}`);
	await client.end();
	process.stdout.write(
		`${deliveries} deliveries in ${(ms / 1000).toFixed(1)} s: ${(ms / deliveries).toFixed(3)} ms each (wall, this machine's load included)\n`,
	);
	// The engine keeps the pool open: end the process so the profile is written.
	process.exit(0);
}

const windowFile = (pid) => path.join(os.tmpdir(), `reserve-delivery-window-${pid}.json`);

const PACKAGE_FRAME = /\/dist\/(nodes|credentials)\//;

/** Every sample with a package frame on its stack, attributed to the deepest such frame. */
function summarise(file) {
	const profile = JSON.parse(readFileSync(file, 'utf8'));
	// CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile
	const [from, to] = JSON.parse(
		readFileSync(windowFile(path.basename(file).split('.')[3]), 'utf8'),
	);
	const byId = new Map(profile.nodes.map((node) => [node.id, node]));
	const parent = new Map();
	for (const node of profile.nodes)
		for (const child of node.children ?? []) parent.set(child, node.id);
	const frameName = ({ callFrame: { functionName, url, lineNumber } }) =>
		`${functionName || '(anonymous)'} ${url.replace(/^.*\/dist\//, '')}:${lineNumber + 1}`;
	const deepest = new Map();
	const deepestPackageFrame = (id) => {
		if (deepest.has(id)) return deepest.get(id);
		const node = byId.get(id);
		const own = PACKAGE_FRAME.test(node.callFrame.url) ? frameName(node) : undefined;
		const result = own ?? (parent.has(id) ? deepestPackageFrame(parent.get(id)) : undefined);
		deepest.set(id, result);
		return result;
	};
	// Where below that frame the sample was: n8n's own code (getNodeParameter, getCredentials…), the
	// bundled driver, or the package function itself and the built-ins it calls (crypto, JSON).
	const below = new Map();
	const belowOf = (id) => {
		if (below.has(id)) return below.get(id);
		const { url } = byId.get(id).callFrame;
		let result;
		if (/\/node_modules\/n8n-(workflow|core)\//.test(url)) result = 'n8n';
		else if (/\/dist\/nodes\/shared\/transport\/pg\.js$/.test(url)) result = 'driver';
		else if (PACKAGE_FRAME.test(url)) result = 'own';
		else result = parent.has(id) ? belowOf(parent.get(id)) : 'own';
		if (result === 'own' && !PACKAGE_FRAME.test(url) && parent.has(id))
			result = belowOf(parent.get(id));
		below.set(id, result);
		return result;
	};
	const kinds = { n8n: 0, driver: 0, own: 0 };
	const totals = new Map();
	const inN8n = new Map();
	let packageUs = 0;
	let allUs = 0;
	let t = profile.startTime;
	for (let i = 0; i < profile.samples.length; i++) {
		t += profile.timeDeltas[i];
		const dt = profile.timeDeltas[i + 1] ?? 0;
		if (t < from || t >= to) continue;
		const node = byId.get(profile.samples[i]);
		if (node.callFrame.functionName === '(idle)') continue;
		allUs += dt;
		const frame = deepestPackageFrame(node.id);
		if (frame === undefined) continue;
		packageUs += dt;
		totals.set(frame, (totals.get(frame) ?? 0) + dt);
		const kind = belowOf(node.id);
		kinds[kind] += dt;
		if (kind === 'n8n') inN8n.set(frame, (inN8n.get(frame) ?? 0) + dt);
	}
	const rows = [...totals].sort((a, b) => b[1] - a[1]);
	const lines = [
		`profile ${path.basename(file)}: ${(allUs / 1000).toFixed(0)} ms sampled (not idle), ` +
			`${(packageUs / 1000).toFixed(0)} ms (${((100 * packageUs) / allUs).toFixed(1)} %) in this package's functions and what they call`,
		`of which in n8n's code they call (parameters, credentials, context) ${((100 * kinds.n8n) / packageUs).toFixed(1)} %, ` +
			`in the bundled pg driver ${((100 * kinds.driver) / packageUs).toFixed(1)} %, ` +
			`in the package's own code and the built-ins it calls ${((100 * kinds.own) / packageUs).toFixed(1)} %`,
		'',
		'| share of the package | ms | of which in n8n | function (dist/…) |',
		'| ---: | ---: | ---: | --- |',
		...rows
			.filter(([, us]) => us / packageUs >= 0.005)
			.map(
				([frame, us]) =>
					`| ${((100 * us) / packageUs).toFixed(1)} % | ${(us / 1000).toFixed(0)} | ${(100 * (inN8n.get(frame) ?? 0)) / us >= 0.5 ? `${((100 * (inN8n.get(frame) ?? 0)) / us).toFixed(0)} %` : ''} | ${frame} |`,
			),
	];
	process.stdout.write(`${lines.join('\n')}\n`);
}

const summariseFile = option('summarise', undefined);
if (summariseFile) summarise(summariseFile);
else
	run().catch((error) => {
		process.stderr.write(`${error.stack ?? error}\n`);
		process.exit(1);
	});
