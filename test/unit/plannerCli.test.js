// `npm run planner`: says where the built page is, or serves it on 127.0.0.1 with its CSP as a header too.
const { test, expect } = require('@jest/globals');
const { execFileSync } = require('node:child_process');
const { readFileSync } = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const { servePlanner } = require('../support/planner');

const script = path.join(__dirname, '..', '..', 'scripts', 'planner.mjs');
const page = path.join(__dirname, '..', '..', 'dist', 'planner', 'index.html');

test("without options it prints the page's path and file:// URL", () => {
	const out = execFileSync(process.execPath, [script], { encoding: 'utf8' });
	expect(out).toContain(`Key planner: ${page}`);
	expect(out).toContain(pathToFileURL(page).href);
});

test('--serve serves the page on 127.0.0.1 (a free port), with the same CSP as a header, nothing else', async () => {
	const { child, url } = await servePlanner();
	try {
		const response = await fetch(url);
		expect(response.status).toBe(200);
		expect(await response.text()).toBe(readFileSync(page, 'utf8'));
		expect(response.headers.get('content-security-policy')).toMatch(
			/^default-src 'none'; script-src 'sha256-/,
		);
		expect((await fetch(`${url}other.js`)).status).toBe(404);
		expect((await fetch(url, { method: 'POST', body: 'x' })).status).toBe(405);
	} finally {
		child.kill('SIGTERM');
	}
});
