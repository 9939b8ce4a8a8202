// End-to-end: the workflow the key planner page downloads imports into a real n8n 2.41.1 server,
// publishes, and reserves exactly the key the page showed for the same delivery (same bytes, same
// headers). Run with `node --test test/e2e/planner.e2e.mjs` (needs /usr/bin/chromium; skipped
// without it). Follows test/e2e/template.e2e.mjs: the harness installs the packed package, imports
// the credentials and workflows, publishes them and starts n8n.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';

import { sendEvent, startStack } from '../../scripts/harness/index.mjs';

const require = createRequire(import.meta.url);
const { chromiumAvailable, openPlanner, plan } = require('../support/planner.js');

const REPO = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const WORKFLOW_ID = 'IdemPlannerWf0001';
// The page's settings: every one differs from the template's, so the test sees they were applied.
const SETTINGS = {
	keySource: 'eventIdOrBodyHash',
	eventIdPath: '{{ $json.body.data.id }}',
	namespace: 'planner',
	schema: 'public',
	table: 'planner_events',
	mode: 'lease',
	leaseSeconds: 120,
	retentionDays: 30,
};
/** Deliveries whose bytes matter: issue 15's pair of ids beyond 2^53 (CRLF, spaces), and a body without the id (BOM, CRLF). */
/** @type {Array<[string, Buffer]>} */
const DELIVERIES = [
	[
		'id beyond 2^53',
		Buffer.from(
			'{\r\n  "data" : { "id": 98765432101234567891 },\r\n  "type": "invoice.paid"\r\n}\r\n',
		),
	],
	['the next id', Buffer.from('{"data":{"id":98765432101234567892},"type":"invoice.paid"}')],
	['no data.id, a byte order mark', Buffer.from('\ufeff{ "type": "ping",\r\n  "data": {} }')],
];

const skip = chromiumAvailable
	? false
	: 'no Chromium at /usr/bin/chromium (apt-get install -y chromium)';
let stack;
let shown;

before(
	async () => {
		if (skip) return;
		// The page first (startStack builds the package again for n8n; the page only needs this step).
		execFileSync(process.execPath, [path.join(REPO, 'scripts/build-planner.mjs')], {
			stdio: 'inherit',
		});
		const browser = await openPlanner();
		let workflow;
		try {
			shown = [];
			for (const [, bytes] of DELIVERIES) {
				shown.push(
					(
						await plan(browser.page, {
							body: bytes,
							headers: 'Content-Type: application/json',
							...SETTINGS,
						})
					).key,
				);
			}
			const [download] = await Promise.all([
				browser.page.waitForEvent('download'),
				browser.page.click('#downloadWorkflow'),
			]);
			workflow = JSON.parse(readFileSync(await download.path(), 'utf8'));
			assert.deepEqual(browser.requests.length, 1, 'the page made no request');
			// The template is published beside it: only the webhook's path (and id) change, so both can be registered.
			const webhook = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.webhook');
			webhook.parameters.path = 'planner-webhook';
			webhook.webhookId = 'b8c1f0de-3a5e-4c6b-9d2f-7e1a0c4b5d61';
		} finally {
			await browser.close();
		}
		stack = await startStack({
			label: 'planner',
			extraWorkflows: [{ workflow: { ...workflow, id: WORKFLOW_ID } }],
		});
	},
	{ timeout: 60 * 60_000 },
);

after(async () => await stack?.stop(), { timeout: 120_000 });

test('the page shows the keys the rules give for these bytes', { skip }, () => {
	assert.deepEqual(shown, [
		'planner:evt:98765432101234567891',
		'planner:evt:98765432101234567892',
		`planner:sha256:${createHash('sha256').update(DELIVERIES[2][1]).digest('hex')}`,
	]);
});

test(
	'the downloaded workflow, published in n8n 2.41, reserves exactly the key the page showed',
	{ skip, timeout: 300_000 },
	async () => {
		const [published] = stack.extraWorkflows;
		assert.ok(published.webhookUrl, "the downloaded workflow's webhook is registered");
		for (const [index, [name, bytes]] of DELIVERIES.entries()) {
			const response = await sendEvent(published.webhookUrl, bytes, {
				contentType: 'application/json',
			});
			assert.equal(response.status, 200, `${name}: ${response.text.slice(0, 300)}`);
			assert.deepEqual(response.json, { status: 'processed' }, name);
			const execution = await stack.executions.waitForRequest(WORKFLOW_ID, response.requestId);
			assert.equal(
				execution.items('Idempotency Reserve', 0)[0].idempotency.key,
				shown[index],
				name,
			);
			// The same bytes again: the same key, a duplicate of a completed event.
			const again = await sendEvent(published.webhookUrl, bytes, {
				contentType: 'application/json',
			});
			assert.deepEqual(
				[again.status, again.json],
				[200, { status: 'duplicate', key: shown[index] }],
				`${name}, again`,
			);
		}
		// The keys are in the table the page was set to, in lease mode (completed by Complete Key).
		const { rows } = await stack.keysDb.query(
			'SELECT key, status FROM public.planner_events ORDER BY key',
		);
		assert.deepEqual(
			rows.map((row) => [row.key, row.status]),
			[...shown].sort().map((key) => [key, 'completed']),
		);
		const { rows: template } = await stack.keysDb.query(
			`SELECT to_regclass('public.processed_events') IS NOT NULL AS exists`,
		);
		if (template[0].exists) {
			const { rows: other } = await stack.keysDb.query(
				'SELECT count(*)::int AS n FROM public.processed_events',
			);
			assert.equal(other[0].n, 0, "nothing went to the template's table");
		}
	},
);
