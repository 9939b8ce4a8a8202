// Debian's Chromium driven by playwright-core (its own browser download cannot work offline), with
// the launch flags of the key planner's browser tests; screenshots go to a folder outside the repo.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { selectors } from 'playwright-core';

import { CHROMIUM, chromiumAvailable, launchChromium } from '../../support/chromium.js';

export { CHROMIUM, chromiumAvailable };

let testIdSet = false;

/** A fresh profile, a 1440×900 window; n8n marks its elements with data-test-id. */
export async function openBrowser({ screenshotsDir }) {
	if (!testIdSet) {
		selectors.setTestIdAttribute('data-test-id');
		testIdSet = true;
	}
	const profile = mkdtempSync(path.join(tmpdir(), 'n8n-ui-chromium-'));
	const context = await launchChromium(profile, { viewport: { width: 1440, height: 900 } });
	context.setDefaultTimeout(20_000);
	// n8n's test mode (E2E_TESTS=true, support/stack.mjs) frames every page in a red "E2E MODE"
	// marker; the screenshots show the editor as a user sees it.
	await context.addInitScript(() => {
		document.addEventListener('DOMContentLoaded', () => {
			const style = document.createElement('style');
			style.textContent = '[data-test-id="e2e-test-mode-marker"] { display: none !important; }';
			document.head.append(style);
		});
	});
	const page = context.pages()[0] ?? (await context.newPage());
	const problems = [];
	page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
	mkdirSync(screenshotsDir, { recursive: true });
	let shot = 0;
	return {
		context,
		page,
		problems,
		screenshotsDir,
		/** Saves <dir>/NN-name.png of the whole window; returns its path. */
		async screenshot(name, options = {}) {
			shot += 1;
			const file = path.join(screenshotsDir, `${String(shot).padStart(2, '0')}-${name}.png`);
			await page.screenshot({ path: file, ...options });
			return file;
		},
		async close() {
			await context.close().catch(() => undefined);
			rmSync(profile, { recursive: true, force: true });
		},
	};
}

/** The suite's output folder: UI_OUTPUT_DIR, else a new folder under the OS temp dir. */
export function outputDir() {
	if (process.env.UI_OUTPUT_DIR) {
		mkdirSync(process.env.UI_OUTPUT_DIR, { recursive: true });
		return process.env.UI_OUTPUT_DIR;
	}
	return mkdtempSync(path.join(tmpdir(), 'n8n-idem-ui-screens-'));
}

/**
 * A UI test's step runner: runs a step and, when it fails, saves a screenshot and prints the tail of
 * n8n's log and the page's last errors. `current` gives the file's browser and stack as they are
 * when the step runs (both are set in its `before`).
 * @param {() => { browser?: Awaited<ReturnType<typeof openBrowser>>, stack?: { n8n: { logTail: (lines: number) => string } } }} current
 */
export function uiStepRunner(current) {
	return async function step(/** @type {string} */ name, /** @type {() => Promise<void>} */ fn) {
		try {
			await fn();
		} catch (error) {
			const { browser, stack } = current();
			const file = await browser?.screenshot(`FAILED-${name}`).catch(() => undefined);
			process.stderr.write(
				`\n[ui] ${name} failed; screenshot ${file}\n--- n8n log ---\n${stack?.n8n.logTail(40)}\n`,
			);
			if (browser?.problems.length)
				process.stderr.write(`--- page errors ---\n${browser.problems.slice(-10).join('\n')}\n`);
			throw error;
		}
	};
}
