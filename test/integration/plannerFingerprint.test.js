// The key planner's fingerprint, its Idempotency-Key header source and its API template download, in
// a real headless Chromium against the real Idempotency Reserve node (n8n-core's WorkflowExecute,
// real PostgreSQL): for the same bytes and settings, the page's #fingerprint is what the node stores
// in the key table's fingerprint column, its header key is the node's key (or the node's item
// error), and the downloaded API workflow is workflows/idempotent-api.json with the page's settings.
const { describe, test, expect, beforeAll, afterAll } = require('@jest/globals');
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');

const { useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const {
	chromiumAvailable,
	CHROMIUM,
	PAGE_URL,
	openPlanner,
	plan,
	n8nWebhookItem,
} = require('../support/planner');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');
const apiTemplate = require('../../workflows/idempotent-api.json');
const { canonicalJson } = require('../../dist/nodes/shared/keys/fingerprint');

if (!chromiumAvailable) {
	console.warn(
		`Key planner fingerprint tests SKIPPED: no Chromium at ${CHROMIUM}. Install it with: apt-get update && apt-get install -y chromium`,
	);
}
const describeInBrowser = chromiumAvailable ? describe : describe.skip;

const RESERVE_TYPE = 'n8n-nodes-idempotency.idempotencyReserve';

const db = useTestDatabase();

/** An item as n8n's Webhook node makes it with JWT Auth on: the verified token's payload beside the request. */
const withJwtPayload = (item, jwtPayload) => ({ ...item, json: { ...item.json, jwtPayload } });

const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex');

// ---- the corpus: exact bytes, loaded through #bodyFile ------------------------------------------

const CORPUS = [
	['plain JSON', Buffer.from('{"id":"evt_1","order":{"sku":"A-1","qty":2},"amount":500}')],
	[
		'CRLF line endings',
		Buffer.from('{\r\n  "order": {"qty": 2, "sku": "A-1"},\r\n  "amount": 500\r\n}\r\n'),
	],
	['a UTF-8 byte order mark', Buffer.from('\ufeff{"order":{"sku":"bom"},"amount":1}')],
	['non-ASCII UTF-8', Buffer.from('{"order":{"sku":"東京-🎉","note":"Grüße"},"amount":3}')],
	// Not UTF-8: the bytes are hashed as they are; n8n (and the page) read the text with U+FFFD.
	[
		'non-UTF-8 bytes (Latin-1)',
		Buffer.concat([Buffer.from('{"order":{"sku":"caf'), Buffer.from([0xe9]), Buffer.from('"}}')]),
	],
	['a number beyond 2^53', Buffer.from('{"order":{"id":98765432101234567891,"qty":1.50E+3}}')],
	[
		'keys in another order',
		Buffer.from('{"amount":500,"order":{"qty":2,"sku":"A-1"},"id":"evt_1"}'),
	],
	['an order that is text', Buffer.from('{"order":"just text"}')],
	['an order that is null', Buffer.from('{"order":null,"amount":1}')],
	['no order', Buffer.from('{"amount":1}')],
	['an empty body', Buffer.alloc(0)],
];

/** The Fingerprint settings tried on every body (the page's field ids, with the node's values). */
const VARIANTS = [
	{ label: 'lease, default (raw body)', mode: 'lease' },
	{ label: 'simple, default (none)', mode: 'simple' },
	{ label: 'simple, raw body', mode: 'simple', fingerprintSource: 'rawBody' },
	{
		label: 'lease, expression {{ $json.body }}',
		mode: 'lease',
		fingerprintSource: 'expression',
		fingerprintExpression: '{{ $json.body }}',
	},
	{
		label: 'lease, expression {{ $json.body.order }}',
		mode: 'lease',
		fingerprintSource: 'expression',
		fingerprintExpression: '={{ $json.body.order }}',
	},
	{ label: 'lease, none', mode: 'lease', fingerprintSource: 'none' },
];

/**
 * The node parameters for the page's fingerprint fields, unset where the page leaves the default.
 * @param {{ fingerprintSource?: string, fingerprintExpression?: string }} settings
 */
function fingerprintParameters({ fingerprintSource, fingerprintExpression }) {
	const parameters = {};
	if (fingerprintSource !== undefined) parameters.fingerprint = fingerprintSource;
	if (fingerprintExpression !== undefined)
		parameters.fingerprintExpression = fingerprintExpression.startsWith('=')
			? fingerprintExpression
			: `=${fingerprintExpression}`;
	return parameters;
}

/** Runs Reserve through n8n's engine; returns the item's key or error and the fingerprint column of its row. */
async function nodeRecords(bytes, headers, parameters) {
	const table = parameters.mode === 'lease' ? 'fp_lease' : 'fp_simple';
	const run = await runWorkflow(reserveWorkflow, [n8nWebhookItem(bytes, headers)], {
		credentials: db.credential(),
		nodeOverrides: {
			'Idempotency Reserve': {
				parameters: { leaseSeconds: 60, table, ...parameters },
				onError: 'continueErrorOutput',
			},
		},
	});
	expect(run.error).toBeUndefined();
	const [item] = [0, 1, 2].flatMap((output) => run.output('Idempotency Reserve', output));
	if (item.json.error !== undefined) return { error: item.json.error };
	const { key, isNew } = item.json.idempotency;
	const { rows } = await db.query(
		`SELECT to_jsonb(t) ->> 'fingerprint' AS fingerprint FROM public.${table} t WHERE key = $1`,
		[key],
	);
	return { key, isNew, fingerprint: rows[0].fingerprint };
}

describeInBrowser('key planner page: fingerprint, Idempotency-Key header, API template', () => {
	let browser;
	beforeAll(async () => {
		browser = await openPlanner();
	});
	afterAll(async () => {
		await browser?.close();
	});

	describe.each(CORPUS.map(([name, bytes], index) => ({ name, bytes, index })))(
		'$name',
		({ bytes, index }) => {
			test.each(VARIANTS.map((variant, v) => ({ ...variant, variant, v })))(
				"$label: the page's #fingerprint is the one the node stores with the key",
				async ({ variant, v }) => {
					// A namespace per case: every key is new, so its row holds this run's fingerprint.
					const namespace = `c${index}v${v}`;
					// The page keeps a field as it was, so the mode's default is picked as a person would
					// (that a mode change resets it to that default is tested below); the node gets no
					// Fingerprint parameter then, so its own default applies.
					const source =
						variant.fingerprintSource ?? (variant.mode === 'lease' ? 'rawBody' : 'none');
					const shown = await plan(browser.page, {
						body: bytes,
						keySource: 'bodyHash',
						namespace,
						mode: variant.mode,
						fingerprintSource: source,
						fingerprintExpression: variant.fingerprintExpression,
					});
					const node = await nodeRecords(bytes, '', {
						keySource: 'bodyHash',
						namespace,
						mode: variant.mode,
						...fingerprintParameters(variant),
					});
					if (node.error !== undefined) {
						// Fingerprint Fields with nothing in them: the node's item error (invalid-fingerprint,
						// 400), never a key reserved without a fingerprint; the page says the same.
						expect(node.error).toMatch(/^The Fingerprint Fields are /);
						expect(source).toBe('expression');
						expect([shown.key, shown.problem, shown.fingerprint]).toEqual([
							'item error',
							true,
							'—',
						]);
						expect(shown.explain).toContain(node.error);
						return;
					}
					expect(node.isNew).toBe(true);
					expect(shown.key).toBe(node.key);
					expect({ fingerprint: shown.fingerprint, explain: shown.fingerprintExplain }).toEqual({
						fingerprint: node.fingerprint ?? 'none',
						explain: expect.any(String),
					});
					// What the rule is, independently of both: the raw bytes, or none.
					if (source === 'rawBody') expect(node.fingerprint).toBe(sha256(bytes));
					if (source === 'none') expect(node.fingerprint).toBeNull();
				},
			);
		},
	);

	test('the expression fingerprint hashes canonical JSON: the same fields in another order give the same fingerprint, the raw body does not', async () => {
		const { page } = browser;
		const expression = {
			fingerprintSource: 'expression',
			fingerprintExpression: '{{ $json.body }}',
		};
		const a = await plan(page, { body: CORPUS[0][1], mode: 'lease', ...expression });
		const b = await plan(page, { body: CORPUS[6][1], mode: 'lease', ...expression });
		expect(a.fingerprint).toMatch(/^[0-9a-f]{64}$/);
		expect(b.fingerprint).toBe(a.fingerprint);
		expect(a.fingerprint).toBe(sha256(canonicalJson(JSON.parse(CORPUS[0][1].toString()))));
		expect(a.fingerprintExplain).toMatch(/canonical JSON/);
		const rawA = await plan(page, {
			body: CORPUS[0][1],
			mode: 'lease',
			fingerprintSource: 'rawBody',
		});
		const rawB = await plan(page, {
			body: CORPUS[6][1],
			mode: 'lease',
			fingerprintSource: 'rawBody',
		});
		expect(rawA.fingerprint).not.toBe(rawB.fingerprint);
	});

	test('Fingerprint defaults per mode as in the node; Fingerprint Fields only for Expression; other expressions are left to n8n', async () => {
		const { page } = browser;
		const options = await page.$$eval('#fingerprintSource option', (list) =>
			list.map((o) => o.value),
		);
		expect(options).toEqual(['rawBody', 'expression', 'none']);
		await plan(page, { body: CORPUS[0][1], mode: 'simple' });
		expect(await page.inputValue('#fingerprintSource')).toBe('none');
		expect(await page.textContent('#fingerprint')).toBe('none');
		await plan(page, { mode: 'lease' });
		expect(await page.inputValue('#fingerprintSource')).toBe('rawBody');
		expect(await page.isVisible('#fingerprintExpression')).toBe(false);
		const shown = await plan(page, {
			fingerprintSource: 'expression',
			fingerprintExpression: '{{ $json.body.order.sku.toUpperCase() }}',
		});
		expect(await page.isVisible('#fingerprintExpression')).toBe(true);
		expect(shown.fingerprint).toBe('evaluated by n8n');
		expect(shown.fingerprintExplain).toMatch(/expression engine, which this page does not run/);
		// The SQL follows the choice: Reserve sends the fingerprints as $4 in lease mode.
		const raw = await plan(page, { fingerprintSource: 'rawBody' });
		expect(raw.sql).toContain(`-- $4 (text[]) = ${JSON.stringify([raw.fingerprint])}`);
		const none = await plan(page, { fingerprintSource: 'none' });
		expect(none.sql).not.toContain('-- $4 (text[])');
		// A key the node refuses: no key, so nothing is recorded.
		const refused = await plan(page, { keySource: 'idempotencyKeyHeader', headers: '' });
		expect(refused.key).toBe('item error');
		expect(refused.fingerprintExplain).toMatch(/no fingerprint/);
		await plan(page, { keySource: 'eventIdOrBodyHash', fingerprintSource: 'rawBody' });
	});

	describe('the Idempotency-Key header source', () => {
		const CASES = [
			["the draft's quoted form", 'Idempotency-Key: "abc"', ''],
			['the quoted form, scoped by a namespace', 'Idempotency-Key: "abc"', 'client-a'],
			['the bare token', 'Idempotency-Key: 8e03978e-40d5-43e8-bc93-6894a57f9324', ''],
			['escapes in the quoted form', 'idempotency-key:  "with \\"quote\\" and \\\\" ', 'x'],
			['the same value twice', 'Idempotency-Key: "same"\nIdempotency-Key: "same"', ''],
			['no header', 'Content-Type: application/json', ''],
			['an empty key', 'Idempotency-Key: ""', ''],
			['an overlong key', `Idempotency-Key: "${'k'.repeat(256)}"`, ''],
			['two different values', 'Idempotency-Key: "a"\nIdempotency-Key: "b"', ''],
			['an unclosed quote', 'Idempotency-Key: "not closed', ''],
			['a bare key with a space', 'Idempotency-Key: two words', ''],
		];
		test.each(CASES)(
			"%s: the page shows the node's key or its item error",
			async (_name, headers, namespace) => {
				const bytes = Buffer.from('{"order":{"sku":"A-1"}}');
				const shown = await plan(browser.page, {
					body: bytes,
					keySource: 'idempotencyKeyHeader',
					headers,
					namespace,
					mode: 'simple',
				});
				const node = await nodeRecords(bytes, headers, {
					keySource: 'idempotencyKeyHeader',
					namespace,
					mode: 'simple',
				});
				if (node.error !== undefined) {
					expect({ key: shown.key, problem: shown.problem }).toEqual({
						key: 'item error',
						problem: true,
					});
					expect(shown.explain).toContain(node.error);
					expect(shown.explain).toMatch(/Hint: /);
				} else {
					expect(shown.key).toBe(node.key);
					expect(shown.key).toMatch(/(^|:)idk:/);
				}
			},
		);

		test('Idempotency-Key: "abc" gives idk:abc, with the namespace in front', async () => {
			const { page } = browser;
			let shown = await plan(page, {
				keySource: 'idempotencyKeyHeader',
				headers: 'Idempotency-Key: "abc"',
				namespace: '',
			});
			expect(shown.key).toBe('idk:abc');
			shown = await plan(page, {
				keySource: 'idempotencyKeyHeader',
				headers: 'Idempotency-Key: "abc"',
				namespace: 'tenant-7',
			});
			expect(shown.key).toBe('tenant-7:idk:abc');
			expect(shown.explain).toMatch(/Idempotency-Key header/);
		});
	});

	test("the API download is idempotent-api.json with the page's settings: nodes and connections otherwise unchanged, and its Reserve node records the page's key and fingerprint", async () => {
		const { page } = browser;
		await db.query('CREATE SCHEMA IF NOT EXISTS api_keys');
		const body = Buffer.from('{"order":{"sku":"A-1","qty":2}}\r\n');
		const cases = [
			{ namespace: '', fingerprintSource: 'rawBody', mode: 'lease' },
			{
				namespace: 'shop-eu',
				fingerprintSource: 'expression',
				fingerprintExpression: '{{ $json.body.order }}',
				mode: 'lease',
			},
			// The page in simple mode: the API template stays in lease mode (it stores the first answer).
			{ namespace: 'shop-us', fingerprintSource: 'none', mode: 'simple' },
		];
		for (const [i, settings] of cases.entries()) {
			const headers = `Idempotency-Key: "order-${i}"\nAuthorization: Bearer client-${i}`;
			const shown = await plan(page, {
				body,
				headers,
				keySource: 'bodyHash',
				leaseSeconds: 45,
				schema: 'api_keys',
				table: 'orders_keys',
				...settings,
			});
			const [download] = await Promise.all([
				page.waitForEvent('download'),
				page.click('#downloadApiWorkflow'),
			]);
			expect(download.suggestedFilename()).toBe('idempotent-api.json');
			expect(await page.textContent('#downloadApiStatus')).toBe('Saved as idempotent-api.json.');
			const workflow = JSON.parse(readFileSync(await download.path(), 'utf8'));
			// Exactly the template but for these parameters.
			const expected = JSON.parse(JSON.stringify(apiTemplate));
			for (const node of expected.nodes) {
				if (node.type === RESERVE_TYPE) {
					node.parameters = {
						...node.parameters,
						leaseSeconds: 45,
						fingerprint: settings.fingerprintSource,
						...(settings.fingerprintExpression
							? { fingerprintExpression: `=${settings.fingerprintExpression}` }
							: {}),
						...(settings.namespace === '' ? {} : { namespace: settings.namespace }),
						schema: 'api_keys',
						table: 'orders_keys',
					};
				} else if (node.type.startsWith('n8n-nodes-idempotency.')) {
					node.parameters = { ...node.parameters, schema: 'api_keys', table: 'orders_keys' };
				}
			}
			if (settings.fingerprintSource === 'none') {
				// Nothing can be a reused key without a fingerprint: Reserve has no such output, and its
				// 422 branch goes with it (the error output moves up one).
				const reserveOutputs = expected.connections['Idempotency Reserve'].main;
				const reused = reserveOutputs.findIndex((branch) => branch[0]?.node === 'Respond 422');
				expect(reused).toBe(3);
				reserveOutputs.splice(reused, 1);
				expected.nodes = expected.nodes.filter((node) => node.name !== 'Respond 422');
			}
			expect(workflow).toEqual(expected);
			const reserve = workflow.nodes.find((node) => node.type === RESERVE_TYPE);
			expect(reserve.parameters).toMatchObject({
				mode: 'lease',
				keySource: 'idempotencyKeyHeader',
			});
			if (settings.namespace === '')
				expect(reserve.parameters.namespace).toBe(
					apiTemplate.nodes.find((node) => node.type === RESERVE_TYPE).parameters.namespace,
				);
			// The downloaded Reserve node, run by n8n's engine: the page (set to the header source with
			// the same namespace) shows the key it reserves and the fingerprint it records.
			const run = await runWorkflow(
				{
					...reserveWorkflow,
					nodes: [{ ...reserveWorkflow.nodes[0], parameters: reserve.parameters }],
				},
				// The template's Webhook node checks a JWT and hands on its payload: the caller's scope.
				[withJwtPayload(n8nWebhookItem(body, headers), { sub: 'client-7' })],
				{ credentials: db.credential() },
			);
			expect(run.error).toBeUndefined();
			const [item] = run.output('Idempotency Reserve', 0);
			expect(item.json.idempotency.isNew).toBe(true);
			const { rows } = await db.query(
				'SELECT fingerprint FROM api_keys.orders_keys WHERE key = $1',
				[item.json.idempotency.key],
			);
			if (settings.namespace !== '') {
				const asNode = await plan(page, {
					keySource: 'idempotencyKeyHeader',
					headers,
					...settings,
				});
				expect(asNode.key).toBe(item.json.idempotency.key);
				expect(asNode.fingerprint).toBe(rows[0].fingerprint ?? 'none');
			} else {
				// The template's per-caller scope is an n8n expression: the token's subject, then the client's key.
				expect(item.json.idempotency.key).toBe('orders-client-7:idk:order-0');
				expect(rows[0].fingerprint).toBe(shown.fingerprint);
			}
		}
	});

	test('the page made no request at all: only its own file:// load; no console errors', async () => {
		expect(browser.requests).toEqual([PAGE_URL]);
		expect(browser.problems).toEqual([]);
	});
});
