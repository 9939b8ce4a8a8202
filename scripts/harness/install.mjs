// Installs (once) and locates the Node.js binary and the n8n that the e2e suite and the demo run:
// n8n 2.41.1 on Node.js 24, or with N8N_LINE=1 the newest 1.x (1.123.81, on Node.js 22: its
// expression engine needs isolated-vm, prebuilt for Node 22 and 24 only). Both live outside the
// repo, in ${N8N_IDEMPOTENCY_CACHE:-$HOME/.cache/n8n-nodes-idempotency}:
//   node24/        npm install --prefix node24 node-<platform>-<arch>@24
//   n8n-2.41.1/    npm install --ignore-scripts n8n@2.41.1   (a tiny package.json of its own)
// n8n needs Node >= 24; the repo's tools stay on Node 20. n8n is installed with scripts ignored
// (a Kafka native build fails otherwise and npm rolls everything back), so its SQLite driver is not
// built and n8n must use PostgreSQL. Each install goes to a staging folder that is renamed into
// place only when it succeeded, so an interrupted install is never mistaken for a good one.
import { execFileSync } from 'node:child_process';
import {
	existsSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	renameSync,
	rmSync,
	writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

import { elapsed, progress } from './log.mjs';
import { runTracked, tailOf } from './processes.mjs';

/**
 * The n8n lines the real-server suites run on: 2.x, and the newest 1.x, which many self-hosted
 * servers still run. 1.x takes `xlsx` from a tarball URL outside the npm registry; the override
 * points it at the same code published on the registry.
 */
const N8N_LINES = {
	2: { n8nVersion: '2.41.1', nodeMajor: 24, overrides: undefined },
	1: { n8nVersion: '1.123.81', nodeMajor: 22, overrides: { xlsx: 'npm:@e965/xlsx@0.20.2' } },
};

/** N8N_LINE=1 runs a suite on n8n 1.x; 2.x otherwise. */
function selectedLine() {
	const line = process.env.N8N_LINE ?? '2';
	if (!(line in N8N_LINES))
		throw new Error(`N8N_LINE must be one of ${Object.keys(N8N_LINES).join(', ')}, not ${line}`);
	return { line: Number(line), ...N8N_LINES[line] };
}

export const N8N_VERSION = selectedLine().n8nVersion;
const NODE_MAJOR = selectedLine().nodeMajor;

export function cacheDir() {
	return (
		process.env.N8N_IDEMPOTENCY_CACHE || path.join(homedir(), '.cache', 'n8n-nodes-idempotency')
	);
}

export function cachePaths(dir = cacheDir()) {
	const nodePackage = `node-${process.platform}-${process.arch}`;
	const nodeDir = path.join(dir, `node${NODE_MAJOR}`);
	const n8nDir = path.join(dir, `n8n-${N8N_VERSION}`);
	return {
		dir,
		line: selectedLine().line,
		nodePackage,
		nodeDir,
		nodeBin: path.join(nodeDir, 'node_modules', nodePackage, 'bin', 'node'),
		n8nDir,
		n8nModules: path.join(n8nDir, 'node_modules'),
		n8nRoot: path.join(n8nDir, 'node_modules', 'n8n'),
		n8nBin: path.join(n8nDir, 'node_modules', 'n8n', 'bin', 'n8n'),
	};
}

function nodeBinaryWorks(nodeBin) {
	if (!existsSync(nodeBin)) return false;
	try {
		const version = execFileSync(nodeBin, ['--version'], {
			encoding: 'utf8',
			timeout: 20_000,
		}).trim();
		return version.startsWith(`v${NODE_MAJOR}.`);
	} catch {
		return false;
	}
}

function n8nInstalled(paths) {
	try {
		const manifest = JSON.parse(readFileSync(path.join(paths.n8nRoot, 'package.json'), 'utf8'));
		return manifest.version === N8N_VERSION && existsSync(paths.n8nBin);
	} catch {
		return false;
	}
}

/**
 * npm passes its configuration to scripts as npm_config_* variables; `npm run test:e2e` would hand
 * the repo's settings (prefix, scripts) to the nested install. Keep only what reaching the registry needs.
 * @returns {NodeJS.ProcessEnv}
 */
function npmEnv() {
	/** @type {NodeJS.ProcessEnv} */
	const env = {};
	for (const [name, value] of Object.entries(process.env)) {
		const lower = name.toLowerCase();
		if (
			lower.startsWith('npm_') &&
			!/^npm_config_(registry|.*proxy|cafile|ca|strict_ssl|userconfig|globalconfig|cache|fetch_.*|@.*:registry)$/.test(
				lower,
			)
		) {
			continue;
		}
		env[name] = value;
	}
	return env;
}

/** npm --loglevel=http logs one line per registry request: a rough measure of progress. */
function countFetches(logFile) {
	try {
		return (readFileSync(logFile, 'utf8').match(/http fetch/g) ?? []).length;
	} catch {
		return 0;
	}
}

function countEntries(modulesDir) {
	try {
		return readdirSync(modulesDir).length;
	} catch {
		return 0;
	}
}

/** Staging folders of installs that were interrupted (their process is gone). */
function removeStaleStaging(dir) {
	for (const name of readdirSync(dir)) {
		const match = /\.partial-(\d+)$/.exec(name);
		if (!match) continue;
		const pid = Number(match[1]);
		let alive = pid !== process.pid;
		try {
			if (alive) process.kill(pid, 0);
		} catch {
			alive = false;
		}
		if (!alive) {
			progress(`removing ${path.join(dir, name)} (left by an interrupted install)`);
			rmSync(path.join(dir, name), { recursive: true, force: true });
		}
	}
}

/** What the cached tools are installed with: their own scripts are not needed to run them. */
const PACKAGE_INSTALL_ARGS = [
	'install',
	'--ignore-scripts',
	'--no-audit',
	'--no-fund',
	'--loglevel=http',
	'--save-exact',
];

/** @typedef {{ label: string, logFile: string, timeoutMs: number, overrides?: Record<string, string> }} InstallOptions */

/**
 * Runs `npm install ...` into `finalDir` through a `*.partial-<pid>` staging folder renamed into
 * place only when the install succeeded (a half-finished install is never mistaken for a cache),
 * printing a progress line every 15 s.
 * @param {string} finalDir
 * @param {string[]} args
 * @param {InstallOptions} options
 */
async function npmInstallInto(finalDir, args, options) {
	const stagingDir = `${finalDir}.partial-${process.pid}`;
	await npmInstallInStaging(stagingDir, args, options);
	rmSync(finalDir, { recursive: true, force: true });
	renameSync(stagingDir, finalDir);
}

/** @param {string} stagingDir @param {string[]} args @param {InstallOptions} options */
async function npmInstallInStaging(stagingDir, args, { label, logFile, timeoutMs, overrides }) {
	rmSync(stagingDir, { recursive: true, force: true });
	mkdirSync(stagingDir, { recursive: true });
	const manifest = {
		name: `n8n-nodes-idempotency-cache-${label}`,
		private: true,
		description: 'Installed by scripts/harness/install.mjs of n8n-nodes-idempotency',
		overrides,
	};
	writeFileSync(path.join(stagingDir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
	writeFileSync(logFile, `npm ${args.join(' ')}\n`);
	const started = Date.now();
	const ticker = setInterval(() => {
		const fetched = countFetches(logFile);
		const modules = countEntries(path.join(stagingDir, 'node_modules'));
		progress(
			`  still installing ${label}: ${elapsed(started)}, ${fetched} registry requests, ${modules} folders in node_modules (log: ${logFile})`,
		);
	}, 15_000);
	try {
		const status = await runTracked('npm', args, {
			name: `npm install ${label}`,
			cwd: stagingDir,
			env: npmEnv(),
			logFile,
			timeoutMs,
		});
		if (status.code !== 0) {
			throw new Error(
				`npm install of ${label} failed (exit ${status.code ?? status.signal}). Last lines of ${logFile}:\n${tailOf(logFile, 30)}`,
			);
		}
	} finally {
		clearInterval(ticker);
	}
	progress(`  ${label} installed in ${elapsed(started)}`);
}

/** The Node.js n8n 2.x runs on, from the cache or installed from the npm registry; returns the cache paths. */
export async function ensureNode({ paths = cachePaths() } = {}) {
	mkdirSync(paths.dir, { recursive: true });
	removeStaleStaging(paths.dir);
	if (nodeBinaryWorks(paths.nodeBin)) {
		progress(`Node.js ${NODE_MAJOR}: reusing ${paths.nodeBin}`);
	} else {
		progress(
			`Node.js ${NODE_MAJOR}: installing ${paths.nodePackage}@${NODE_MAJOR} from the npm registry into ${paths.nodeDir} (about 30 MB)`,
		);
		await npmInstallInto(
			paths.nodeDir,
			[
				'install',
				'--no-audit',
				'--no-fund',
				'--loglevel=http',
				`${paths.nodePackage}@${NODE_MAJOR}`,
			],
			{
				label: `node${NODE_MAJOR}`,
				logFile: path.join(paths.dir, `node${NODE_MAJOR}.log`),
				timeoutMs: 15 * 60_000,
			},
		);
		if (!nodeBinaryWorks(paths.nodeBin))
			throw new Error(`The installed Node.js binary does not run: ${paths.nodeBin}`);
	}
	return paths;
}

/**
 * Makes sure the selected line's Node.js and n8n are in the cache; installs what is missing.
 * @returns {Promise<ReturnType<typeof cachePaths>>}
 */
export async function ensureN8n({ paths = cachePaths() } = {}) {
	await ensureNode({ paths });
	if (n8nInstalled(paths)) {
		progress(`n8n ${N8N_VERSION}: reusing ${paths.n8nRoot}`);
	} else {
		progress(
			`n8n ${N8N_VERSION}: installing from the npm registry into ${paths.n8nDir} with --ignore-scripts (about 5 minutes, ~2.9 GB; done once)`,
		);
		await npmInstallInto(paths.n8nDir, [...PACKAGE_INSTALL_ARGS, `n8n@${N8N_VERSION}`], {
			label: `n8n-${N8N_VERSION}`,
			logFile: path.join(paths.dir, `n8n-${N8N_VERSION}.log`),
			timeoutMs: 40 * 60_000,
			overrides: selectedLine().overrides,
		});
		if (!n8nInstalled(paths))
			throw new Error(
				`n8n ${N8N_VERSION} is not where it should be after installing: ${paths.n8nRoot}`,
			);
	}
	return paths;
}

/**
 * The local npm registry the UI suite publishes to (test/ui): verdaccio, installed like n8n into
 * <cache>/verdaccio-<version> rather than into the repo's devDependencies (it is ~60 MB). 6.8.0 is
 * the newest that runs on the repo's Node 20.
 */
const VERDACCIO_VERSION = '6.8.0';

export async function ensureVerdaccio({ dir = cacheDir() } = {}) {
	mkdirSync(dir, { recursive: true });
	removeStaleStaging(dir);
	const home = path.join(dir, `verdaccio-${VERDACCIO_VERSION}`);
	const root = path.join(home, 'node_modules', 'verdaccio');
	const bin = path.join(root, 'bin', 'verdaccio');
	const installed = () => {
		try {
			return (
				JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version ===
					VERDACCIO_VERSION && existsSync(bin)
			);
		} catch {
			return false;
		}
	};
	if (installed()) {
		progress(`verdaccio ${VERDACCIO_VERSION}: reusing ${root}`);
	} else {
		progress(
			`verdaccio ${VERDACCIO_VERSION}: installing from the npm registry into ${home} (about 1 minute; done once)`,
		);
		await npmInstallInto(home, [...PACKAGE_INSTALL_ARGS, `verdaccio@${VERDACCIO_VERSION}`], {
			label: `verdaccio-${VERDACCIO_VERSION}`,
			logFile: path.join(dir, `verdaccio-${VERDACCIO_VERSION}.log`),
			timeoutMs: 15 * 60_000,
		});
		if (!installed())
			throw new Error(
				`verdaccio ${VERDACCIO_VERSION} is not where it should be after installing: ${root}`,
			);
	}
	return { root, bin };
}
