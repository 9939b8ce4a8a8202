// What a user does in n8n 2.41's editor, one function per step, located the way n8n's own
// Playwright tests locate things (data-test-id attributes, roles and visible labels).

/** First visit: n8n asks for the owner account (/setup); later visits ask to sign in (/signin). */
export async function setUpOwner(
	page,
	baseUrl,
	{ email, password, firstName = 'Ada', lastName = 'Owner' },
) {
	await page.goto(`${baseUrl}/`, { waitUntil: 'domcontentloaded' });
	await page.waitForURL(/\/(setup|signin)/, { timeout: 60_000 });
	if (/\/setup/.test(page.url())) {
		await page.locator('input[name="email"]').fill(email);
		await page.locator('input[name="firstName"]').fill(firstName);
		await page.locator('input[name="lastName"]').fill(lastName);
		await page.locator('input[name="password"]').fill(password);
		await page.getByRole('button', { name: /next|set up|continue/i }).click();
	} else {
		await signIn(page, { email, password });
	}
	await page.waitForURL((url) => !/\/(setup|signin)/.test(url.pathname), { timeout: 60_000 });
}

async function signIn(page, { email, password }) {
	await page.locator('input[name="emailOrLdapLoginId"], input[name="email"]').first().fill(email);
	await page.locator('input[name="password"]').fill(password);
	await page.getByRole('button', { name: /sign in/i }).click();
}

export async function openCommunityNodes(page, baseUrl) {
	await page.goto(`${baseUrl}/settings/community-nodes`, { waitUntil: 'domcontentloaded' });
	await page
		.getByTestId('empty-state')
		.or(page.getByTestId('community-package-card'))
		.first()
		.waitFor({ timeout: 30_000 });
}

/** Settings → Community nodes → Install → package name → risk checkbox → Install. */
export async function installCommunityPackage(page, packageName, { timeoutMs = 240_000 } = {}) {
	// The empty page offers "Install a community node"; with packages installed the header has "Install".
	const emptyState = page.getByTestId('empty-state').getByRole('button');
	const headerInstall = page.getByRole('button', { name: 'Install', exact: true });
	await emptyState.or(headerInstall).first().click();
	const modal = page.getByTestId('communityPackageInstall-modal');
	await modal.waitFor();
	await modal.locator('input').first().fill(packageName);
	await page.getByTestId('user-agreement-checkbox').click();
	await page.getByTestId('install-community-package-button').click();
	await modal.waitFor({ state: 'hidden', timeout: timeoutMs });
}

export function packageCard(page, packageName) {
	return page.getByTestId('community-package-card').filter({ hasText: packageName });
}

/** A new, empty workflow in the editor. */
export async function newWorkflow(page, baseUrl) {
	await page.goto(`${baseUrl}/workflow/new`, { waitUntil: 'domcontentloaded' });
	await page.getByTestId('canvas-wrapper').waitFor({ timeout: 60_000 });
}

/** Opens the node panel afresh and types `words` into its search; returns the node names it lists. */
export async function searchNodePanel(page, words) {
	const search = page.getByTestId('node-creator-search-bar');
	if (await search.isVisible().catch(() => false)) {
		await page.keyboard.press('Escape');
		await search.waitFor({ state: 'hidden' });
	}
	await page.getByTestId('node-creator-plus-button').click();
	await search.waitFor();
	await search.pressSequentially(words, { delay: 20 });
	const root = page.getByTestId('node-creator');
	const items = root.getByTestId('node-creator-item-name');
	const noResults = root.getByTestId('node-creator-no-results');
	// The panel filters as one types (debounced): wait for search results, then for the list to settle.
	let previous;
	let stableSince = Date.now();
	const deadline = Date.now() + 15_000;
	while (Date.now() < deadline) {
		const names = (await items.allInnerTexts()).map((text) => text.trim());
		const showingResults =
			(await noResults.isVisible().catch(() => false)) ||
			(names.length > 0 && !names.includes('Trigger manually'));
		const joined = names.join('|');
		if (joined !== previous) {
			previous = joined;
			stableSince = Date.now();
		} else if (showingResults && Date.now() - stableSince >= 600) {
			return names;
		}
		await page.waitForTimeout(150);
	}
	return previous ? previous.split('|') : [];
}

export async function closeNodePanel(page) {
	await page.keyboard.press('Escape');
}

/** Workflow menu (…) → Import → From File… with `file`. */
export async function importWorkflowFile(page, file) {
	await page.getByTestId('workflow-menu').click();
	await page.getByTestId('workflow-menu-item-import').hover();
	const [chooser] = await Promise.all([
		page.waitForEvent('filechooser'),
		page.getByTestId('workflow-menu-item-import-from-file').click(),
	]);
	await chooser.setFiles(file);
}

