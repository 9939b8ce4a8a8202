// scripts/scan-package.mjs (in `npm run lint`): n8n's scanner rules on a package folder. It must fail on
// a scanner error anywhere outside the bundled driver, and count the driver's known errors without failing.
// Each test writes a small package folder and runs the script on it, as `npm run lint` runs it on the tarball.
const { test, expect, afterAll } = require('@jest/globals');
const { spawnSync } = require('node:child_process');
const { mkdirSync, mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const path = require('node:path');

const script = path.join(__dirname, '..', '..', 'scripts', 'scan-package.mjs');
const folders = /** @type {string[]} */ ([]);
afterAll(() => folders.forEach((folder) => rmSync(folder, { recursive: true, force: true })));

// What the real driver does: open a TCP connection, read PG* defaults, warn on the console.
const driver = `'use strict';
const net = require('net');
const host = process.env.PGHOST;
console.warn('deprecated');
module.exports = { connect: () => net.connect(5432, host) };
`;

const node = `'use strict';
Object.defineProperty(exports, '__esModule', { value: true });
exports.Reserve = class Reserve {};
`;

/** @param {Record<string, string>} files relative path → content */
function scan(files) {
	const dir = mkdtempSync(path.join(tmpdir(), 'scan-package-test-'));
	folders.push(dir);
	for (const [file, content] of Object.entries(files)) {
		mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
		writeFileSync(path.join(dir, file), content);
	}
	return spawnSync(process.execPath, [script, '--dir', dir], { encoding: 'utf8' });
}

test("the driver's errors are counted by rule and name, and do not fail the check", () => {
	const run = scan({
		'dist/nodes/shared/transport/pg.js': driver,
		'dist/nodes/Reserve/Reserve.node.js': node,
	});
	expect(run.stderr).toBe('');
	expect(run.status).toBe(0);
	expect(run.stdout).toContain('Known: 3 errors in the bundled PostgreSQL driver');
	expect(run.stdout).toMatch(/1 {2}@n8n\/community-nodes\/no-restricted-imports: net 1\n/);
	expect(run.stdout).toMatch(/1 {2}@n8n\/community-nodes\/no-restricted-globals: process 1\n/);
	expect(run.stdout).toMatch(/1 {2}no-console: console 1\n/);
});

test('process.env or console.log in any other file fails the check, naming file, line and rule', () => {
	const run = scan({
		'dist/nodes/shared/transport/pg.js': driver,
		'dist/nodes/Reserve/Reserve.node.js': `${node}exports.table = process.env.TABLE;\nconsole.log(exports.table);\n`,
	});
	expect(run.status).toBe(1);
	expect(run.stderr).toContain('2 scanner errors outside the known driver figure');
	expect(run.stderr).toContain(
		'dist/nodes/Reserve/Reserve.node.js:4 @n8n/community-nodes/no-restricted-globals',
	);
	expect(run.stderr).toContain('dist/nodes/Reserve/Reserve.node.js:5 no-console');
	expect(run.stderr).not.toContain('transport/pg.js');
	expect(run.stdout).toContain('Known: 3 errors in the bundled PostgreSQL driver');
});

test('a second copy of the driver elsewhere is not exempt: only that one path is', () => {
	const run = scan({
		'dist/nodes/shared/transport/pg.js': driver,
		'dist/nodes/other/pg.js': driver,
	});
	expect(run.status).toBe(1);
	expect(run.stderr).toContain('3 scanner errors outside the known driver figure');
	expect(run.stderr).toContain(
		'dist/nodes/other/pg.js:2 @n8n/community-nodes/no-restricted-imports',
	);
});

test('in the driver, a rule other than its three known ones still fails the check', () => {
	const run = scan({
		'dist/nodes/shared/transport/pg.js': `${driver}module.exports.run = (code) => eval(code);\n`,
	});
	expect(run.status).toBe(1);
	expect(run.stderr).toMatch(
		/dist\/nodes\/shared\/transport\/pg\.js:6 @n8n\/community-nodes\/no-dangerous-functions/,
	);
});
