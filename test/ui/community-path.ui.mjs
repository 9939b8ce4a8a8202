// The user's whole path in n8n's own editor, in a real headless Chromium (Debian's chromium through
// playwright-core) against a real n8n 2.41.1 server: publish the package to a local registry, install
// it from Settings → Community nodes, find its nodes in the node panel, then the README's Quick start
// in its order: the business table (the README's SQL), import, the Production URL read from the
// Webhook node before publishing, the signing secret's credential, the database credentials (a good
// and a wrong password), publish, the seed sequence sent to that URL and read in Executions; then
// update to the next patch version and uninstall.
// Run with `npm run test:ui` (node --test; screenshots go to a temp folder printed at the end).
//
// One switch a user would not flip: n8n installs from a registry other than npmjs.org only with the
// licensed feature feat:communityNodes:customRegistry. The server runs in n8n's test mode
// (E2E_TESTS=true), where PATCH /rest/e2e/feature switches that one feature on, and
// N8N_COMMUNITY_PACKAGES_REGISTRY points at the local registry (support/stack.mjs).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';

import {
	EVENT_A,
	EVENT_B,
	E2E_STRIPE_SECRET,
	progress,
	sendEvent,
	waitForWebhook,
} from '../../scripts/harness/index.mjs';
import { packageManifest, REPO_DIR } from '../../scripts/harness/package.mjs';
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
	closeNodePanel,
	executionsInUi,
	fillCredential,
	importWorkflowFile,
	installCommunityPackage,
	newWorkflow,
	openCommunityNodes,
	openNode,
	openNodeCredential,
	packageCard,
	publishWorkflow,
	saveCredential,
	searchNodePanel,
	setUpOwner,
	webhookUrlInNode,
	webhookUrlsSection,
} from './support/n8nUi.mjs';
import { publishRelease, publishReleaseAs, publishWithoutRelease } from './support/publish.mjs';
import { startUiStack } from './support/stack.mjs';

const PACKAGE = packageManifest().name;
const VERSION = packageManifest().version;
/** The update the suite publishes: the next patch version. */
const NEXT_VERSION = VERSION.replace(
	/^(\d+)\.(\d+)\.(\d+).*$/,
	(_, major, minor, patch) => `${major}.${minor}.${Number(patch) + 1}`,
);
const TEMPLATE = path.join(REPO_DIR, 'workflows', 'idempotent-webhook.json');
/**
 * The URL the README's Quick start tells a user to give Stripe, `https://<your n8n>/webhook/…`: the
 * suite expects the editor to show this path, so the README and the UI cannot drift apart unseen.
 */