/** The workflow's "…" menu → Import → From URL… → the URL → Import (n8n's server fetches it). */
export async function importWorkflowUrl(page, url) {
	await page.getByTestId('workflow-menu').click();
	await page.getByTestId('workflow-menu-item-import').hover();
	await page.getByTestId('workflow-menu-item-import-from-url').click();
	await page.getByPlaceholder('Workflow URL').fill(url);
	await page.getByTestId('confirm-workflow-import-url-button').click();
}

export function canvasNode(page, name) {
	return page.locator(`[data-test-id="canvas-node"][data-node-name="${name}"]`);
}

function credentialModal(page) {
	return page.getByTestId('editCredential-modal');
}

/** Opens a node's settings (double-click on the canvas). */
export async function openNode(page, name) {
	await canvasNode(page, name).dblclick();
	await page.getByTestId('ndv').waitFor();
}

export async function closeNode(page) {
	await page.getByTestId('ndv-close-button').click();
	await page.getByTestId('ndv').waitFor({ state: 'hidden' });
}

/**
 * In an open Webhook node: the **Webhook URLs** section at the top of its parameters and its
 * **Test URL** | **Production URL** switch. Chooses `kind` and returns the URL n8n then shows, the
 * one a user copies into the sender.
 * @param {import('playwright-core').Page} page
 * @param {'Test URL' | 'Production URL'} kind
 */
export async function webhookUrlInNode(page, kind) {
	const ndv = page.getByTestId('ndv');
	await ndv.getByText('Webhook URLs', { exact: true }).waitFor();
	// The section can be folded; its headline's title then offers to display the URLs.
	const folded = ndv.getByTitle('Click to display webhook URLs');
	if (await folded.isVisible().catch(() => false)) await folded.click();
	// A segment control: each side is a radio button named by its label.
	await ndv.getByRole('radio', { name: kind, exact: true }).click();
	await ndv
		.getByRole('radio', { name: kind, exact: true, checked: true })
		.waitFor({ timeout: 5_000 });
	// n8n shows the chosen URL under the switch; the two differ in their first path segment.
	const segment = kind === 'Production URL' ? 'webhook' : 'webhook-test';
	const shown = ndv.getByText(new RegExp(`^https?://[^/\\s]+/${segment}/\\S+$`)).first();
	await shown.waitFor();
	return (await shown.textContent()).trim();
}

/** The open node's **Webhook URLs** section (headline, switch and URL), for a README picture. */
export function webhookUrlsSection(page) {
	return page.getByTestId('ndv').getByText('Webhook URLs', { exact: true }).locator('xpath=..');
}

/**
 * In an open node: "Connect to …" (no credential yet) or the pencil next to the chosen one; with
 * `unset`, the first credential the node still lacks (Reserve has two when it verifies signatures),
 * with `last` too, the last one it lacks (Reserve lists Webhook Signing Secret API after Idempotency
 * Postgres: the Quick start sets the secret first).
 */
export async function openNodeCredential(page, { unset = false, last = false } = {}) {
	if (await credentialModal(page).isVisible()) return;
	const connect = page.getByTestId('node-credentials-empty-state');
	const edit = page.getByTestId('credential-edit-button');
	const candidates = unset ? connect : connect.or(edit);
	await (last ? candidates.last() : candidates.first()).click();
	await credentialModal(page).waitFor();
}

/** Types values into the open credential dialog's fields, by parameter name. */
export async function fillCredential(page, values) {
	const modal = credentialModal(page);
	for (const [name, value] of Object.entries(values)) {
		const input = modal.getByTestId(`parameter-input-${name}`).locator('input, textarea').first();
		await input.fill(String(value));
	}
}

/**
 * Save: n8n stores the credential, then runs the credential type's own test and shows its result
 * above the fields ("Connection tested successfully", or "Couldn't connect with these settings" with
 * the test's message behind "More details"; the Retry button runs the test again). Returns
 * { ok, message } as the test answered, once the dialog shows it.
 * @param {import('playwright-core').Page} page
 * @param {{ sent?: string, timeoutMs?: number }} [options]
 */
export async function saveCredential(page, { sent, timeoutMs = 30_000 } = {}) {
	const modal = credentialModal(page);
	// The test n8n runs for this save: the one whose request carries the value just typed (`sent`).
	const tested = page.waitForResponse(
		(response) =>
			new URL(response.url()).pathname.endsWith('/rest/credentials/test') &&
			response.request().method() === 'POST' &&
			(sent === undefined ||
				(response.request().postData() ?? '').includes(JSON.stringify(String(sent)))),
		{ timeout: timeoutMs },
	);
	await modal.getByTestId('credential-save-button').click();
	const result = (await (await tested).json()).data;
	// The save button says "Saved" once n8n stored it (unless the dialog closed itself).
	await modal
		.getByTestId('credential-save-button')
		.getByText('Saved', { exact: true })
		.waitFor({ timeout: 5_000 })
		.catch(() => undefined);
	if (result.status === 'OK') {
		// A new credential whose test passed may close its dialog by itself.
		const success = modal.getByTestId('credentials-config-container-test-success');
		const deadline = Date.now() + timeoutMs;
		let shown;
		while (!shown && Date.now() < deadline) {
			if (!(await modal.isVisible())) shown = 'closed';
			else if (await success.isVisible()) shown = 'success shown';
			else await page.waitForTimeout(200);
		}
		if (!shown)
			throw new Error(
				`The test answered OK but the dialog does not say so: ${await modal.innerText()}`,
			);
		return { ok: true, message: result.message, dialog: shown };
	}
	await modal.getByText(/Couldn.t connect with these settings/).waitFor({ timeout: timeoutMs });
	const more = modal.getByText('More details');
	if (await more.isVisible().catch(() => false)) await more.click();
	await modal.getByText(result.message, { exact: false }).first().waitFor({ timeout: timeoutMs });
	return { ok: false, message: result.message };
}

