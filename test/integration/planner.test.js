// The key planner page (dist/planner/index.html) in a real headless Chromium, against the real
// Idempotency Reserve node (n8n-core's WorkflowExecute, real PostgreSQL) for the same bytes and
// headers: the page's key is the node's key for every key source, and sha256sum of the bytes where
// it is a body hash; its SQL is what the nodes' SQL builders return; its workflow download is the
// template with these settings; and the page makes no request at all.
const { describe, test, expect, beforeAll, afterAll } = require('@jest/globals');
const { execFileSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const net = require('node:net');
const { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const fc = require('fast-check');

const { useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const {
	servePlanner,
	chromiumAvailable,
	CHROMIUM,
	PAGE_FILE,
	PAGE_URL,
	SCREENSHOTS,
	openPlanner,
	plan,
	settled,
	n8nWebhookItem,
	reserveParameters,
} = require('../support/planner');
const { PROVIDERS } = require('../support/providerVectors');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');
const template = require('../../workflows/idempotent-webhook.json');

const BUSINESS_STEP = 'Business Step (insert business_log)';
/** The Respond node on Reserve's error output (problem+json, docs/errors.md). */
const sql = require('../../dist/nodes/shared/store/sql');
const { tableRef } = require('../../dist/nodes/shared/store/identifiers');
const { KEY_SOURCES } = require('../../dist/nodes/shared/keys/keySourceTable');

if (!chromiumAvailable) {
	// Only a missing browser skips these tests (.ci/run installs Debian's chromium when it is missing).
	console.warn(
		`Key planner browser tests SKIPPED: no Chromium at ${CHROMIUM}. Install it with: apt-get update && apt-get install -y chromium`,
	);
}
const describeInBrowser = chromiumAvailable ? describe : describe.skip;

const db = useTestDatabase();

// ---- the corpus: bodies whose bytes a careless page would change -------------------------------

const big = `{"type":"bulk","items":"${'x'.repeat(1024 * 1024)}","id":12345678901234567890123}`;
const CORPUS = [
	['spaces and tabs', '{ \t"id" :  "evt_spaces" ,\t"type" : "a b"  }  '],
	[
		'CRLF line endings',
		'{\r\n  "id": "evt_crlf",\r\n  "event_id": "Ev_crlf",\r\n  "type": "x"\r\n}\r\n',
	],
	['a UTF-8 byte order mark', '\ufeff{"id":"evt_bom","type":"bom"}'],
	['non-ASCII text', '{"id":"évènement-東京-🎉","type":"ü"}'],
	['escaped unicode', '{"id":"\\u00e9v\\u00e8nement-\\ud83c\\udf89","event_id":"\\u0045v1"}'],
	['no id', '{"type":"ping","data":{"object":{"id":"obj_1"}}}'],
	['a numeric id beyond 2^53', '{"id": 98765432101234567891, "event_id": 98765432101234567892}'],
	['an id with an exponent', '{"id": 1e21, "event_id": 1.50E+3}'],
	['a safe numeric id', '{"id": 12345, "event_id": -7}'],
	['duplicate member names (the last wins, as in JSON.parse)', '{"id":"first","id":"last"}'],
	['an empty body', ''],
	['a ~1 MB body with the id at the end', big],
];

/** Headers per key source: the preset's own, and other presets' to make sure each reads only its own. */
const HEADERS = {
	github: 'X-GitHub-Delivery: 72d3162e-cc78-11e3-81ab-4c9367dc0958\nwebhook-id: msg_other',
	shopify: 'X-Shopify-Webhook-Id: b54557e4-bdd9-4b37-8a5f-bf7d70bcd043\nX-GitHub-Delivery: other',
	standardWebhooks: 'webhook-id: msg_2KWPBgLlAfxdpx2AI54pPJ85f4W\nsvix-id: msg_other',
	svix: 'Svix-Id:   msg_p5jXN8AQM9LWM0D4loKWxJek  ',
};

/** The settings each source is tried with (Event ID and Custom read the parameter the node has). */
/** @type {Array<{ label?: string, keySource: string, headers?: string, eventIdPath?: string, namespace?: string }>} */
const SOURCES = KEY_SOURCES.map(({ value }) => ({
	keySource: value,
	headers: HEADERS[value] ?? '',
	...(value === 'eventIdOrBodyHash' ? { eventIdPath: '{{ $json.body.id }}' } : {}),
	...(value === 'custom' ? { eventIdPath: '{{ $json.body.event_id }}', namespace: 'orders' } : {}),
}));

// The Event ID and Custom Key as people write them: a header path, a nested body path, fixed text.
SOURCES.push(
	{
		label: 'eventIdOrBodyHash, Event ID from a header',
		keySource: 'eventIdOrBodyHash',
		eventIdPath: '{{ $json.headers["x-event-id"] }}',
		headers: 'X-Event-Id:  98765432101234567891 ',
	},
	{
		label: 'eventIdOrBodyHash, Event ID from a nested field',
		keySource: 'eventIdOrBodyHash',
		eventIdPath: '={{ $json.body.data.object.id }}',
		namespace: 'billing',
	},
	{
		label: 'custom, fixed text',
		keySource: 'custom',
		eventIdPath: 'one-key-for-all',
		namespace: 'fixed',
	},
);

/** The node's outcome for these bytes and settings: `{ key }` or `{ error }`. */
async function nodeOutcome(bytes, settings) {
	const run = await runWorkflow(reserveWorkflow, [n8nWebhookItem(bytes, settings.headers ?? '')], {
		credentials: db.credential(),
		nodeOverrides: {
			'Idempotency Reserve': {
				parameters: { mode: 'simple', ...reserveParameters(settings) },
				onError: 'continueErrorOutput',
			},
		},
	});
	expect(run.error).toBeUndefined();
	const [item] = [
		...run.output('Idempotency Reserve', 0),
		...run.output('Idempotency Reserve', 1),
		...run.output('Idempotency Reserve', 2),
	];
	return item.json.error !== undefined
		? { error: item.json.error }
		: { key: item.json.idempotency.key };
}

function sha256sum(bytes) {
	const folder = mkdtempSync(path.join(os.tmpdir(), 'planner-sha-'));
	try {
		writeFileSync(path.join(folder, 'body'), bytes);
		return execFileSync('sha256sum', [path.join(folder, 'body')], { encoding: 'utf8' }).split(
			' ',
		)[0];
	} catch {
		// No coreutils: the same function, from Node.js.
		return createHash('sha256').update(bytes).digest('hex');
	} finally {
		rmSync(folder, { recursive: true, force: true });
	}
}

/** Checks the page against the node for one delivery; returns the page's key (or undefined for an error). */
async function expectPageMatchesNode(page, bytes, settings) {
	const shown = await plan(page, { body: bytes, ...settings });
	const node = await nodeOutcome(bytes, settings);
	if (node.error !== undefined) {
		expect({ problem: shown.problem, key: shown.key }).toEqual({
			problem: true,
			key: 'item error',
		});
		expect(shown.explain).toContain(node.error);
		return undefined;
	}
	expect({ key: shown.key, explain: shown.explain }).toEqual({
		key: node.key,
		explain: expect.any(String),
	});
	const hash = /(?:^|:)sha256:([0-9a-f]{64})$/.exec(shown.key);
	if (hash !== null) expect(hash[1]).toBe(sha256sum(bytes));
	return shown.key;
}

describeInBrowser('key planner page in Chromium', () => {
	let browser;
	beforeAll(async () => {
		browser = await openPlanner();
	});
	afterAll(async () => {
		await browser?.close();
	});

	describe.each(SOURCES.map(({ label, ...settings }) => [label ?? settings.keySource, settings]))(
		'key source %s',
		(_source, settings) => {
			test.each(CORPUS)("%s: the page shows the node's key", async (_name, text) => {
				await expectPageMatchesNode(browser.page, Buffer.from(text, 'utf8'), settings);
			});
		},
	);

	test("a GitHub or Shopify preset's key says what the Replay Guard of the downloaded workflow keys on instead", async () => {
		const body = '{"ref":"refs/heads/main"}';
		const shown = await plan(browser.page, {
			body,
			keySource: 'github',
			headers: 'X-GitHub-Delivery: d-42',
		});
		expect(shown.key).toBe('github:d-42');
		expect(shown.explain).toContain(
			`its Replay Guard (Options) keys the delivery on the signed content instead, "sha256:${sha256sum(Buffer.from(body))}"`,
		);
		// Standard Webhooks signs its webhook-id: no such note.
		const signed = await plan(browser.page, {
			body,
			keySource: 'standardWebhooks',
			headers: 'webhook-id: msg_1',
		});
		expect(signed.explain).not.toMatch(/Replay Guard/);
	});

	test('the explanation says where the key came from, or why it fell back', async () => {
		const { page } = browser;
		let shown = await plan(page, {
			body: '{"id": 98765432101234567891}',
			keySource: 'eventIdOrBodyHash',
			eventIdPath: '{{ $json.body.id }}',
		});
		expect(shown.key).toBe('evt:98765432101234567891');
		expect(shown.explain).toMatch(
			/Event ID \{\{ \$json\.body\.id \}\}.*exact digits were read from the raw body/,
		);
		shown = await plan(page, { body: '{"type":"x"}', keySource: 'stripe' });
		expect(shown.explain).toMatch(/body\.id is missing, so the key fell back to "sha256:"/);
		shown = await plan(page, {
			body: '{}',
			keySource: 'shopify',
			headers: 'X-Shopify-Event-Id: \nX-Shopify-Webhook-Id: w1',
		});
		expect(shown.key).toBe('shopify:w1');
		expect(shown.explain).toMatch(/X-Shopify-Webhook-Id header/);
		shown = await plan(page, {
			body: '{}',
			keySource: 'github',
			headers: 'X-GitHub-Delivery: a\nX-GitHub-Delivery: b',
		});
		expect(shown.key).toBe('item error');
		expect(shown.explain).toMatch(/different values.*Hint: Make the sender/s);
		shown = await plan(page, {
			body: '{"id": 1}',
			keySource: 'eventIdOrBodyHash',
			eventIdPath: '{{ $json.body.id + 1 }}',
		});
		expect(shown.key).toBe('evaluated by n8n');
		expect(shown.explain).toMatch(/expression engine, which this page does not run/);
		shown = await plan(page, {
			body: '{"id": 1',
			keySource: 'eventIdOrBodyHash',
			eventIdPath: '{{ $json.body.id }}',
		});
		expect(shown.key).toBe('request refused by n8n');
		expect(shown.explain).toMatch(/422/);
		// XML: n8n parses it, the page does not; a header preset still works, a body field is n8n's to evaluate.
		shown = await plan(page, {
			body: '<e><id>1</id></e>',
			keySource: 'github',
			headers: 'Content-Type: application/xml\nX-GitHub-Delivery: d1',
		});
		expect(shown.key).toBe('github:d1');
		shown = await plan(page, {
			body: '<e><id>1</id></e>',
			keySource: 'stripe',
			headers: 'Content-Type: application/xml',
		});
		expect(shown.key).toBe('evaluated by n8n');
		shown = await plan(page, {
			body: 'id=5',
			keySource: 'stripe',
			headers: 'Content-Type: text/plain',
		});
		expect(shown.key).toBe(`sha256:${sha256sum(Buffer.from('id=5'))}`);
		shown = await plan(page, {
			body: 'id=5&id=6&type=x',
			keySource: 'eventIdOrBodyHash',
			eventIdPath: '{{ $json.body.type }}',
			headers: 'Content-Type: application/x-www-form-urlencoded',
		});
		expect(shown.key).toBe('evt:x');
		shown = await plan(page, {
			body: '{"id":"x"}',
			keySource: 'eventIdOrBodyHash',
			namespace: 'a:b',
		});
		expect(shown.key).toBe('item error');
		expect(shown.explain).toMatch(/contains ":"/);
	});

	test('typed text is keyed as its UTF-8 bytes; a file is keyed on its exact bytes', async () => {
		const { page } = browser;
		await plan(page, { keySource: 'bodyHash', namespace: '', headers: 'Content-Type: text/plain' });
		await page.fill('#body', 'a\r\nb é');
		await settled(page);
		// A textarea turns CRLF into LF: the key is of the text as typed, and the help says to load a file for exact bytes.
		expect(await page.textContent('#key')).toBe(`sha256:${sha256sum(Buffer.from('a\nb é'))}`);
		const exact = Buffer.from('\ufeffa\r\nb \xe9', 'latin1');
		const shown = await plan(page, {
			body: exact,
			keySource: 'bodyHash',
			headers: 'Content-Type: text/plain',
		});
		expect(shown.key).toBe(`sha256:${sha256sum(exact)}`);
		expect(await page.textContent('#bodyFileStatus')).toMatch(/exact bytes/);
	});

	test("the SQL shown is what the nodes' SQL builders return, values only in comments", async () => {
		const { page } = browser;
		const key = "evt:it's\n-- not SQL; DROP TABLE x";
		for (const mode of ['lease', 'simple']) {
			const settings = {
				mode,
				leaseSeconds: 120,
				schema: 'billing',
				table: 'stripe_events',
				retentionDays: 45,
				namespace: '',
			};
			const body = JSON.stringify({ id: key.slice(4) });
			const shown = await plan(page, { body, keySource: 'stripe', ...settings });
			expect(shown.key).toBe(key);
			const ref = tableRef('billing', 'stripe_events');
			const expected =
				mode === 'lease'
					? [
							// Lease mode records the raw-body fingerprint by default (Fingerprint: Raw Body).
							sql.createTableSql(ref, { lease: true, fingerprint: true }),
							sql.addColumnsSql(ref, ['lease', 'fingerprint']),
							sql.reserveLeaseSql(ref, { fingerprint: true }),
							sql.completeSql(ref),
							sql.releaseOwnedSql(ref),
						]
					: [
							sql.createTableSql(ref, { lease: false }),
							sql.reserveWithFirstSeenSql(ref),
							sql.releaseSql(ref),
						];
			expected.push(
				sql.purgeCutoffSql(),
				sql.keySelectionDeleteSql(ref, sql.purgeKeysSelection({ lease: mode === 'lease' })),
			);
			for (const statement of expected) expect(shown.sql).toContain(statement);
			if (mode === 'simple') {
				expect(shown.sql).not.toContain(sql.reserveLeaseSql(ref));
				// Simple mode records no fingerprint by default: the two-column table is all it needs.
				expect(shown.sql).not.toContain('fingerprint');
			}
			// Bind parameters as the node sends them, the values as JSON in `--` comments (no line break can end one).
			expect(shown.sql).toContain(`-- $1 (text[]) = ${JSON.stringify([key])}`);
			expect(shown.sql).toContain('-- $1 (interval) = "45 days"');
			if (mode === 'lease') expect(shown.sql).toContain('-- $3 (float8) = 120');
			const outsideComments = shown.sql
				.split('\n')
				.filter((line) => !line.startsWith('--'))
				.join('\n');
			expect(outsideComments).not.toContain('DROP TABLE x');
			expect(outsideComments).not.toContain('45 days');
		}
		const refused = await plan(page, { schema: 'public; drop', table: 'processed_events' });
		expect(refused.sql).toMatch(
			/^-- The node refuses these settings before any SQL runs: The schema name "public; drop" may only contain letters, digits and _/,
		);
		expect(await page.isDisabled('#downloadWorkflow')).toBe(true);
		await plan(page, {
			schema: 'public',
			table: 'processed_events',
			mode: 'lease',
			leaseSeconds: 300,
			retentionDays: 30,
		});
	});

	test('the downloaded workflow is the template with these settings, and its Reserve node derives the key the page showed', async () => {
		const { page } = browser;
		for (const mode of ['lease', 'simple']) {
			const settings = {
				keySource: 'custom',
				eventIdPath: '{{ $json.body.data.object.id }}',
				namespace: 'shop-eu',
				mode,
				leaseSeconds: 90,
				schema: 'hooks',
				table: 'seen',
			};
			const body = Buffer.from('{"data":{"object":{"id":98765432101234567891}}}');
			const shown = await plan(page, { body, ...settings });
			expect(shown.key).toBe('shop-eu:98765432101234567891');
			const [download] = await Promise.all([
				page.waitForEvent('download'),
				page.click('#downloadWorkflow'),
			]);
			expect(download.suggestedFilename()).toBe('idempotent-webhook.json');
			const workflow = JSON.parse(readFileSync(await download.path(), 'utf8'));
			const reserve = workflow.nodes.find(
				(node) => node.type === 'n8n-nodes-idempotency.idempotencyReserve',
			);
			expect(reserve.parameters).toMatchObject({
				keySource: 'custom',
				customKey: '={{ $json.body.data.object.id }}',
				namespace: 'shop-eu',
				schema: 'hooks',
				table: 'seen',
				mode,
			});
			expect(reserve.parameters.eventId).toBeUndefined();
			if (mode === 'lease') expect(reserve.parameters.leaseSeconds).toBe(90);
			// The Fingerprint the page shows: the node's default for the mode.
			expect(reserve.parameters.fingerprint).toBe(mode === 'lease' ? 'rawBody' : 'none');
			const keyTableNodes = workflow.nodes.filter((n) =>
				n.type.startsWith('n8n-nodes-idempotency.'),
			);
			expect(keyTableNodes.length).toBe(mode === 'lease' ? 3 : 2);
			for (const node of keyTableNodes)
				expect([node.parameters.schema, node.parameters.table]).toEqual(['hooks', 'seen']);
			// A custom key names no sender: Reserve's signature check stays as the template has it.
			const templateReserve = template.nodes.find((node) => node.type === reserve.type);
			expect([reserve.parameters.signature, reserve.parameters.toleranceSeconds]).toEqual([
				templateReserve.parameters.signature,
				templateReserve.parameters.toleranceSeconds,
			]);
			// Reserve's outputs in the file are the ones the node has in this mode.
			// Reserve 2.3 answers duplicates, in flight and invalid signatures itself: no node there.
			expect(
				workflow.connections[reserve.name].main.map((targets) => targets.map((t) => t.node)),
			).toEqual(mode === 'lease' ? [[BUSINESS_STEP], [], [], []] : [[BUSINESS_STEP], [], []]);
			// Every connection points at a node that exists; every path still ends in an answer.
			const names = new Set(workflow.nodes.map((node) => node.name));
			for (const [from, { main }] of Object.entries(workflow.connections)) {
				expect(names.has(from)).toBe(true);
				for (const connection of main.flat()) expect(names.has(connection.node)).toBe(true);
			}
			const leaves = workflow.nodes.filter(
				(node) =>
					node.type !== 'n8n-nodes-base.stickyNote' &&
					!(workflow.connections[node.name]?.main ?? []).some((output) => output.length > 0),
			);
			// A Respond node, or Complete Key answering itself (lease mode, as in the template).
			const answers = (node) =>
				node.type === 'n8n-nodes-base.respondToWebhook' ||
				(node.type === 'n8n-nodes-idempotency.idempotencyComplete' &&
					node.parameters.respondToWebhook === true);
			// A Stop and Error node ends a path that answered before it (the 500 of an item error).
			const answeredBefore = (name) => {
				const from = Object.entries(workflow.connections)
					.filter(([, { main }]) => main.flat().some((c) => c.node === name))
					.map(([source]) => workflow.nodes.find((node) => node.name === source));
				return (
					from.length > 0 &&
					from.every(
						(node) => answers(node) || (node.name !== reserve.name && answeredBefore(node.name)),
					)
				);
			};
			for (const leaf of leaves)
				expect([
					leaf.name,
					answers(leaf) ||
						(leaf.type === 'n8n-nodes-base.stopAndError' && answeredBefore(leaf.name)),
				]).toEqual([leaf.name, true]);
			const types = workflow.nodes.map((node) => node.type);
			if (mode === 'simple') {
				expect(types).not.toContain('n8n-nodes-idempotency.idempotencyComplete');
				expect(names.has('Respond 409 in flight')).toBe(false);
				// Simple mode has no lease to complete: a Respond node gives Complete Key's answer.
				const complete = template.nodes.find((node) => node.name === 'Complete Key');
				const respond = workflow.nodes.find((node) => node.name === 'Respond 200');
				expect(respond.type).toBe('n8n-nodes-base.respondToWebhook');
				expect(respond.parameters.responseBody).toBe(complete.parameters.responseBody);
				expect(respond.parameters.options.responseCode).toBe(200);
				expect(workflow.connections[BUSINESS_STEP].main[0]).toEqual([
					{ node: 'Respond 200', type: 'main', index: 0 },
				]);
			} else {
				expect(workflow.nodes.length).toBe(template.nodes.length);
			}
			expect(JSON.stringify(workflow)).not.toMatch(/"id":\s*"\d+"/);
			// The downloaded Reserve node, run by n8n's engine on the same bytes (signed, as it checks
			// Stripe's signature), reserves the key the page showed.
			await db.query('CREATE SCHEMA IF NOT EXISTS hooks');
			const stripeHeader = (
				await PROVIDERS.stripe.sign(body.toString('utf8'), { secret: PROVIDERS.stripe.secret })
			)['stripe-signature'];
			const run = await runWorkflow(
				{
					...reserveWorkflow,
					nodes: [
						{
							...reserveWorkflow.nodes[0],
							typeVersion: reserve.typeVersion,
							parameters: reserve.parameters,
							credentials: {
								...reserveWorkflow.nodes[0].credentials,
								webhookSigningSecretApi: { id: '2', name: 'Webhook Signing Secret' },
							},
						},
					],
				},
				[n8nWebhookItem(body, `Stripe-Signature: ${stripeHeader}`)],
				{
					credentials: db.credential(),
					credentialsByType: { webhookSigningSecretApi: { secret: PROVIDERS.stripe.secret } },
				},
			);
			expect(run.error).toBeUndefined();
			// New in lease mode; the simple-mode round sends the same bytes, so there it is a duplicate.
			expect(
				[...run.output('Idempotency Reserve', 0), ...run.output('Idempotency Reserve', 1)].map(
					(item) => item.json.idempotency.key,
				),
			).toEqual([shown.key]);
		}
	});

	test("a preset that names a sender also sets Reserve's signature check to that sender", async () => {
		const { page } = browser;
		for (const [keySource, provider] of [
			['github', 'github'],
			['svix', 'svix'],
			['slack', 'slack'],
			['stripe', 'stripe'],
			['bodyHash', 'stripe'],
		]) {
			await plan(page, {
				body: Buffer.from('{"id":"evt_1","event_id":"Ev1"}'),
				keySource,
				schema: 'public',
				table: 'processed_events',
				mode: 'lease',
				leaseSeconds: 300,
			});
			const [download] = await Promise.all([
				page.waitForEvent('download'),
				page.click('#downloadWorkflow'),
			]);
			const workflow = JSON.parse(readFileSync(await download.path(), 'utf8'));
			expect([
				keySource,
				workflow.nodes.find((node) => node.type === 'n8n-nodes-idempotency.idempotencyReserve')
					.parameters.signature,
			]).toEqual([keySource, provider]);
		}
	});

	test("fields: every key source with the node's values and labels, a label for every field, Event ID only where the source reads it", async () => {
		const { page } = browser;
		const options = await page.$$eval('#keySource option', (list) =>
			list.map((o) => ({ value: o.value, name: o.textContent })),
		);
		expect(options.sort((a, b) => a.value.localeCompare(b.value))).toEqual(
			KEY_SOURCES.map(({ value, name }) => ({ value, name })).sort((a, b) =>
				a.value.localeCompare(b.value),
			),
		);
		const unlabelled = await page.$$eval('input, select, textarea', (list) =>
			list
				.filter((field) => document.querySelector(`label[for="${field.id}"]`) === null)
				.map((field) => field.id || field.outerHTML),
		);
		expect(unlabelled).toEqual([]);
		for (const id of [
			'body',
			'bodyFile',
			'headers',
			'keySource',
			'eventIdPath',
			'namespace',
			'schema',
			'table',
			'retentionDays',
			'mode',
			'key',
			'keyExplain',
			'sql',
			'downloadWorkflow',
		]) {
			expect(await page.$(`#${id}`)).not.toBeNull();
		}
		expect(await page.getAttribute('#keyResult', 'aria-live')).toBe('polite');
		expect(
			await page.$eval('#keyResult', (region) =>
				['key', 'keyExplain'].every((id) => region.contains(document.getElementById(id))),
			),
		).toBe(true);
		await plan(page, { keySource: 'github' });
		expect(await page.isVisible('#eventIdPath')).toBe(false);
		await plan(page, { keySource: 'custom' });
		expect(await page.textContent('label[for="eventIdPath"]')).toBe('Custom Key');
		await plan(page, {
			keySource: 'eventIdOrBodyHash',
			eventIdPath: '{{ $json.body.id }}',
			mode: 'simple',
		});
		expect(await page.isVisible('#leaseSeconds')).toBe(false);
		await plan(page, { mode: 'lease' });
		expect(await page.isVisible('#leaseSeconds')).toBe(true);
	});

	test('keyboard: Tab reaches every field and the download button in order, Enter on the button downloads', async () => {
		const { page } = browser;
		await page.focus('#body');
		const reached = ['body'];
		for (let i = 0; i < 16; i++) {
			await page.keyboard.press('Tab');
			reached.push(await page.evaluate(() => document.activeElement.id));
		}
		for (const id of [
			'headers',
			'keySource',
			'eventIdPath',
			'namespace',
			'mode',
			'leaseSeconds',
			'schema',
			'table',
			'retentionDays',
			'sql',
			'downloadWorkflow',
		]) {
			expect(reached).toContain(id);
		}
		await page.focus('#downloadWorkflow');
		const [download] = await Promise.all([
			page.waitForEvent('download'),
			page.keyboard.press('Enter'),
		]);
		expect(download.suggestedFilename()).toBe('idempotent-webhook.json');
	});

	test('readable at 375 px and 1280 px (screenshots in test-output/planner/)', async () => {
		const { page } = browser;
		mkdirSync(SCREENSHOTS, { recursive: true });
		await plan(page, {
			body: '{"id": 98765432101234567891, "type": "invoice.paid"}',
			headers: 'Content-Type: application/json',
			keySource: 'stripe',
			namespace: '',
			mode: 'lease',
			leaseSeconds: 300,
			schema: 'public',
			table: 'processed_events',
			retentionDays: 30,
		});
		for (const width of [375, 1280]) {
			await page.setViewportSize({ width, height: width === 375 ? 800 : 1000 });
			// Nothing wider than the screen: no sideways scrolling of the page itself.
			expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
				width,
			);
			const fontSize = await page.$eval('#keyExplain', (el) =>
				parseFloat(getComputedStyle(el).fontSize),
			);
			expect(fontSize).toBeGreaterThanOrEqual(14);
			await page.screenshot({
				path: path.join(SCREENSHOTS, `planner-${width}.png`),
				fullPage: width === 375,
			});
		}
	});

	describe("issue 15's properties, against the page", () => {
		const numberToken = fc.oneof(
			fc.maxSafeInteger().map(String),
			fc.bigInt({ min: -(10n ** 25n), max: 10n ** 25n }).map(String),
			fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
			fc.constantFrom(
				'1e21',
				'1000000000000000000000',
				'98765432101234567891',
				'98765432101234567892',
				'-0',
				'12345.0',
			),
		);
		const textId = fc.oneof(
			fc.stringMatching(/^[A-Za-z0-9_:.-]{1,16}$/),
			fc.string({ minLength: 1, maxLength: 4 }),
			fc.constantFrom('évé', 'evt:x', ' a '),
		);
		// Small pools too, so that one batch often holds the same event twice in other bytes, and look-alikes.
		const idToken = fc.oneof(
			textId.map((t) => JSON.stringify(t)),
			numberToken,
			fc.constantFrom(
				'"evt_1"',
				'12345',
				'"12345"',
				'98765432101234567891',
				'98765432101234567892',
				'1e21',
				'1000000000000000000000',
				'"1e21"',
			),
		);
		const event = fc
			.record({
				id: fc.option(idToken, { nil: undefined }),
				pad: fc.constantFrom('', ' ', '\r\n', '\t'),
				bom: fc.boolean(),
				header: fc.option(
					fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/), fc.constantFrom('d1', 'd2')),
					{ nil: undefined },
				),
			})
			.map(({ id, pad, bom, header }) => ({
				raw: `${bom ? '\ufeff' : ''}{${pad}"type":"t"${id === undefined ? '' : `,${pad}"id":${pad}${id}`}${pad}}`,
				headers: header === undefined ? '' : `X-GitHub-Delivery: ${header}\nwebhook-id: ${header}`,
				// What the event is, independently of any key: a text id is its text, a number the digits the sender wrote.
				id: id === undefined ? undefined : id.startsWith('"') ? JSON.parse(id) : id,
				header,
			}));
		const settings = fc
			.record({
				keySource: fc.constantFrom(
					'eventIdOrBodyHash',
					'stripe',
					'github',
					'standardWebhooks',
					'bodyHash',
					'custom',
				),
				namespace: fc.constantFrom('', 'a', 'tenant 1', 'a:b', 'evt'),
			})
			.map((s) => ({
				...s,
				eventIdPath: '{{ $json.body.id }}',
				...(s.keySource === 'custom' && s.namespace === '' ? { namespace: 'c' } : {}),
			}));

		/** The event's identity under a key source (README, Keys): its id, its header, else its exact bytes. */
		function identity(keySource, e) {
			if (keySource === 'bodyHash') return `bytes:${e.raw}`;
			if (keySource === 'github' || keySource === 'standardWebhooks')
				return e.header === undefined ? `bytes:${e.raw}` : `header:${e.header}`;
			return e.id === undefined ? `bytes:${e.raw}` : `id:${e.id}`;
		}

		test("the page's key is the node's for generated events; the same bytes the same key; two keys are equal exactly when the events are one", async () => {
			const { page } = browser;
			await fc.assert(
				fc.asyncProperty(
					settings,
					fc.array(event, { minLength: 2, maxLength: 5 }),
					async (setting, events) => {
						const keys = [];
						for (const { raw, headers } of events) {
							keys.push(
								await expectPageMatchesNode(page, Buffer.from(raw, 'utf8'), {
									...setting,
									headers,
								}),
							);
						}
						// The same bytes again: the same key (or the same item error).
						const again = await plan(page, {
							body: Buffer.from(events[0].raw, 'utf8'),
							...setting,
							headers: events[0].headers,
						});
						expect(again.key).toBe(keys[0] ?? 'item error');
						for (let i = 0; i < events.length; i++) {
							for (let j = i + 1; j < events.length; j++) {
								if (keys[i] === undefined || keys[j] === undefined) continue;
								const sameEvent =
									identity(setting.keySource, events[i]) === identity(setting.keySource, events[j]);
								expect({
									pair: [events[i].raw, events[j].raw],
									sameKey: keys[i] === keys[j],
								}).toEqual({ pair: [events[i].raw, events[j].raw], sameKey: sameEvent });
							}
						}
					},
				),
				{ numRuns: Number(process.env.PLANNER_PROPERTY_RUNS ?? 15) },
			);
		}, 600_000);
	});

	test('served by npm run planner -- --serve, the page works over http://127.0.0.1 too (crypto.subtle included) and loads nothing else', async () => {
		const { child: server, url } = await servePlanner();
		const served = await openPlanner();
		try {
			await served.page.goto(url);
			const bytes = Buffer.from('{"type":"no id"}\r\n');
			const shown = await plan(served.page, {
				body: bytes,
				keySource: 'eventIdOrBodyHash',
				eventIdPath: '{{ $json.body.id }}',
			});
			expect(shown.key).toBe(`sha256:${sha256sum(bytes)}`);
			expect(served.requests).toEqual([PAGE_URL, url]);
			expect(served.problems).toEqual([]);
		} finally {
			await served.close();
			server.kill('SIGTERM');
		}
	});

	test('the page made no request at all: only its own file:// load; no console errors', async () => {
		expect(browser.requests).toEqual([PAGE_URL]);
		expect(browser.problems).toEqual([]);
	});
});

