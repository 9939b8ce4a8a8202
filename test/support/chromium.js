// Debian's Chromium for the browser tests (the key planner's and the n8n UI suite's), driven by
// playwright-core. The flags keep it off the network this machine does not have: without the
// background-networking ones Chromium's own connections are refused many at a time.
const { existsSync } = require('node:fs');

const CHROMIUM = process.env.PLANNER_CHROMIUM ?? '/usr/bin/chromium';
const chromiumAvailable = existsSync(CHROMIUM);

const CHROMIUM_ARGS = [
	'--headless',
	'--no-sandbox',
	'--disable-gpu',
	'--disable-quic',
	'--no-first-run',
	'--disable-background-networking',
	'--disable-component-update',
	'--disable-sync',
];

/** A headless Chromium with its own profile folder; `options` adds playwright's context options. */
async function launchChromium(profile, options = {}) {
	const { chromium } = require('playwright-core');
	return await chromium.launchPersistentContext(profile, {
		executablePath: CHROMIUM,
		headless: true,
		args: CHROMIUM_ARGS,
		...options,
	});
}

module.exports = { CHROMIUM, chromiumAvailable, launchChromium };