export async function closeCredential(page) {
	const modal = credentialModal(page);
	if (!(await modal.isVisible())) return;
	await modal.locator('button[aria-label="Close this dialog"]').click();
	await modal.waitFor({ state: 'hidden' });
}

/** Publish (top right) → the publish dialog → Publish; waits for n8n to confirm. */
export async function publishWorkflow(page) {
	await page.getByTestId('workflow-open-publish-modal-button').click();
	const modal = page.getByTestId('workflowPublish-modal');
	await modal.waitFor();
	await modal.getByTestId('workflow-publish-button').click();
	await modal.waitFor({ state: 'hidden', timeout: 60_000 });
	// n8n then explains where production runs show up; "Got it" closes that.
	const gotIt = page.getByRole('button', { name: 'Got it' });
	await gotIt.waitFor({ timeout: 10_000 }).catch(() => undefined);
	if (await gotIt.isVisible().catch(() => false)) await gotIt.click();
	// A first publish also opens the "Production Checklist" over the canvas's left side, where the
	// template's Webhook node is: close it as a user would before opening that node.
	await productionChecklist(page)
		.waitFor({ timeout: 5_000 })
		.catch(() => undefined);
	await closeProductionChecklist(page);
}

/**
 * The workflow's Executions tab: waits until it lists `count` runs, opens each (newest first) and
 * reads which nodes its preview marks as run successfully.
 * @param {import('playwright-core').Page} page
 * @param {string} workflowUrl
 * @param {number} count
 * @param {{ timeoutMs?: number, screenshot?: (index: number, run: object) => Promise<unknown> }} [options]
 * @returns {Promise<Array<{ status: string, succeeded: string[] }>>}
 */
export async function executionsInUi(
	page,
	workflowUrl,
	count,
	{ timeoutMs = 60_000, screenshot } = {},
) {
	await page.goto(`${workflowUrl}/executions`, { waitUntil: 'domcontentloaded' });
	const items = page
		.getByTestId('executions-sidebar')
		.locator('.execution-card, [data-test-id="execution-card"]');
	const deadline = Date.now() + timeoutMs;
	while ((await items.count()) < count) {
		if (Date.now() > deadline)
			throw new Error(`Executions lists ${await items.count()} runs, not ${count}`);
		await page.waitForTimeout(500);
	}
	const runs = [];
	for (let i = 0; i < count; i++) {
		await clickPastProductionChecklist(page, items.nth(i));
		const preview = page.getByTestId('execution-preview-host');
		await preview.getByTestId('canvas-node').first().waitFor({ timeout: 30_000 });
		await page.waitForTimeout(500);
		const succeeded = await preview
			.locator('[data-test-id="canvas-node"]')
			.filter({ has: page.getByTestId('canvas-node-status-success') })
			.evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-node-name')));
		const run = {
			status: (await items.nth(i).getAttribute('data-test-execution-status')) ?? '',
			succeeded,
		};
		runs.push(run);
		await screenshot?.(i, run);
	}
	return runs;
}

function productionChecklist(page) {
	return page
		.locator('[data-reka-popper-content-wrapper]')
		.filter({ hasText: 'Production Checklist' });
}

/**
 * Clicks `target`, closing the Production Checklist first: n8n can open it a moment after the
 * Executions page shows the runs, over the cards, so a click that the popover caught is tried again
 * once it is closed.
 */
async function clickPastProductionChecklist(page, target, { attempts = 3 } = {}) {
	for (let attempt = 1; ; attempt++) {
		await closeProductionChecklist(page);
		try {
			await target.click({ timeout: 5_000 });
			return;
		} catch (error) {
			if (attempt >= attempts || !(await productionChecklist(page).isVisible())) throw error;
		}
	}
}

/** After a first publish, and after a workflow's first production runs, n8n opens a "Production Checklist" popover. */
export async function closeProductionChecklist(page) {
	const checklist = productionChecklist(page);
	if (!(await checklist.isVisible().catch(() => false))) return;
	await page.keyboard.press('Escape');
	if (await checklist.isVisible().catch(() => false))
		await checklist.getByRole('button').first().click();
	await checklist.waitFor({ state: 'hidden', timeout: 10_000 });
}
