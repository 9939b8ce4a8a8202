#!/usr/bin/env node
// Runs every jest test on its own (`jest FILE -t '^FULL NAME$'`), one after the other, to prove that
// no test depends on another having run first, and that no run leaves a /tmp/idem-n8n-* folder.
// Usage: npm run build && node scripts/each-test-alone.mjs [path filter]
// (set DATABASE_URL to reuse a PostgreSQL server instead of starting one per run).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const jest = [
	'--experimental-vm-modules',
	'--disable-warning=ExperimentalWarning',
	path.join(root, 'node_modules/jest/bin/jest.js'),
];
const filter = process.argv[2] ?? '';

function runJest(args) {
	const scratch = mkdtempSync(path.join(os.tmpdir(), 'idem-alone-'));
	const outputFile = path.join(scratch, 'result.json');
	const child = spawnSync(process.execPath, [...jest, '--json', `--outputFile=${outputFile}`, ...args], {
		cwd: root,
		encoding: 'utf8',
	});
	try {
		return { report: JSON.parse(readFileSync(outputFile, 'utf8')), stderr: child.stderr };
	} catch {
		return { report: undefined, stderr: child.stderr };
	} finally {
		rmSync(scratch, { recursive: true, force: true });
	}
}

const leftovers = () => new Set(readdirSync(os.tmpdir()).filter((name) => name.startsWith('idem-n8n-')));
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// 1. Every test's file and full name, from one run that executes nothing (an impossible name).
const { report: listing } = runJest(['--testNamePattern', '^$impossible^', ...(filter ? [filter] : [])]);
if (!listing) throw new Error('jest did not report its tests');
const tests = listing.testResults.flatMap((file) =>
	file.assertionResults.map((test) => ({ file: path.relative(root, file.name), name: test.fullName })),
);
console.log(`${tests.length} tests in ${listing.testResults.length} files\n`);

// 2. Each one alone.
const failures = [];
const started = Date.now();
for (const [index, test] of tests.entries()) {
	const before = leftovers();
	const testStarted = Date.now();
	const { report, stderr } = runJest([test.file, '--testNamePattern', `^${escape(test.name)}$`]);
	const ran = report?.testResults.flatMap((file) => file.assertionResults).filter((result) => result.status !== 'pending') ?? [];
	const left = [...leftovers()].filter((name) => !before.has(name));
	const passed = ran.length >= 1 && ran.every((result) => result.status === 'passed') && left.length === 0;
	const seconds = ((Date.now() - testStarted) / 1000).toFixed(1);
	console.log(`${passed ? 'ok  ' : 'FAIL'} ${String(index + 1).padStart(3)} ${seconds.padStart(5)} s  ${test.file} › ${test.name}`);
	if (!passed) {
		failures.push(test);
		if (ran.length === 0) console.log('       no test ran (name not matched?)\n' + stderr.split('\n').slice(-20).join('\n'));
		for (const result of ran.filter((r) => r.status !== 'passed')) console.log(`       ${result.failureMessages.join('\n').split('\n').slice(0, 12).join('\n       ')}`);
		if (left.length > 0) console.log(`       left behind: ${left.map((name) => path.join(os.tmpdir(), name)).join(', ')}`);
	}
}

const minutes = ((Date.now() - started) / 60_000).toFixed(1);
console.log(`\n${tests.length - failures.length} of ${tests.length} tests pass alone (${minutes} min).`);
process.exitCode = failures.length === 0 ? 0 : 1;
