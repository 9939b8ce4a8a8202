// The n8n Cloud user's path in n8n's own editor, in a real headless Chromium against a real n8n
// 2.41.1 WITHOUT this package and with community packages off (N8N_COMMUNITY_PACKAGES_ENABLED=false,
// as on n8n Cloud): the planner's built-in-nodes workflow for Stripe imported through
// "…" → Import → From URL (a local file server standing in for the raw GitHub URL), the tables its
// sticky note names created by a Postgres node executed in the editor, its credentials made in the
// editor's dialogs, published, a signed delivery sent twice to its Production URL (processed, then
// duplicate) and the duplicate read in Executions.
// Run with `npm run test:ui` (node --test; screenshots go to a temp folder printed at the end).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';

import {
	E2E_STRIPE_SECRET,
	progress,
	sendEvent,
	waitForWebhook,
} from '../../scripts/harness/index.mjs';
import { REPO_DIR } from '../../scripts/harness/package.mjs';
import {
	chromiumAvailable,
	CHROMIUM,
	openBrowser,
	outputDir,
	uiStepRunner,
} from './support/browser.mjs';
import {
	canvasNode,
	closeCredential,
	closeNode,
	executionsInUi,
	fillCredential,
	importWorkflowUrl,
	newWorkflow,
	openNode,
	openNodeCredential,
	publishWorkflow,
	saveCredential,
	setUpOwner,
} from './support/n8nUi.mjs';
import { startCloudUiStack } from './support/stack.mjs';

const PREBUILT = path.join(REPO_DIR, 'workflows', 'cloud', 'stripe.json');
const OWNER = { email: 'owner@example.com', password: 'Owner-pass-1A' };
const EVENT = { id: 'evt_cloud_A', type: 'payment_intent.succeeded' };

const started = Date.now();
const shots = outputDir();
let stack;
let browser;
let page;
let fileServer;
/** The workflow JSON served at the stand-in raw URL, as the user downloads it. */
let workflowText;
let workflow;
/** Set by the import step: the editor URL of the imported workflow. */
let workflowUrl;
/** Set by the SQL step: the name n8n gave the Postgres credential made there. */
let postgresCredential;

const skip = chromiumAvailable ? false : `no Chromium at ${CHROMIUM} (apt-get install -y chromium)`;

/** The repository's prebuilt file when there is one, else what `planner --built-in` prints. */
function stripeWorkflowText() {
	if (existsSync(PREBUILT)) return readFileSync(PREBUILT, 'utf8');
	return execFileSync(
		process.execPath,
		[path.join(REPO_DIR, 'scripts/planner.mjs'), '--built-in', '--provider', 'stripe'],
		{ encoding: 'utf8' },
	);
}

/** Every CREATE TABLE / CREATE INDEX statement in the sticky note's SQL blocks, in order. */
function createStatementsFromNote() {
	const notes = workflow.nodes.filter((node) => node.type === 'n8n-nodes-base.stickyNote');
	const blocks = notes.flatMap((note) =>
		[...String(note.parameters.content).matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]),
	);
	const statements = blocks
		.flatMap((block) => block.split(/;\s*(?:\n|$)/))
		.map((statement) => statement.trim())
		.filter((statement) => /^CREATE\s+(UNIQUE\s+)?(TABLE|INDEX)\b/i.test(statement));
	assert.ok(statements.length > 0, 'the sticky note carries CREATE statements');
	return statements.map((statement) => `${statement};`);
}

function nodeNamed(predicate, what) {
	const node = workflow.nodes.find(predicate);
	assert.ok(node, `the workflow has ${what}`);
	return node.name;
}

before(
	async () => {
		if (skip) return;
		if (!existsSync(PREBUILT) && process.env.N8N_E2E_SKIP_BUILD !== '1') {
			progress('npm run build (the planner CLI reads dist/)');
			execFileSync('npm', ['run', 'build'], { cwd: REPO_DIR, stdio: 'pipe', timeout: 300_000 });
		}
		workflowText = stripeWorkflowText();
		workflow = JSON.parse(workflowText);
		// Stands in for raw.githubusercontent.com: n8n's server fetches the URL the user pastes.
		fileServer = createServer((request, response) => {
			if (request.url !== '/stripe.json') return response.writeHead(404).end();
			response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(workflowText);
		});
		await new Promise((resolve) => fileServer.listen(0, '127.0.0.1', resolve));
		stack = await startCloudUiStack();
		browser = await openBrowser({ screenshotsDir: shots });
		page = browser.page;
	},
	{ timeout: 60 * 60_000 },
);

