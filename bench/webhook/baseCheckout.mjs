// The base build of the A/B bench (bench/webhook-ab.mjs): another commit of this repository checked
// out in a git worktree of its own outside the repository (<tmp>/bench-ab-<sha>), its dependencies
// installed once and kept for the next run. Nothing of it is ever committed; the stack builds and
// packs it like the current checkout (scripts/harness/package.mjs, `sourceDir`).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { REPO_DIR } from './config.mjs';

const git = (args, cwd = REPO_DIR) =>
	execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** This checkout's commit, marked when its files differ from it (a measurement of uncommitted code). */
export function currentBuild() {
	const sha = git(['rev-parse', 'HEAD']);
	const dirty = git(['status', '--porcelain', '--untracked-files=no']) !== '';
	return { sha, label: `${sha.slice(0, 12)}${dirty ? ' + uncommitted changes' : ''}` };
}

/**
 * The worktree of `commit` (any name git resolves), created and `npm ci`-ed on first use.
 * @returns {{ sha: string, dir: string }}
 */
export function baseCheckout(commit) {
	let sha;
	try {
		sha = git(['rev-parse', '--verify', `${commit}^{commit}`]);
	} catch {
		throw new Error(`--base ${commit}: not a commit of this repository`);
	}
	const dir = path.join(os.tmpdir(), `bench-ab-${sha.slice(0, 12)}`);
	if (!existsSync(path.join(dir, 'package.json'))) {
		// A folder removed by hand leaves its registration behind: prune it, or `worktree add` refuses.
		git(['worktree', 'prune']);
		process.stderr.write(`base: git worktree add ${dir} ${sha.slice(0, 12)}\n`);
		git(['worktree', 'add', '--detach', dir, sha]);
	}
	const head = git(['rev-parse', 'HEAD'], dir);
	if (head !== sha) throw new Error(`${dir} is at ${head}, not ${sha}: remove it and run again`);
	if (!existsSync(path.join(dir, 'node_modules'))) {
		process.stderr.write(`base: npm ci in ${dir}\n`);
		const status = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], {
			cwd: dir,
			stdio: ['ignore', process.stderr, process.stderr],
		});
		if (status.status !== 0) throw new Error(`npm ci in ${dir} failed (exit ${status.status})`);
	}
	return { sha, dir };
}