const README_WEBHOOK_PATH = (() => {
	const readme = readFileSync(path.join(REPO_DIR, 'README.md'), 'utf8');
	const named = /\*\*Production URL\*\*[^`]*`https:\/\/<your n8n>(\/webhook\/[^`\s]+)`/.exec(
		readme,
	);
	if (!named)
		throw new Error('README.md no longer names the Production URL as https://<your n8n>/webhook/…');
	return named[1];
})();
/** The Quick start's step 1, the example business table: the suite creates it with this statement. */
const README_BUSINESS_TABLE_SQL = (() => {
	const readme = readFileSync(path.join(REPO_DIR, 'README.md'), 'utf8');
	const sql = /```sql\n([\s\S]*?CREATE TABLE IF NOT EXISTS business_log[\s\S]*?)```/.exec(readme);
	if (!sql)
		throw new Error(
			'README.md no longer has the CREATE TABLE business_log block of its Quick start',
		);
	return sql[1];
})();
const OWNER = { email: 'owner@example.com', password: 'Owner-pass-1A' };
const NODES = {
	reserve: 'Idempotency Reserve',
	complete: 'Idempotency Complete Key',
	release: 'Idempotency Release Key',
	purge: 'Idempotency Purge Keys',
	verify: 'Verify Webhook Signature',
};
const BUSINESS_STEP = 'Business Step (insert business_log)';
// A repeat ends at Reserve, which answers it itself (Answer Repeats, Reserve 2.3).
const isRepeatRun = (run) =>
	run.succeeded.includes('Idempotency Reserve') && !run.succeeded.includes(BUSINESS_STEP);

const started = Date.now();
const shots = outputDir();
let stack;
let browser;
let page;
/** Set by the import step: the editor URL of the imported workflow; by the connect step: the URL n8n shows. */
let workflowUrl;
let webhookUrl;

const skip = chromiumAvailable ? false : `no Chromium at ${CHROMIUM} (apt-get install -y chromium)`;

before(
	async () => {
		if (skip) return;
		if (process.env.N8N_E2E_SKIP_BUILD !== '1') {
			progress('npm run build');
			try {
				execFileSync('npm', ['run', 'build'], {
					cwd: REPO_DIR,
					stdio: 'pipe',
					encoding: 'utf8',
					timeout: 300_000,
				});
			} catch (error) {
				throw new Error(`npm run build failed:\n${error.stdout ?? ''}${error.stderr ?? ''}`);
			}
		}
		stack = await startUiStack({ packageName: PACKAGE });
		browser = await openBrowser({ screenshotsDir: shots });
		page = browser.page;
	},
	{ timeout: 60 * 60_000 },
);

after(
	async () => {
		await browser?.close();
		await stack?.stop();
		process.stderr.write(
			`\n[ui] screenshots: ${shots}\n[ui] suite time: ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
		);
	},
	{ timeout: 120_000 },
);

/** The part of the window a README picture shows: the element's box (and `pad` around it), at most maxHeight tall. */
async function clipOf(locator, { maxHeight = 900, pad = 0 } = {}) {
	const box = await locator.boundingBox();
	if (!box) throw new Error('nothing to clip: the element is not on screen');
	return {
		x: Math.max(0, box.x - pad),
		y: Math.max(0, box.y - pad),
		width: box.width + 2 * pad,
		height: Math.min(box.height + 2 * pad, maxHeight),
	};
}

/** Runs a step; on failure saves a screenshot and prints the tail of n8n's log. */
const step = uiStepRunner(() => ({ browser, stack }));

test(
	'publish: a plain npm publish is stopped by n8n-node prerelease; the release path publishes to the local registry',
	{ skip, timeout: 300_000 },
	() =>
		step('publish', async () => {
			const refused = await publishWithoutRelease(stack.registry);
			assert.notEqual(refused.code, 0, refused.output);
			assert.match(refused.output, /Run `npm run release` to publish the package/);

			const released = await publishRelease(stack.registry);
			assert.equal(released.code, 0, released.output);
			assert.match(released.output, /n8n-node prerelease/, 'prepublishOnly ran');
			assert.ok(released.output.includes(`+ ${PACKAGE}@${VERSION}`), released.output);
		}),
);

test(
	'install: owner setup, then Settings → Community nodes → Install; the package shows as installed with its nodes',
	{ skip, timeout: 420_000 },
	() =>
		step('install', async () => {
			await setUpOwner(page, stack.baseUrl, OWNER);
			await openCommunityNodes(page, stack.baseUrl);
			await browser.screenshot('community-nodes-empty');
			await installCommunityPackage(page, PACKAGE);
			const card = packageCard(page, PACKAGE);
			await card.waitFor({ timeout: 60_000 });
			const text = await card.innerText();
			for (const node of Object.values(NODES))
				assert.ok(text.includes(node), `the card lists ${node}: ${text}`);
			await browser.screenshot('community-nodes-installed');
		}),
);

const KEY_NODES = [NODES.reserve, NODES.complete, NODES.release, NODES.purge];
/** What a user types, and the nodes it must list (their names, descriptions and codex aliases). */
const SEARCHES = [
	['idempotency', [...KEY_NODES, NODES.verify]],
	['dedupe', KEY_NODES],
	['duplicate', KEY_NODES],
	['webhook retry', [...KEY_NODES, NODES.verify]],
	['signature', [NODES.verify]],
];

test('node panel: the words a user types find the nodes', { skip, timeout: 180_000 }, () =>
	step('search', async () => {
		await newWorkflow(page, stack.baseUrl);
		for (const [words, expected] of SEARCHES) {
			const names = await searchNodePanel(page, words);
			for (const name of expected)
				assert.ok(
					names.includes(name),
					`"${words}" lists ${name}; it listed ${JSON.stringify(names)}`,
				);
			if (words === 'idempotency') {
				await browser.screenshot('node-panel-idempotency');
				await browser.screenshot('readme-node-panel-search', {
					clip: await clipOf(page.getByTestId('node-creator'), { maxHeight: 680 }),
				});
			}
		}
		await closeNodePanel(page);
	}),
);

test(
	"Quick start step 1: the business table, created with the README's own SQL",
	{ skip, timeout: 60_000 },
	() =>
		step('business-table', async () => {
			// The harness made business_log for every stack; the README's statement makes it here.
			await stack.keysDb.query('DROP TABLE IF EXISTS business_log');
			await stack.keysDb.query(README_BUSINESS_TABLE_SQL);
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
	'Quick start step 2: the bundled template imported from its file',
	{ skip, timeout: 180_000 },
	() =>
		step('import', async () => {
			await newWorkflow(page, stack.baseUrl);
			await importWorkflowFile(page, TEMPLATE);
			await canvasNode(page, NODES.reserve).waitFor({ timeout: 30_000 });
			// Importing into a new workflow saves it: the URL now names it.
			await page.waitForURL(/\/workflow\/(?!new)[^/?]+/, { timeout: 30_000 });
			workflowUrl = page.url().replace(/[?#].*$/, '');
			await browser.screenshot('template-imported');
		}),
);

test(
	"Quick start step 3: the Webhook node's Production URL, shown before publishing, is the one the README names",
	{ skip, timeout: 180_000 },
	() =>
		step('production-url', async () => {
			assert.ok(workflowUrl, 'step 2 imported the workflow');
			await openNode(page, 'Webhook');
			// The Test URL answers only while the editor listens for a test event: not the one to give Stripe.
			const testUrl = await webhookUrlInNode(page, 'Test URL');
			assert.equal(
				testUrl,
				`${stack.baseUrl}${README_WEBHOOK_PATH.replace(/^\/webhook\//, '/webhook-test/')}`,
			);
			const productionUrl = await webhookUrlInNode(page, 'Production URL');
			assert.equal(productionUrl, `${stack.baseUrl}${README_WEBHOOK_PATH}`);
			await browser.screenshot('webhook-production-url');
			await browser.screenshot('readme-webhook-production-url', {
				clip: await clipOf(webhookUrlsSection(page), { pad: 12 }),
			});
			await closeNode(page);
			webhookUrl = productionUrl;
		}),
);

// Step 4, connecting Stripe (the CLI's `stripe listen` or a Dashboard destination), needs a Stripe
// account and the network: the suite plays the sender itself, signing with the harness's secret.

test(
	"Quick start step 5: the whsec_ in Reserve's Webhook Signing Secret API credential",
	{ skip, timeout: 120_000 },
	() =>
		step('signing-secret', async () => {
			assert.ok(workflowUrl, 'step 2 imported the workflow');
			await openNode(page, NODES.reserve);
			// The README names the control as n8n 2.x shows it on an instance without such a credential.
			const empty = page.getByTestId('node-credentials-empty-state');
			assert.match((await empty.last().innerText()).trim(), /^Connect to /);
			await openNodeCredential(page, { unset: true, last: true });
			await fillCredential(page, { secret: E2E_STRIPE_SECRET });
			const secret = await saveCredential(page, { sent: E2E_STRIPE_SECRET });
			assert.deepEqual(
				[secret.ok, secret.message],
				[true, 'Secret set. Send a signed test delivery to check it against the sender.'],
			);
			await closeCredential(page);
			await closeNode(page);
		}),
);

test(
	'Quick start step 6: the Idempotency Postgres credential (a wrong and the right password), given to Complete Key and Release Key; the Postgres credential of the business step',
	{ skip, timeout: 300_000 },
	() =>
		step('database-credentials', async () => {
			assert.ok(workflowUrl, 'step 2 imported the workflow');
			const login = stack.keysLogin;
			await openNode(page, NODES.reserve);
			await openNodeCredential(page);
			await fillCredential(page, login);
			const good = await saveCredential(page, { sent: login.password });
			assert.deepEqual([good.ok, good.message], [true, 'Connection successful']);
			await browser.screenshot('credential-tested');

			// A new credential whose test passed closes its dialog: the pencil opens it again.
			await openNodeCredential(page);
			await fillCredential(page, { password: 'not-the-password' });
			const wrong = await saveCredential(page, { sent: 'not-the-password' });
			assert.equal(wrong.ok, false);
			assert.equal(
				wrong.message,
				`PostgreSQL at ${login.host}:${login.port} refused the password for user "${login.user}". Check the user and password in the Idempotency Postgres credential.`,
			);
			await browser.screenshot('credential-wrong-password');
			await browser.screenshot('readme-credential-wrong-password', {
				clip: await clipOf(page.getByTestId('editCredential-modal'), { maxHeight: 400 }),
			});

			await fillCredential(page, { password: login.password });
			assert.equal((await saveCredential(page, { sent: login.password })).ok, true);
			await closeCredential(page);
			await closeNode(page);

			// n8n gave the new credential to the other nodes of its type (Complete Key, Release Key).
			for (const name of ['Complete Key', 'Release Key']) {
				await openNode(page, name);
				assert.match(
					await page.getByTestId('node-credentials-select').locator('input').inputValue(),
					/Idempotency Postgres/,
					`${name} uses the new credential`,
				);
				await closeNode(page);
			}

			await openNode(page, BUSINESS_STEP);
			await openNodeCredential(page);
			await fillCredential(page, login);
			assert.equal((await saveCredential(page, { sent: login.password })).ok, true);
			await closeCredential(page);
			await closeNode(page);

			const issues = await page.getByTestId('canvas-node').getByTestId('node-issues').count();
			assert.equal(issues, 0, 'no node on the canvas reports a problem');
		}),
);

test(
	'Quick start step 7: published, the Production URL of step 3 answers',
	{ skip, timeout: 180_000 },
	() =>
		step('publish-workflow', async () => {
			assert.ok(webhookUrl, 'step 3 read the Production URL');
			await publishWorkflow(page);
			await browser.screenshot('workflow-published');
			// n8n registers a published workflow's webhook shortly after Publish; wait until the URL the
			// editor showed answers, then send to exactly that URL.
			assert.equal(
				await waitForWebhook(stack.n8n, README_WEBHOOK_PATH.replace(/^\/webhook\//, '')),
				webhookUrl,
			);
		}),
);

test(
	'Quick start step 8: A, A again (re-signed, as a resend is) and B to the Production URL the editor showed; Executions shows A and B through the business step, the repeat through the duplicate branch',
	{ skip, timeout: 300_000 },
	() =>
		step('receive', async () => {
			assert.ok(webhookUrl, 'step 3 read the Production URL');
			const now = Math.floor(Date.now() / 1000);
			const answers = [];
			for (const [body, signedAt] of [
				[EVENT_A, now - 2],
				[EVENT_A, now],
				[EVENT_B, now],
			]) {
				const response = await sendEvent(webhookUrl, body, { signedAt });
				answers.push([response.status, response.json?.status, response.json?.key]);
			}
			// Complete Key answers a new event with a fixed body; a duplicate's answer names its key.
			assert.deepEqual(answers, [
				[200, 'processed', undefined],
				[200, 'duplicate', 'evt:evt_A'],
				[200, 'processed', undefined],
			]);
			assert.deepEqual(
				(await stack.keysDb.query('SELECT event_key FROM business_log ORDER BY id')).rows.map(
					(row) => row.event_key,
				),
				['evt:evt_A', 'evt:evt_B'],
			);

			const runs = await executionsInUi(page, workflowUrl, 3, {
				screenshot: async (index, run) => {
					if (isRepeatRun(run)) {
						await browser.screenshot('executions-duplicate-run');
						await browser.screenshot('readme-executions-duplicate-run', {
							clip: { x: 0, y: 0, width: 1440, height: 740 },
						});
					} else if (index === 0) await browser.screenshot('executions-new-event-run');
				},
			});
			// Newest first: B, the repeat of A, A.
			const [b, repeat, a] = runs;
			for (const run of [a, b]) {
				assert.ok(
					run.succeeded.includes(BUSINESS_STEP),
					`a new event ran the business step: ${run.succeeded}`,
				);
				assert.ok(!isRepeatRun(run));
			}
			assert.ok(isRepeatRun(repeat), `the repeat ended at Reserve: ${repeat.succeeded}`);
			assert.ok(
				!repeat.succeeded.includes(BUSINESS_STEP),
				'the repeat never ran the business step',
			);
		}),
);

test(
	'update and uninstall: the next patch version published and updated from the Community nodes page, the published workflow keeps answering; uninstalled, n8n keeps running',
	{ skip, timeout: 600_000 },
	() =>
		step('update', async () => {
			assert.ok(webhookUrl, 'the import step published the workflow');
			const released = await publishReleaseAs(stack.registry, NEXT_VERSION, stack.workDir);
			assert.equal(released.code, 0, released.output);
			assert.ok(released.output.includes(`+ ${PACKAGE}@${NEXT_VERSION}`), released.output);

			await openCommunityNodes(page, stack.baseUrl);
			const card = packageCard(page, PACKAGE);
			const update = card.getByRole('button', { name: /update/i });
			await update.waitFor({ timeout: 60_000 });
			await browser.screenshot('community-nodes-update-available');
			await update.click();
			const confirm = page.getByTestId('communityPackageManageConfirm-modal');
			await confirm.getByRole('button', { name: /confirm update/i }).click();
			await confirm.waitFor({ state: 'hidden', timeout: 240_000 });
			await card.getByText(`v${NEXT_VERSION}`).waitFor({ timeout: 60_000 });
			await browser.screenshot('community-nodes-updated');

			const afterUpdate = await sendEvent(webhookUrl, {
				id: 'evt_C',
				type: 'payment_intent.succeeded',
			});
			assert.deepEqual(
				[afterUpdate.status, afterUpdate.json?.status, afterUpdate.json?.key],
				[200, 'processed', undefined],
			);
			assert.equal(
				(await stack.keysDb.query(`SELECT 1 FROM business_log WHERE event_key = 'evt:evt_C'`))
					.rowCount,
				1,
			);
			const again = await sendEvent(webhookUrl, { id: 'evt_A', type: 'payment_intent.succeeded' });
			assert.deepEqual(
				[again.status, again.json?.status],
				[200, 'duplicate'],
				'keys reserved before the update still count',
			);

			await card.getByTestId('action-toggle').click();
			await page.getByTestId('action-uninstall').click();
			await confirm.getByRole('button', { name: /confirm uninstall/i }).click();
			await card.waitFor({ state: 'detached', timeout: 120_000 });
			await browser.screenshot('community-nodes-uninstalled');

			assert.equal(
				stack.n8n.process.exitStatus,
				undefined,
				'the n8n server process is still running',
			);
			const health = await fetch(`${stack.baseUrl}/healthz/readiness`, {
				signal: AbortSignal.timeout(10_000),
			});
			assert.equal(health.status, 200);
			// The editor still opens the workflow whose nodes are gone.
			await page.goto(workflowUrl, { waitUntil: 'domcontentloaded' });
			await canvasNode(page, 'Webhook').waitFor({ timeout: 60_000 });
			await browser.screenshot('workflow-after-uninstall');
		}),
);
