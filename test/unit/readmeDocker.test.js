// README's Install section, Docker block, run as written without a Docker engine: the tarball
// packed as `npm pack` leaves it in the clone, each `docker exec n8n …` line run with the
// container's /home/node under a temporary folder laid out like the image's, each `docker cp`
// source checked where the README's shell stands (the clone). The package must then be installed
// under <container>/home/node/.n8n/nodes/node_modules with every node and credential n8n loads.
// Needs the build (`npm run build`), as the other unit tests that read dist/.
const { test, expect } = require('@jest/globals');
const { spawnSync } = require('node:child_process');
const { existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const root = path.join(__dirname, '..', '..');
const pkg = require('../../package.json');

test('the Docker block installs the packed tarball into the image layout of /home/node/.n8n/nodes', async () => {
	const harness = await import(
		pathToFileURL(path.join(root, 'scripts', 'harness', 'package.mjs')).href
	);
	const lines = harness.readmeDockerLines();
	// The host-install block and the Docker block are told apart: the Docker user skips the first.
	expect(harness.readmeInstallLines().some((line) => /^docker\s/.test(line))).toBe(false);
	expect(lines[lines.length - 1]).toBe('docker restart n8n');

	const work = mkdtempSync(path.join(os.tmpdir(), 'readme-docker-'));
	try {
		const clone = path.join(work, 'clone');
		mkdirSync(clone);
		const pack = spawnSync(
			'npm',
			['pack', '--ignore-scripts', '--silent', '--pack-destination', clone],
			{ cwd: root, encoding: 'utf8' },
		);
		expect({ status: pack.status, stderr: pack.stderr }).toEqual({ status: 0, stderr: '' });
		const tarball = `${pkg.name}-${pkg.version}.tgz`;
		// The README names the tarball npm pack writes for this version.
		expect(lines.join('\n')).toContain(tarball);

		const target = harness.installAsReadmeDockerBlockSays(clone, path.join(work, 'container'));
		expect(target).toBe(
			path.join(work, 'container', 'home', 'node', '.n8n', 'nodes', 'node_modules', pkg.name),
		);
		expect(JSON.parse(readFileSync(path.join(target, 'package.json'), 'utf8')).version).toBe(
			pkg.version,
		);
		for (const file of [...pkg.n8n.nodes, ...pkg.n8n.credentials])
			expect({ file, installed: existsSync(path.join(target, file)) }).toEqual({
				file,
				installed: true,
			});
	} finally {
		rmSync(work, { recursive: true, force: true });
	}
}, 120_000);