after(
	async () => {
		await browser?.close();
		await stack?.stop();
		fileServer?.close();
		process.stderr.write(
			`\n[ui] screenshots: ${shots}\n[ui] cloud-import time: ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
		);
	},
	{ timeout: 120_000 },
);

/** Runs a step; on failure saves a screenshot and prints the tail of n8n's log. */
const step = uiStepRunner(() => ({ browser, stack }));

test(
	'import: owner setup, then "…" → Import → From URL with the raw file URL; saved',
	{ skip, timeout: 240_000 },
	() =>
		step('import-url', async () => {
			assert.deepEqual(
				workflow.nodes.filter((node) => !node.type.startsWith('n8n-nodes-base.')),
				[],
				'built-in nodes only',
			);
			await setUpOwner(page, stack.baseUrl, OWNER);
			await newWorkflow(page, stack.baseUrl);
			const { port } = fileServer.address();
			// The first save of a new workflow creates it: POST /rest/workflows.
			const created = page.waitForResponse(
				(response) =>
					new URL(response.url()).pathname.endsWith('/rest/workflows') &&
					response.request().method() === 'POST',
				{ timeout: 60_000 },
			);
			await importWorkflowUrl(page, `http://127.0.0.1:${port}/stripe.json`);
			for (const node of workflow.nodes.filter((n) => n.type !== 'n8n-nodes-base.stickyNote'))
				await canvasNode(page, node.name).waitFor({ timeout: 30_000 });
			// Save (n8n 2.x also saves a new workflow by itself shortly after a change).
			await page.keyboard.press('Control+s');
			const response = await created;
			assert.equal(response.ok(), true, 'n8n saved the imported workflow');
			const { id } = (await response.json()).data;
			workflowUrl = `${stack.baseUrl}/workflow/${id}`;
			await page.waitForURL(new RegExp(`/workflow/${id}`), { timeout: 30_000 });
			await browser.screenshot('cloud-workflow-imported');
		}),
);

