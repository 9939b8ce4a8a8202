// Builds the package, packs it like `npm publish` would, and installs the tarball where n8n 2.x
// loads community packages at start-up: $N8N_USER_FOLDER/.n8n/nodes/node_modules/<name>. The
// package has no runtime dependencies (pg is bundled); n8n's NODE_PATH provides n8n-workflow.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { progress } from './log.mjs';
import { runTracked, tailOf } from './processes.mjs';

export const REPO_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The package.json of this checkout, or of another one (`sourceDir`: a base build, bench/webhook-ab.mjs). */
export function packageManifest(sourceDir = REPO_DIR) {
	return JSON.parse(readFileSync(path.join(sourceDir, 'package.json'), 'utf8'));
}

async function npm(args, { logFile, timeoutMs, cwd = REPO_DIR }) {
	const status = await runTracked('npm', args, {
		name: `npm ${args[0]}`,
		cwd,
		env: process.env,
		logFile,
		timeoutMs,
	});
	if (status.code !== 0) {
		throw new Error(
			`npm ${args.join(' ')} failed (exit ${status.code ?? status.signal}):\n${tailOf(logFile, 40)}`,
		);
	}
	return readFileSync(logFile, 'utf8');
}

/**
 * `npm run build`, then `npm pack` into `destDir`; returns the tarball path. `sourceDir`: the checkout
 * to build (default this one; the A/B bench passes another commit's worktree).
 */
export async function buildAndPack(destDir, sourceDir = REPO_DIR) {
	mkdirSync(destDir, { recursive: true });
	if (process.env.N8N_E2E_SKIP_BUILD === '1') {
		progress('package: N8N_E2E_SKIP_BUILD=1, packing the current dist/ without building');
	} else {
		progress('package: npm run build');
		await npm(['run', 'build'], {
			logFile: path.join(destDir, 'build.log'),
			timeoutMs: 300_000,
			cwd: sourceDir,
		});
	}
	progress('package: npm pack');
	const packLog = path.join(destDir, 'pack.log');
	// --json prints the file list on stdout; notices go to stderr, which lands in the same log, so
	// read the file name from the directory instead of parsing the mixed log.
	await npm(['pack', '--ignore-scripts', '--pack-destination', destDir], {
		logFile: packLog,
		timeoutMs: 120_000,
		cwd: sourceDir,
	});
	const { name, version } = packageManifest(sourceDir);
	const tarball = path.join(
		destDir,
		`${name.replace(/^@/, '').replace(/\//g, '-')}-${version}.tgz`,
	);
	try {
		readFileSync(tarball);
	} catch {
		throw new Error(`npm pack did not produce ${tarball}:\n${tailOf(packLog, 20)}`);
	}
	return tarball;
}

/** Extracts the tarball into <userFolder>/.n8n/nodes/node_modules/<name>; returns that folder. */
export async function installIntoUserFolder(tarball, userFolder) {
	const { name } = packageManifest();
	const nodesDir = path.join(userFolder, '.n8n', 'nodes');
	const target = path.join(nodesDir, 'node_modules', ...name.split('/'));
	rmSync(target, { recursive: true, force: true });
	mkdirSync(target, { recursive: true });
	const logFile = path.join(path.dirname(tarball), 'extract.log');
	const status = await runTracked('tar', ['-xzf', tarball, '-C', target, '--strip-components=1'], {
		name: 'tar',
		cwd: nodesDir,
		env: process.env,
		logFile,
		timeoutMs: 60_000,
	});
	if (status.code !== 0) throw new Error(`Extracting ${tarball} failed:\n${tailOf(logFile)}`);
	progress(`package: installed ${name} into ${target}`);
	return target;
}

/** The bash blocks of the README's Install section, in order, each as its non-empty lines. */
function installBlocks() {
	const readme = readFileSync(path.join(REPO_DIR, 'README.md'), 'utf8');
	const start = readme.indexOf('\n## Install\n');
	if (start < 0) throw new Error('README.md has no "## Install" section');
	const end = readme.indexOf('\n## ', start + 1);
	const section = readme.slice(start, end < 0 ? undefined : end);
	return [...section.matchAll(/```bash\n([\s\S]*?)```/g)].map((match) =>
		match[1].split('\n').filter((line) => line.trim() !== ''),
	);
}

/**
 * The README's install lines that put a packed tarball into ~/.n8n/nodes: the lines of the Install
 * section's first bash block after `npm pack` (the clone and the build before them need the network
 * and a fresh clone, which the suites already stand for).
 */
