// Runs the lint leg of n8n's verification scanner (@n8n/scan-community-package) on what
// `npm publish` would upload, so the package's own code stays verifiable: `npm pack` into a
// temporary folder, extract, lint with the scanner's config, fail on any error outside the
// bundled PostgreSQL driver.
//
// The driver (dist/nodes/shared/transport/pg.js, pg inlined by scripts/bundle-driver.mjs) can
// never pass: a PostgreSQL connection needs `net`, `tls`, `dns`, and pg reads `process`. Its
// errors are counted by rule and printed as a known figure (docs/verifiable-edition.md says why
// and what a verifiable edition would take); an error of any other rule there still fails.
//
//   node scripts/scan-package.mjs             pack the working tree's build, scan the tarball
//   node scripts/scan-package.mjs --dir DIR   scan an already extracted package folder
import { defineConfig } from 'eslint/config';
import { ESLint } from 'eslint';
import glob from 'fast-glob';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** The one file whose scanner errors are expected (relative to the package root). */
export const DRIVER = 'dist/nodes/shared/transport/pg.js';

/** The rules the driver breaks, and why it must (the only errors allowed there). */
export const DRIVER_RULES = {
	'@n8n/community-nodes/no-restricted-imports':
		'net, tls and dns carry the PostgreSQL wire protocol; the rest are Node.js modules pg is built on, and its optional pg-native',
	'@n8n/community-nodes/no-restricted-globals':
		'pg reads PG* defaults from process.env, and times out connections and queries with timers',
	'no-console': "pg's own deprecation warnings",
};

/**
 * The scanner's flat config, as buildScanConfig() in n8n's
 * packages/@n8n/scan-community-package/scanner/scanner.mjs writes it: the community-nodes
 * plugin's recommended rules, no-console as an error, eslint-plugin-n8n-nodes-base's rule sets
 * for package.json and the TypeScript of nodes/credentials (a tarball of compiled JS has none),
 * and the TypeScript parser for .json and .ts files.
 */
export async function scanConfig() {
	const { n8nCommunityNodesPlugin } = await import('@n8n/eslint-plugin-community-nodes');
	const tsParser = await import('@typescript-eslint/parser');
	const n8nNodesPlugin = (await import('eslint-plugin-n8n-nodes-base')).default;
	const parser = tsParser.default ?? tsParser;
	return defineConfig(
		n8nCommunityNodesPlugin.configs.recommended,
		{ rules: { 'no-console': 'error' } },
		{ plugins: { 'n8n-nodes-base': n8nNodesPlugin } },
		{ files: ['package.json'], rules: { ...n8nNodesPlugin.configs.community.rules } },
		{
			files: ['**/credentials/**/*.ts'],
			rules: {
				...n8nNodesPlugin.configs.credentials.rules,
				'n8n-nodes-base/cred-class-field-documentation-url-miscased': 'off',
				'n8n-nodes-base/cred-class-field-type-options-password-missing': 'off',
			},
		},
		{
			files: ['**/nodes/**/*.ts'],
			rules: {
				...n8nNodesPlugin.configs.nodes.rules,
				'n8n-nodes-base/node-class-description-inputs-wrong-regular-node': 'off',
				'n8n-nodes-base/node-class-description-outputs-wrong': 'off',
				'n8n-nodes-base/node-param-type-options-max-value-present': 'off',
			},
		},
		{ files: ['**/*.json'], languageOptions: { parser } },
		{ files: ['**/*.ts'], languageOptions: { parser } },
	);
}

/**
 * @typedef {{ file: string, line: number, rule: string, message: string }} Finding
 * @typedef {{ files: number, failures: Finding[], driver: Record<string, Record<string, number>>, warnings: Finding[] }} Scan
 */

/** What a restricted-import or restricted-global error names ('net', 'process'), or the message. @param {string} message */
const named = (message) => /'([^']+)'/.exec(message)?.[1] ?? message;

/**
 * Lints an extracted package folder as the scanner does (same files, inline config ignored)
 * and sorts the errors: the driver's allowed ones are counted, every other one is a failure.
 * @param {string} packageDir
 * @returns {Promise<Scan>}
 */
