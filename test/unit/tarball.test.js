// What `npm publish` would upload: the built nodes and credentials, the templates, the key planner page, README, LICENSE,
// package.json and index.js, and nothing else (no source maps, declarations, build info or tests).
// Reads the file list from npm itself (`npm pack --dry-run --json`) on the build `npm test` just made.
const { test, expect } = require('@jest/globals');
const { spawnSync } = require('node:child_process');
const { readdirSync } = require('node:fs');
const path = require('node:path');
const pkg = require('../../package.json');

const root = path.join(__dirname, '..', '..');

function packedFiles() {
	const npm = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
		cwd: root,
		encoding: 'utf8',
	});
	if (npm.status !== 0) throw new Error(`npm pack failed: ${npm.stderr}`);
	const [tarball] = JSON.parse(npm.stdout);
	return tarball.files.map((file) => file.path).sort();
}

const files = packedFiles();
const packed = new Set(files);

/** Every kind of file the package may ship, each with why it is there. */
/** @type {Array<[RegExp, string]>} */
const allowed = [
	[/^dist\/nodes\/[\w/.]+\.js$/, 'compiled node code (and the bundled PostgreSQL driver)'],
	[/^dist\/nodes\/\w+\/\w+\.node\.json$/, "a node's codex (categories, search aliases)"],
	[/^dist\/nodes\/\w+\/[\w.]+\.svg$/, 'node icons, light and dark'],
	[/^dist\/credentials\/\w+\.credentials\.js$/, 'the credential'],
	[/^dist\/credentials\/[\w.]+\.svg$/, 'credential icons'],
	[/^workflows\/[\w-]+\.json$/, 'importable templates'],
	[/^workflows\/cloud\/[\w-]+\.json$/, 'the built-in-nodes workflows for n8n Cloud'],
	[/^workflows\/cloud\/answer-first\/[\w-]+\.json$/, 'the answer-first ones'],
	[/^dist\/planner\/index\.html$/, 'the key planner page (one self-contained file)'],
	[/^(README\.md|LICENSE|package\.json|index\.js)$/, 'the package itself'],
];

test('the tarball holds only files of the allowed kinds', () => {
	const unexpected = files.filter((file) => !allowed.some(([pattern]) => pattern.test(file)));
	expect(unexpected).toEqual([]);
});

test('no source maps, declarations, build info, a second package.json, tests or sources', () => {
	expect(
		files.filter((file) =>
			/\.(map|d\.ts|ts|tsbuildinfo)$|^dist\/package\.json$|^(test|scripts|bench|nodes|credentials)\//.test(
				file,
			),
		),
	).toEqual([]);
});

test('every node and credential that package.json lists is in it, with its codex and icons', () => {
	const listed = [...pkg.n8n.nodes, ...pkg.n8n.credentials];
	// At least this package's four nodes and one credential (other branches add more).
	expect(listed.length).toBeGreaterThanOrEqual(5);
	for (const file of listed) expect(packed).toContain(file);
	for (const file of pkg.n8n.nodes) expect(packed).toContain(file.replace(/\.js$/, '.json'));
	for (const file of listed) {
		// The icons the node or credential points at (file:… is relative to its own file).
		const exported = Object.values(require(path.join(root, file)))[0];
		const instance = new exported();
		const icon = instance.description?.icon ?? instance.icon;
		for (const variant of [icon.light, icon.dark]) {
			expect(packed).toContain(
				path.posix.join(path.posix.dirname(file), variant.replace(/^file:/, '')),
			);
		}
	}
});

test('every template in workflows/ is in it, and the README and the licence', () => {
	for (const template of readdirSync(path.join(root, 'workflows')).filter((name) =>
		name.endsWith('.json'),
	)) {
		expect(packed).toContain(`workflows/${template}`);
	}
	for (const file of [
		'README.md',
		'LICENSE',
		'package.json',
		'index.js',
		'dist/nodes/shared/transport/pg.js',
		'dist/planner/index.html',
	]) {
		expect(packed).toContain(file);
	}
});

/** `npm publish --dry-run` with prepublishOnly run (the repo's .npmrc ignores scripts otherwise). */
function publishDryRun(env) {
	return spawnSync(
		'npm',
		['publish', '--dry-run', '--ignore-scripts=false', '--provenance=false'],
		{
			cwd: root,
			encoding: 'utf8',
			env,
			timeout: 120_000,
		},
	);
}

test('npm publish is stopped by n8n-node prerelease unless it comes through npm run release (RELEASE_MODE)', () => {
	const env = { ...process.env };
	delete env.RELEASE_MODE;
	const plain = publishDryRun(env);
	expect(plain.status).not.toBe(0);
	expect(`${plain.stdout}${plain.stderr}`).toContain(
		'Run `npm run release` to publish the package',
	);

	const release = publishDryRun({ ...env, RELEASE_MODE: 'true' });
	expect(`${release.stdout}${release.stderr}`).toContain('n8n-node prerelease');
	expect(release.status).toBe(0);
	expect(`${release.stdout}${release.stderr}`).toContain(`+ ${pkg.name}@${pkg.version}`);
}, 240_000);
