// workflows/cloud/<provider>.json, the workflows n8n Cloud users import from a raw URL, are exactly
// what the planner's generator writes today (scripts/cloud-workflows.mjs): regenerated in memory,
// any difference fails, so they cannot drift. Run `npm run cloud-workflows` to refresh them. The same
// for workflows/cloud/answer-first/<provider>.json, whose every statement is also compared with the
// package's own SQL builders (dist/nodes/shared/store/sql), so the Cloud files and the package cannot
// drift apart even through the planner.
const { test, expect } = require('@jest/globals');
const { readdirSync, readFileSync } = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const root = path.join(__dirname, '..', '..');
const bundle = path.join(root, 'dist', 'planner', 'builtIn.cjs');
const cloudDir = path.join(root, 'workflows', 'cloud');
const answerFirstDir = path.join(cloudDir, 'answer-first');
const jsonFiles = (/** @type {string} */ dir) =>
	readdirSync(dir).filter((f) => f.endsWith('.json'));

async function generated() {
	const { cloudWorkflows } = await import(
		pathToFileURL(path.join(root, 'scripts', 'cloud-workflows.mjs')).href
	);
	return cloudWorkflows(bundle, require);
}

test('one file per provider the built-in path can express, and no other', async () => {
	const { BUILT_IN_SIGNATURES } = require(bundle);
	const expected = BUILT_IN_SIGNATURES.filter((s) => s.supported).map(
		(s) => `${s.signature.provider}.json`,
	);
	expect(expected).toContain('stripe.json');
	expect(jsonFiles(cloudDir).sort()).toEqual([...expected].sort());
	expect((await generated()).map((w) => w.file)).toEqual(expected);
});

test('each file is byte for byte what the generator writes (run npm run cloud-workflows if not)', async () => {
	for (const { file, json } of await generated())
		expect({ file, json: readFileSync(path.join(cloudDir, file), 'utf8') }).toEqual({ file, json });
});

