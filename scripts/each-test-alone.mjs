#!/usr/bin/env node
// Runs every jest test on its own (`jest FILE -t '^FULL NAME$'`), one after the other, to prove that
// no test depends on another having run first, and that no run leaves an idem-* folder (n8n user
// folders, PostgreSQL data) in the temp folder. Each run gets a temp folder of its own (TMPDIR), so
// other people's test runs on the same machine cannot be mistaken for ours.
// Usage: npm run build && node scripts/each-test-alone.mjs [path filter]
// (set DATABASE_URL to reuse a PostgreSQL server instead of starting one per run).
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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

/** Runs jest with its own TMPDIR; returns its JSON report and what it left there (idem-* only). */
function runJest(args) {
	const scratch = mkdtempSync(path.join(os.tmpdir(), 'idem-alone-'));
	// Readable by the postgres account, which runs the embedded server when we are root.
	chmodSync(scratch, 0o755);
	const outputFile = path.join(scratch, 'result.json');
	const child = spawnSync(
		process.execPath,
		[...jest, '--json', `--outputFile=${outputFile}`, ...args],
		{
			cwd: root,
			encoding: 'utf8',
			env: { ...process.env, TMPDIR: scratch },
		},
	);
	try {
		const left = readdirSync(scratch).filter((name) => name.startsWith('idem-'));
		let report;
		try {
			report = JSON.parse(readFileSync(outputFile, 'utf8'));
		} catch {
			report = undefined;
		}
		return { report, left: left.map((name) => path.join(scratch, name)), stderr: child.stderr };
	} finally {
		rmSync(scratch, { recursive: true, force: true });
	}
}

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// 1. Every test's file and full name, from one run that executes nothing (an impossible name).
const { report: listing } = runJest([
	'--testNamePattern',
	'^$impossible^',
	...(filter ? [filter] : []),
]);
if (!listing) throw new Error('jest did not report its tests');
const tests = listing.testResults.flatMap((file) =>
	file.assertionResults.map((test) => ({
		file: path.relative(root, file.name),
		name: test.fullName,
	})),
);
console.log(`${tests.length} tests in ${listing.testResults.length} files\n`);

// 2. Each one alone.
const failures = [];
const started = Date.now();
for (const [index, test] of tests.entries()) {
	const testStarted = Date.now();
	const { report, left, stderr } = runJest([
		test.file,
		'--testNamePattern',
		`^${escape(test.name)}$`,
	]);
	const ran =
		report?.testResults
			.flatMap((file) => file.assertionResults)
			.filter((result) => result.status !== 'pending') ?? [];
	const passed =
		ran.length >= 1 && ran.every((result) => result.status === 'passed') && left.length === 0;
	const seconds = ((Date.now() - testStarted) / 1000).toFixed(1);
	console.log(
		`${passed ? 'ok  ' : 'FAIL'} ${String(index + 1).padStart(3)} ${seconds.padStart(5)} s  ${test.file} › ${test.name}`,
	);
	if (!passed) {
		failures.push(test);
		if (ran.length === 0)
			console.log(
				'       no test ran (name not matched?)\n' + stderr.split('\n').slice(-20).join('\n'),
			);
		for (const result of ran.filter((r) => r.status !== 'passed'))
			console.log(
				`       ${result.failureMessages.join('\n').split('\n').slice(0, 12).join('\n       ')}`,
			);
		if (left.length > 0) console.log(`       left behind: ${left.join(', ')}`);
	}
}

const minutes = ((Date.now() - started) / 60_000).toFixed(1);
console.log(
	`\n${tests.length - failures.length} of ${tests.length} tests pass alone (${minutes} min).`,
);
process.exitCode = failures.length === 0 ? 0 : 1;