test(
	"the sticky note's SQL run by a Postgres node (Execute a SQL query) executed in the editor; the tables exist",
	{ skip, timeout: 240_000 },
	() =>
		step('note-sql', async () => {
			const statements = createStatementsFromNote();
			// The harness made business_log for every stack; the note's SQL must make it itself.
			await stack.keysDb.query('DROP TABLE IF EXISTS business_log');
			assert.ok(
				statements.some((s) => /CREATE TABLE[^(]*\bbusiness_log\b/i.test(s)),
				'the sticky note creates business_log, which the placeholder business step inserts into',
			);
			const tables = statements
				.map((s) => /^CREATE TABLE(?: IF NOT EXISTS)?\s+(?:"?\w+"?\.)?"?(\w+)"?/i.exec(s)?.[1])
				.filter(Boolean);
			for (const table of tables)
				assert.equal(
					(await stack.keysDb.query('SELECT to_regclass($1) AS t', [table])).rows[0].t,
					null,
					`${table} does not exist before the step`,
				);

			await newWorkflow(page, stack.baseUrl);
			await page
				.getByTestId('canvas-plus-button')
				.or(page.getByTestId('node-creator-plus-button'))
				.first()
				.click();
			await page
				.getByTestId('node-creator-search-bar')
				.pressSequentially('Postgres', { delay: 20 });
			await page
				.getByTestId('node-creator')
				.getByTestId('node-creator-item-name')
				.getByText('Postgres', { exact: true })
				.click();
			// The Actions group can be folded when the node also has a trigger: unfold it.
			const action = page
				.getByTestId('node-creator')
				.getByText('Execute a SQL query', { exact: true });
			if (!(await action.isVisible().catch(() => false)))
				await page
					.getByTestId('node-creator')
					.getByText(/^Actions \(\d+\)$/)
					.click();
			await action.click();
			await page.getByTestId('ndv').waitFor();
			// No Postgres credential yet: n8n offers to create one.
			await openNodeCredential(page);
			await fillCredential(page, stack.keysLogin);
			const tested = await saveCredential(page, { sent: stack.keysLogin.password });
			assert.equal(tested.ok, true, tested.message);
			await closeCredential(page);
			postgresCredential = await page
				.getByTestId('node-credentials-select')
				.locator('input')
				.inputValue();
			assert.ok(postgresCredential, 'the node uses the new credential');

			const editor = page
				.getByTestId('ndv')
				.getByTestId('parameter-input-query')
				.locator('.cm-content');
			await editor.click();
			await page.keyboard.insertText(statements.join('\n'));
			// The SQL editor hands its text to the node debounced, on change and on blur.
			await page.getByTestId('ndv').getByText('Query', { exact: true }).first().click();
			await page.waitForTimeout(1_000);
			await page.getByTestId('ndv').getByTestId('node-execute-button').click();
			const deadline = Date.now() + 60_000;
			for (const table of tables) {
				while (
					(await stack.keysDb.query('SELECT to_regclass($1) AS t', [table])).rows[0].t === null
				) {
					if (Date.now() > deadline) throw new Error(`${table} was not created`);
					await page.waitForTimeout(300);
				}
			}
			await browser.screenshot('cloud-note-sql-executed');
			await closeNode(page);
			const columns = await stack.keysDb.query(
				`SELECT column_name FROM information_schema.columns
				 WHERE table_name = 'business_log' ORDER BY ordinal_position`,
			);
			assert.deepEqual(
				columns.rows.map((row) => row.column_name),
				['id', 'event_key', 'event_type', 'created_at'],
			);
		}),
);

test(
	'credentials: the Postgres credential chosen in every Postgres node, a new Crypto credential with the signing secret',
	{ skip, timeout: 300_000 },
	() =>
		step('credentials', async () => {
			assert.ok(workflowUrl && postgresCredential, 'the import and SQL steps ran');
			await page.goto(workflowUrl, { waitUntil: 'domcontentloaded' });
			const withCredentials = workflow.nodes.filter((node) => node.credentials);
			assert.ok(withCredentials.length > 0);
			for (const node of withCredentials) {
				const [type] = Object.keys(node.credentials);
				await openNode(page, node.name);
				if (type === 'postgres') await chooseCredential(postgresCredential);
				else if (type === 'crypto') {
					await openNodeCredential(page);
					await fillCredential(page, { hmacSecret: E2E_STRIPE_SECRET });
					await saveUntestedCredential();
					await closeCredential(page);
				} else assert.fail(`${node.name} needs a ${type} credential the test does not know`);
				await closeNode(page);
			}
			const issues = await page.getByTestId('canvas-node').getByTestId('node-issues').count();
			assert.equal(issues, 0, 'no node on the canvas reports a problem');
			await browser.screenshot('cloud-credentials-set');
		}),
);

/** In an open node: its credential select → the named credential, unless already chosen. */
async function chooseCredential(name) {
	const select = page.getByTestId('node-credentials-select');
	if ((await select.locator('input').inputValue()) === name) return;
	await select.click();
	await page.getByRole('option', { name, exact: true }).click();
	assert.equal(await select.locator('input').inputValue(), name);
}

/** Save for a credential type without a test (Crypto): n8n stores it and says "Saved". */
async function saveUntestedCredential() {
	const modal = page.getByTestId('editCredential-modal');
	const stored = page.waitForResponse(
		(response) =>
			/\/rest\/credentials(\/[^/]+)?$/.test(new URL(response.url()).pathname) &&
			['POST', 'PATCH'].includes(response.request().method()),
	);
	await modal.getByTestId('credential-save-button').click();
	assert.equal((await stored).ok(), true, 'n8n stored the credential');
}

test('publish: the Production URL answers', { skip, timeout: 180_000 }, () =>
	step('publish', async () => {
		await publishWorkflow(page);
		const webhook = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.webhook');
		assert.equal(
			await waitForWebhook(stack.n8n, webhook.parameters.path),
			`${stack.baseUrl}/webhook/${webhook.parameters.path}`,
		);
		await browser.screenshot('cloud-workflow-published');
	}),
);

test(
	'a Stripe-signed delivery twice: processed (one business_log row), then duplicate (no new row); Executions shows the repeat through the duplicate answer',
	{ skip, timeout: 240_000 },
	() =>
		step('receive', async () => {
			const webhook = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.webhook');
			const url = `${stack.baseUrl}/webhook/${webhook.parameters.path}`;
			const rows = async () =>
				(await stack.keysDb.query('SELECT event_key FROM business_log ORDER BY id')).rows.map(
					(row) => row.event_key,
				);
			const first = await sendEvent(url, EVENT);
			assert.deepEqual([first.status, first.json?.status], [200, 'processed'], first.text);
			assert.deepEqual(await rows(), [`evt:${EVENT.id}`]);
			const second = await sendEvent(url, EVENT);
			assert.deepEqual([second.status, second.json?.status], [200, 'duplicate'], second.text);
			assert.deepEqual(await rows(), [`evt:${EVENT.id}`]);

			const businessStep = nodeNamed((n) => /^Business Step/.test(n.name), 'a business step');
			const duplicate = nodeNamed(
				(n) => n.type === 'n8n-nodes-base.respondToWebhook' && /duplicate/i.test(n.name),
				'a duplicate answer',
			);
			const [repeat, firstRun] = await executionsInUi(page, workflowUrl, 2, {
				screenshot: async (index) => await browser.screenshot(`cloud-execution-${index}`),
			});
			assert.ok(firstRun.succeeded.includes(businessStep), `first: ${firstRun.succeeded}`);
			assert.ok(!firstRun.succeeded.includes(duplicate));
			assert.ok(repeat.succeeded.includes(duplicate), `repeat: ${repeat.succeeded}`);
			assert.ok(!repeat.succeeded.includes(businessStep), 'the repeat never ran the business step');
		}),
);
