// The key planner's "Download (built-in nodes only)" button in a real headless Chromium: the file is
// the workflow planner/builtIn/builtIn.ts builds for the page's settings (the one `npm run planner --
// --built-in` prints, and test/e2e/builtin.e2e.mjs runs in a real n8n), the notes on the page are
// the workflow's, and a provider the Crypto node cannot check disables the button with the reason.
const { describe, test, expect, beforeAll, afterAll } = require('@jest/globals');
const { readFileSync } = require('node:fs');
const path = require('node:path');

const { chromiumAvailable, openPlanner, plan } = require('../support/planner');

const builtIn = require(path.join(__dirname, '..', '..', 'dist', 'planner', 'builtIn.cjs'));

const describeInBrowser = chromiumAvailable ? describe : describe.skip;

describeInBrowser('the built-in-nodes download', () => {
	/** @type {Awaited<ReturnType<typeof openPlanner>>} */
	let browser;
	beforeAll(async () => {
		browser = await openPlanner();
	}, 60_000);
	afterAll(async () => {
		await browser?.close();
	});

	test('the file is builtInWorkflow for the page settings, and the page shows its notes', async () => {
		const { page } = browser;
		const settings = {
			keySource: 'github',
			namespace: 'hooks',
			mode: 'lease',
			leaseSeconds: 120,
			schema: 'public',
			table: 'gh_events',
		};
		await plan(page, { body: Buffer.from('{"zen":"hi"}'), ...settings });
		// A provider's key source picks its signature too.
		expect(await page.inputValue('#builtInProvider')).toBe('github');
		const [download] = await Promise.all([
			page.waitForEvent('download'),
			page.click('#downloadBuiltInWorkflow'),
		]);
		expect(download.suggestedFilename()).toBe('idempotent-webhook-builtin-github.json');
		const workflow = JSON.parse(readFileSync(await download.path(), 'utf8'));
		const expected = builtIn.builtInWorkflow(
			{
				...builtIn.DEFAULT_SETTINGS,
				...settings,
				eventIdPath: await page.inputValue('#eventIdPath'),
				fingerprint: await page.inputValue('#fingerprintSource'),
				fingerprintExpression: await page.inputValue('#fingerprintExpression'),
				retentionDays: Number(await page.inputValue('#retentionDays')),
			},
			{ provider: 'github' },
		);
		expect(workflow).toEqual(expected);
		expect(
			workflow.nodes.every((/** @type {{ type: string }} */ n) =>
				n.type.startsWith('n8n-nodes-base.'),
			),
		).toBe(true);
		expect(await page.locator('#builtInNotes li').allTextContents()).toEqual([
			...builtIn.BUILT_IN_NOTES,
		]);
		expect(
			browser.requests.filter((url) => !url.startsWith('file:') && !url.startsWith('blob:')),
		).toEqual([]);
	});

	test('Standard Webhooks: the button is disabled and the page says why', async () => {
		const { page } = browser;
		await page.selectOption('#builtInProvider', 'standardWebhooks');
		expect(await page.isDisabled('#downloadBuiltInWorkflow')).toBe(true);
		expect(await page.textContent('#builtInRefusal')).toMatch(
			/^Standard Webhooks cannot be checked with built-in nodes: its signing key is bytes given as base64/,
		);
		await page.selectOption('#builtInProvider', 'stripe');
		expect(await page.isDisabled('#downloadBuiltInWorkflow')).toBe(false);
		expect(await page.textContent('#builtInRefusal')).toBe('');
	});

	test('the Idempotency-Key source is refused with built-in nodes, with the reason', async () => {
		const { page } = browser;
		await plan(page, { body: Buffer.from('{}'), keySource: 'idempotencyKeyHeader' });
		expect(await page.isDisabled('#downloadBuiltInWorkflow')).toBe(true);
		expect(await page.textContent('#builtInRefusal')).toMatch(
			/Idempotency-Key header source is not offered/,
		);
		expect(await page.isDisabled('#downloadWorkflow')).toBe(false);
	});

	test('a namespace with "}}" is refused with the reason instead of a download', async () => {
		const { page } = browser;
		await plan(page, {
			body: Buffer.from('{"id":"evt_1"}'),
			keySource: 'stripe',
			namespace: 'ord}}ers',
		});
		await page.selectOption('#builtInProvider', 'stripe');
		expect(await page.isDisabled('#downloadBuiltInWorkflow')).toBe(true);
		expect(await page.textContent('#builtInRefusal')).toMatch(
			/^The namespace "ord}}ers" contains "}}", which n8n reads as the end of an expression/,
		);
		await plan(page, {
			body: Buffer.from('{"id":"evt_1"}'),
			keySource: 'stripe',
			namespace: 'orders',
		});
		expect(await page.isDisabled('#downloadBuiltInWorkflow')).toBe(false);
	});

	test('Answer first: the file is the answer-first workflow for the page settings, its notes shown; simple mode is refused with the reason', async () => {
		const { page } = browser;
		const settings = { keySource: 'slack', namespace: '', mode: 'lease', leaseSeconds: 120 };
		await plan(page, { body: Buffer.from('{"event_id":"Ev1"}'), ...settings });
		expect(await page.inputValue('#builtInProvider')).toBe('slack');
		await page.check('#builtInAnswerFirst');
		const [download] = await Promise.all([
			page.waitForEvent('download'),
			page.click('#downloadBuiltInWorkflow'),
		]);
		expect(download.suggestedFilename()).toBe('idempotent-webhook-answer-first-slack.json');
		const workflow = JSON.parse(readFileSync(await download.path(), 'utf8'));
		const expected = builtIn.builtInWorkflow(
			{
				...builtIn.DEFAULT_SETTINGS,
				...settings,
				schema: await page.inputValue('#schema'),
				table: await page.inputValue('#table'),
				eventIdPath: await page.inputValue('#eventIdPath'),
				fingerprint: await page.inputValue('#fingerprintSource'),
				fingerprintExpression: await page.inputValue('#fingerprintExpression'),
				retentionDays: Number(await page.inputValue('#retentionDays')),
			},
			{ provider: 'slack', answerFirst: builtIn.ANSWER_FIRST_DEFAULTS },
		);
		expect(workflow).toEqual(expected);
		expect(workflow.nodes.map((/** @type {{ name: string }} */ n) => n.name)).toContain(
			'Claim Due Key',
		);
		expect(await page.locator('#builtInAnswerFirstNotes li').allTextContents()).toEqual([
			...builtIn.ANSWER_FIRST_NOTES,
		]);
		await plan(page, { body: Buffer.from('{"event_id":"Ev1"}'), ...settings, mode: 'simple' });
		expect(await page.isDisabled('#downloadBuiltInWorkflow')).toBe(true);
		expect(await page.textContent('#builtInRefusal')).toMatch(/cannot answer first/);
		await page.uncheck('#builtInAnswerFirst');
		expect(await page.isDisabled('#downloadBuiltInWorkflow')).toBe(false);
	});
});