describeInBrowser('key planner page: Content-Security-Policy', () => {
	test('forbids every request: script and style allowed only by their build-time hashes', async () => {
		const html = readFileSync(PAGE_FILE, 'utf8');
		const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)[1];
		const directives = Object.fromEntries(
			csp
				.split(';')
				.map((d) => d.trim().split(/\s+/))
				.map(([name, ...values]) => [name, values]),
		);
		expect(directives['default-src']).toEqual(["'none'"]);
		expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
		const script = /<script>([\s\S]*)<\/script>/.exec(html)[1];
		const style = /<style>([\s\S]*?)<\/style>/.exec(html)[1];
		const hash = (text) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
		expect(directives['script-src']).toEqual([hash(script)]);
		expect(directives['style-src']).toEqual([hash(style)]);
		// One file: nothing loaded from elsewhere.
		expect(html).not.toMatch(/<(?:script|link|img|iframe)[^>]+(?:src|href)=/i);
	});

	test('in Chromium, a fetch and an image are blocked before any connection is made', async () => {
		// A listener that would see any connection the page managed to open.
		const connections = [];
		const server = net.createServer((socket) => {
			connections.push(socket.remoteAddress);
			socket.destroy();
		});
		await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
		const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
		const target = `http://127.0.0.1:${port}`;
		const browser = await openPlanner();
		try {
			const result = await browser.page.evaluate(async (base) => {
				const seen = [];
				document.addEventListener('securitypolicyviolation', (event) =>
					seen.push(event.violatedDirective),
				);
				const fetched = await fetch(`${base}/leak?body=1`).then(
					() => 'sent',
					() => 'blocked',
				);
				const image = new Image();
				image.src = `${base}/leak.png`;
				document.body.append(image);
				await new Promise((resolve) => window.setTimeout(resolve, 500));
				return { fetched, seen };
			}, target);
			expect(result.fetched).toBe('blocked');
			expect(result.seen).toEqual(expect.arrayContaining(['connect-src', 'img-src']));
			// Chromium reports the attempts as requests that failed on the policy, and none reached the listener.
			for (const url of browser.requests.filter((u) => u !== PAGE_URL)) {
				expect(browser.failed).toContainEqual({ url, failure: expect.stringMatching(/csp/i) });
			}
			expect(connections).toEqual([]);
		} finally {
			await browser.close();
			server.close();
		}
	});
});