export async function scanFolder(packageDir) {
	const eslint = new ESLint({
		cwd: packageDir,
		allowInlineConfig: false,
		overrideConfigFile: true,
		overrideConfig: await scanConfig(),
	});
	const files = glob.sync(['**/*.js', '**/*.ts', '**/*.json'], {
		cwd: packageDir,
		absolute: true,
		ignore: ['node_modules/**', '**/package-lock.json'],
	});
	/** @type {Scan} */
	const scan = { files: files.length, failures: [], driver: {}, warnings: [] };
	for (const result of files.length ? await eslint.lintFiles(files) : []) {
		const file = path.relative(packageDir, result.filePath).split(path.sep).join('/');
		for (const message of result.messages) {
			const finding = {
				file,
				line: message.line,
				rule: message.ruleId ?? '(parse error)',
				message: message.message,
			};
			if (message.severity < 2) scan.warnings.push(finding);
			else if (file === DRIVER && finding.rule in DRIVER_RULES) {
				const byName = (scan.driver[finding.rule] ??= {});
				const name = finding.rule === 'no-console' ? 'console' : named(finding.message);
				byName[name] = (byName[name] ?? 0) + 1;
			} else scan.failures.push(finding);
		}
	}
	return scan;
}

/**
 * `npm pack` of the package at root into a temporary folder, extracted like the scanner does.
 * @param {string} root
 * @param {string} into
 */
function packAndExtract(root, into) {
	const pack = spawnSync(
		'npm',
		['pack', '--ignore-scripts', '--json', '--pack-destination', into],
		{
			cwd: root,
			encoding: 'utf8',
		},
	);
	if (pack.status !== 0) throw new Error(`npm pack failed: ${pack.stderr}`);
	const [{ filename }] = JSON.parse(pack.stdout);
	const packageDir = path.join(into, 'package');
	mkdirSync(packageDir);
	const tar = spawnSync(
		'tar',
		['-xzf', path.join(into, filename), '-C', packageDir, '--strip-components=1'],
		{
			encoding: 'utf8',
		},
	);
	if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr}`);
	return { packageDir, tarball: filename };
}

/** @param {Scan} scan @param {string} label */
function report(scan, label) {
	/** @param {Record<string, number>} [counts] */
	const sum = (counts = {}) => Object.values(counts).reduce((total, count) => total + count, 0);
	const driverTotal = Object.values(scan.driver).reduce((total, counts) => total + sum(counts), 0);
	console.log(`n8n scanner rules on ${label}: ${scan.files} files linted.`);
	console.log(
		`Known: ${driverTotal} errors in the bundled PostgreSQL driver ${DRIVER}, which a TCP database client cannot avoid (docs/verifiable-edition.md):`,
	);
	for (const [rule, why] of Object.entries(DRIVER_RULES)) {
		const names = Object.entries(scan.driver[rule] ?? {}).map(
			([name, count]) => `${name} ${count}`,
		);
		console.log(
			`  ${String(sum(scan.driver[rule])).padStart(4)}  ${rule}: ${names.join(', ') || 'none'}`,
		);
		console.log(`        (${why})`);
	}
	for (const warning of scan.warnings)
		console.log(`warning ${warning.file}:${warning.line} ${warning.rule}: ${warning.message}`);
	if (scan.failures.length === 0) {
		console.log('No other errors: the rest of the package passes the scanner.');
		return;
	}
	console.error(`\n${scan.failures.length} scanner errors outside the known driver figure:`);
	for (const failure of scan.failures)
		console.error(`  ${failure.file}:${failure.line} ${failure.rule}: ${failure.message}`);
}

async function main() {
	const { values } = parseArgs({ options: { dir: { type: 'string' } } });
	if (values.dir) {
		const scan = await scanFolder(path.resolve(values.dir));
		report(scan, values.dir);
		return scan.failures.length ? 1 : 0;
	}
	const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
	const work = mkdtempSync(path.join(tmpdir(), 'scan-package-'));
	try {
		const { packageDir, tarball } = packAndExtract(root, work);
		// Without a build the tarball has no dist/ and nothing to find: that is not a pass.
		const manifest = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
		const missing = [...manifest.n8n.nodes, ...manifest.n8n.credentials, DRIVER].filter(
			(file) => !existsSync(path.join(packageDir, file)),
		);
		if (missing.length) {
			console.error(`The tarball lacks ${missing.join(', ')}: run npm run build first.`);
			return 1;
		}
		const scan = await scanFolder(packageDir);
		report(scan, `npm pack (${tarball})`);
		return scan.failures.length ? 1 : 0;
	} finally {
		rmSync(work, { recursive: true, force: true });
	}
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
	process.exitCode = await main();
}