export function readmeInstallLines() {
	const lines = installBlocks()[0];
	if (lines === undefined) throw new Error('README.md has no bash block under "## Install"');
	const packed = lines.findIndex((line) => /\bnpm pack\b/.test(line));
	if (packed < 0) throw new Error('The README\'s install block has no "npm pack" line');
	return lines.slice(packed + 1);
}

/**
 * The README's Docker block: the Install section's bash block whose every line is a `docker` command.
 */
export function readmeDockerLines() {
	const block = installBlocks().find((lines) => lines.every((line) => /^docker\s/.test(line)));
	if (block === undefined)
		throw new Error('README.md has no Docker block (only docker lines) under "## Install"');
	return block;
}

/**
 * Runs the README's Docker block as written, without a Docker engine: each line is read as Docker
 * reads it and done on this machine, with the container's file system at `containerRoot` (so the
 * image's /home/node/.n8n/nodes is <containerRoot>/home/node/.n8n/nodes). `docker exec n8n <command>`
 * runs the command with every container path moved under `containerRoot`; `docker cp <file> n8n:<dir>`
 * copies a file that must exist where the README's shell is (the clone, `cwd`); `docker restart n8n`
 * is the one line no test here can do. A line of any other form fails: the README said something
 * this reading does not know. Returns the installed package's folder.
 */
export function installAsReadmeDockerBlockSays(cwd, containerRoot) {
	const { name } = packageManifest();
	const inContainer = (/** @type {string} */ text) =>
		text.replace(/(^|\s)\/home\/node\//g, `$1${containerRoot}/home/node/`);
	mkdirSync(containerRoot, { recursive: true });
	const restarts = [];
	for (const line of readmeDockerLines()) {
		const exec = /^docker exec n8n (.+)$/.exec(line);
		const copy = /^docker cp (\S+) n8n:(\S+)$/.exec(line);
		let script;
		if (exec) script = inContainer(exec[1]);
		else if (copy) {
			if (!existsSync(path.join(cwd, copy[1])))
				throw new Error(`The README's Docker block copies ${copy[1]}, which is not in ${cwd}`);
			script = `cp ${copy[1]} ${inContainer(` ${copy[2]}`).trim()}`;
		} else if (line === 'docker restart n8n') {
			restarts.push(line);
			continue;
		} else throw new Error(`The README's Docker block has a line this test cannot read: ${line}`);
		// Short local commands (mkdir, cp, an offline npm install of one tarball): run in place, no
		// tracked process, so a Jest test can run the block too.
		const run = spawnSync('bash', ['-c', `set -euo pipefail\n${script}`], {
			cwd,
			encoding: 'utf8',
			timeout: 120_000,
		});
		if (run.status !== 0)
			throw new Error(`The README's Docker line failed: ${line}\n${run.stdout}${run.stderr}`);
	}
	if (restarts.length !== 1)
		throw new Error("The README's Docker block does not end by restarting n8n");
	const target = path.join(
		containerRoot,
		'home',
		'node',
		'.n8n',
		'nodes',
		'node_modules',
		...name.split('/'),
	);
	readFileSync(path.join(target, 'package.json'));
	return target;
}

/**
 * Installs the tarball exactly as the README tells a user to: its install lines, run by bash as
 * written, in the tarball's folder (where `npm pack` leaves it) with HOME set to `home`, so
 * `~/.n8n/nodes` is the folder n8n loads community packages from when its user folder is `home`.
 * Returns the installed package's folder.
 */
export async function installAsReadmeSays(tarball, home) {
	const { name } = packageManifest();
	const logFile = path.join(path.dirname(tarball), 'readme-install.log');
	const script = ['set -euo pipefail', ...readmeInstallLines()].join('\n');
	const status = await runTracked('bash', ['-c', script], {
		name: 'README install',
		cwd: path.dirname(tarball),
		env: { ...process.env, HOME: home },
		logFile,
		timeoutMs: 120_000,
	});
	if (status.code !== 0)
		throw new Error(
			`The README's install lines failed (exit ${status.code ?? status.signal}):\n${tailOf(logFile, 40)}`,
		);
	const target = path.join(home, '.n8n', 'nodes', 'node_modules', ...name.split('/'));
	readFileSync(path.join(target, 'package.json'));
	progress(`package: installed ${name} with the README's lines into ${target}`);
	return target;
}
