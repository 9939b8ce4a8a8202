// Publishing as `npm run release` does on CI (@n8n/node-cli's release: build, then `npm publish` with
// RELEASE_MODE=true), to the suite's local registry. `--ignore-scripts=false` because the repo's
// .npmrc ignores scripts: without it npm would skip prepublishOnly (`n8n-node prerelease`), the
// check this exercises. `--provenance=false`: provenance needs a CI identity and the public registry.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

import { REPO_DIR } from '../../../scripts/harness/package.mjs';

const run = promisify(execFile);

function publishArgs(registry) {
	return [
		'publish',
		'--ignore-scripts=false',
		'--provenance=false',
		`--registry=${registry.url}`,
		`--userconfig=${registry.userconfig}`,
	];
}

/** `npm publish` in `cwd`; returns { code, output }. */
async function npmPublish(cwd, registry, env) {
	try {
		const { stdout, stderr } = await run('npm', publishArgs(registry), {
			cwd,
			env: { ...process.env, ...env },
			timeout: 180_000,
		});
		return { code: 0, output: `${stdout}\n${stderr}` };
	} catch (error) {
		return { code: error.code ?? 1, output: `${error.stdout ?? ''}\n${error.stderr ?? ''}` };
	}
}

/** A plain `npm publish` (no RELEASE_MODE): n8n-node prerelease must stop it. */
export async function publishWithoutRelease(registry) {
	const env = { ...process.env };
	delete env.RELEASE_MODE;
	return await npmPublish(REPO_DIR, registry, env);
}

/** The repo's package as it is (version from package.json). */
export async function publishRelease(registry) {
	return await npmPublish(REPO_DIR, registry, { RELEASE_MODE: 'true' });
}

/**
 * The same package under another version, published from a copy of what `npm pack` would ship
 * (package.json's version changed, node_modules linked so prepublishOnly finds n8n-node), so the
 * repo's own package.json is never touched.
 */
export async function publishReleaseAs(registry, version, workDir) {
	const copy = mkdtempSync(path.join(workDir, `publish-${version}-`));
	try {
		const { stdout } = await run(
			'npm',
			['pack', '--ignore-scripts', '--json', '--pack-destination', copy],
			{ cwd: REPO_DIR, timeout: 120_000 },
		);
		const [{ filename }] = JSON.parse(stdout);
		const target = path.join(copy, 'package');
		await run('tar', ['-xzf', path.join(copy, filename), '-C', copy], { timeout: 60_000 });
		const manifest = JSON.parse(readFileSync(path.join(target, 'package.json'), 'utf8'));
		writeFileSync(
			path.join(target, 'package.json'),
			`${JSON.stringify({ ...manifest, version }, null, 2)}\n`,
		);
		cpSync(path.join(REPO_DIR, '.npmrc'), path.join(target, '.npmrc'));
		symlinkSync(path.join(REPO_DIR, 'node_modules'), path.join(target, 'node_modules'));
		return await npmPublish(target, registry, { RELEASE_MODE: 'true' });
	} finally {
		rmSync(copy, { recursive: true, force: true });
	}
}