test('each file on its own webhook path and webhookId, so any two can be published side by side', async () => {
	const files = [
		...jsonFiles(cloudDir).map((file) => path.join(cloudDir, file)),
		...jsonFiles(answerFirstDir).map((file) => path.join(answerFirstDir, file)),
	];
	const webhooks = files.map((file) => {
		const workflow = JSON.parse(readFileSync(file, 'utf8'));
		const nodes = workflow.nodes.filter((n) => n.type === 'n8n-nodes-base.webhook');
		expect({ file, webhooks: nodes.length }).toEqual({ file, webhooks: 1 });
		return { file, path: nodes[0].parameters.path, webhookId: nodes[0].webhookId };
	});
	expect(webhooks.length).toBeGreaterThan(1);
	for (const key of /** @type {const} */ (['path', 'webhookId'])) {
		const seen = new Map();
		for (const webhook of webhooks) {
			expect(typeof webhook[key]).toBe('string');
			expect({ [key]: webhook[key], files: [seen.get(webhook[key]), webhook.file] }).toEqual({
				[key]: webhook[key],
				files: [undefined, webhook.file],
			});
			seen.set(webhook[key], webhook.file);
		}
	}
	for (const { webhookId } of webhooks)
		expect(webhookId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
});

test('each opens with a sticky note holding both CREATE TABLEs and where to run them on Cloud', async () => {
	for (const { file } of await generated()) {
		const workflow = JSON.parse(readFileSync(path.join(cloudDir, file), 'utf8'));
		const note = workflow.nodes.find((n) => n.type === 'n8n-nodes-base.stickyNote');
		const content = note.parameters.content;
		expect(content).toMatch(/CREATE TABLE IF NOT EXISTS \S*processed_events/);
		expect(content).toMatch(/CREATE INDEX/);
		expect(content).toContain(
			'CREATE TABLE IF NOT EXISTS business_log (\n  id bigserial PRIMARY KEY,\n  event_key text NOT NULL,\n  event_type text,\n  created_at timestamptz NOT NULL DEFAULT now()\n);',
		);
		expect(content).toContain('**Postgres** node with operation **Execute Query**');
		const business = workflow.nodes.find((n) => n.name === 'Business Step (insert business_log)');
		expect(JSON.stringify(business.parameters)).toContain('INSERT INTO business_log');
	}
});

test("docs/cloud.md's provider table is the one npm run cloud-workflows writes: every provider, each file's URL or why not", async () => {
	const { DOC, docWithProvidersTable, providersTable, RAW_BASE } = await import(
		pathToFileURL(path.join(root, 'scripts', 'cloud-workflows.mjs')).href
	);
	const builtIn = require(bundle);
	const doc = readFileSync(DOC, 'utf8');
	const { PROVIDERS } = require(path.join(root, 'dist', 'nodes', 'shared', 'webhook', 'providers'));
	expect(doc).toBe(docWithProvidersTable(doc, builtIn, PROVIDERS));
	const rows = providersTable(builtIn, PROVIDERS).split('\n').slice(2);
	expect(rows).toHaveLength(builtIn.BUILT_IN_SIGNATURES.length);
	for (const file of jsonFiles(cloudDir))
		expect(rows.filter((row) => row.includes(`\`${RAW_BASE}${file}\``))).toHaveLength(1);
	for (const row of rows.filter((r) => r.includes('| **no** |')))
		expect(row).toMatch(/\| \*\*no\*\* \| — \| \S.*\. \| — \|$/);
	// How each sender's delivery is seen answered "duplicate": its resend button from the table, else its retries.
	for (const provider of PROVIDERS) {
		const row = rows.find((r) =>
			r.startsWith(`| ${provider.label} (\`${provider.value}\`) | yes |`),
		);
		if (row === undefined) continue;
		expect(row).toContain(
			provider.resend ? provider.resend.how : provider.retries.replace(/\|/g, '\\|'),
		);
	}
	// Each sender's handshake: answered by its workflow, or why not (planner/builtIn/builtInHandshake.ts).
	for (const provider of PROVIDERS.filter((p) => p.handshake)) {
		const row = rows.find(
			(r) => r.startsWith(`| ${provider.label} |`) || r.startsWith(`| ${provider.label} (\``),
		);
		if (row.includes('| yes |')) expect(row).toMatch(/\| (answered \(|not answered: \S)/);
	}
});

async function answerFirstGenerated() {
	const { answerFirstCloudWorkflows } = await import(
		pathToFileURL(path.join(root, 'scripts', 'cloud-workflows.mjs')).href
	);
	return answerFirstCloudWorkflows(bundle, require);
}

test('answer first: one file per provider the built-in path expresses, each byte for byte what the generator writes', async () => {
	const { answerFirstProviders } = require(bundle);
	const generatedFiles = await answerFirstGenerated();
	expect(generatedFiles.map((w) => w.file)).toEqual(answerFirstProviders().map((p) => `${p}.json`));
	expect(jsonFiles(answerFirstDir).sort()).toEqual(generatedFiles.map((w) => w.file).sort());
	// Every sender whose wait is under 10 s has one (the senders that need answering first), and Stripe.
	const { PROVIDERS } = require(path.join(root, 'dist', 'nodes', 'shared', 'webhook', 'providers'));
	const short = PROVIDERS.filter(
		(p) =>
			'seconds' in p.timeout &&
			p.timeout.seconds < 10 &&
			jsonFiles(cloudDir).includes(`${p.value}.json`),
	).map((p) => `${p.value}.json`);
	expect(short.length).toBeGreaterThanOrEqual(5);
	expect(jsonFiles(answerFirstDir)).toEqual(
		expect.arrayContaining([...short, 'stripe.json', 'slack.json']),
	);
	for (const { file, json } of generatedFiles)
		expect({ file, json: readFileSync(path.join(answerFirstDir, file), 'utf8') }).toEqual({
			file,
			json,
		});
});

test("answer first: every statement of every file is the package's own, from its SQL builders", () => {
	const sql = require(path.join(root, 'dist', 'nodes', 'shared', 'store', 'sql'));
	const { tableRef } = require(path.join(root, 'dist', 'nodes', 'shared', 'store', 'identifiers'));
	const ref = tableRef('public', 'processed_events');
	// What the package runs for Answer First (Reserve with Store Delivery, Complete Key, Release Key
	// keeping answered events), the Redrive Trigger (its claim) and the Keys node (dead letters).
	const expected = {
		'Reserve Key': sql.reserveLeaseSql(ref, { delivery: true }),
		'Complete Key': sql.completeSql(ref),
		'Release Key': sql.releaseOwnedSql(ref, 'keep'),
		'Claim Due Key': sql.claimRedrivesSql(ref),
		'Retry Dead Letters': sql.retryDeadLettersOutcomeSql(ref),
		'Drop Dead Letters': sql.dropDeadLettersSql(ref),
	};
	for (const file of jsonFiles(answerFirstDir)) {
		const workflow = JSON.parse(readFileSync(path.join(answerFirstDir, file), 'utf8'));
		const statements = Object.fromEntries(
			workflow.nodes
				.filter((n) => n.type === 'n8n-nodes-base.postgres' && !n.name.startsWith('Business Step'))
				.map((n) => [n.name, n.parameters.query]),
		);
		expect({ file, statements }).toEqual({ file, statements: expected });
		const note = workflow.nodes.find((n) => n.type === 'n8n-nodes-base.stickyNote');
		expect(note.parameters.content).toContain(sql.createTableSql(ref, { lease: true }));
		expect(sql.createTableSql(ref, { lease: true })).toMatch(/\bdelivery jsonb\b/);
	}
});
