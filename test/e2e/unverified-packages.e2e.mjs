// n8n 3's default for unverified community packages, in a real n8n 2.41.1. n8n 2.41.1 ships the
// breaking-change rule for version 3 (modules/breaking-changes/rules/v3/unverified-packages.rule.js):
// "The default of N8N_UNVERIFIED_PACKAGES_ENABLED changes to false. Installed community packages that
// are not verified by n8n will stop loading unless the variable is explicitly set to true."
// This package can never be verified (docs/verifiable-edition.md), so the README's Install section
// names that one setting. This suite runs one n8n per setting, on the same database and user folder,
// with the package published to a throw-away registry and already installed into ~/.n8n/nodes by the
// README's install lines:
// - false (n8n 3's default): installing through the Community nodes API is refused with n8n's
//   message, and what 2.41.1 does with the package already in ~/.n8n/nodes;
// - true: the package in ~/.n8n/nodes loads, and installing it through the same API works.
// Run with `npm run test:e2e:unverified`.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';

import {
	CUSTOM_REGISTRY_FEATURE,
	frontendSettings,
	installedPackages,
	installPackage,
	loadedNodeTypes,
	ownerSession,
	registryInstallEnv,
	setLicenseFeature,
} from '../../scripts/harness/communityApi.mjs';
import {
	buildAndPack,
	ensureN8n,
	installAsReadmeSays,
	progress,
	startN8nServer,
} from '../../scripts/harness/index.mjs';
import { packageManifest } from '../../scripts/harness/package.mjs';
import { freePort } from '../../scripts/harness/ports.mjs';
import { startRegistry } from '../../scripts/harness/registry.mjs';
import { startStackDatabases } from '../../scripts/harness/stackDatabases.mjs';
import { createTeardown, createWorkFolder } from '../../scripts/harness/teardown.mjs';

const run = promisify(execFile);
const manifest = packageManifest();
const PACKAGE = manifest.name;
/** The node types n8n names after the package: every node package.json lists. */
const NODE_TYPES = manifest.n8n.nodes.map(
	(/** @type {string} */ file) =>
		`${PACKAGE}.${path.basename(file, '.node.js').replace(/^./, (c) => c.toLowerCase())}`,
);
/** n8n's own words (community-packages.service.js, checkInstallPermissions). */
const FORBIDDEN = 'Installation of unverified community packages is forbidden!';
const OWNER = { email: 'owner@example.com', password: 'Owner-pass-1A' };

const teardown = createTeardown();
/** @type {Omit<import('../../scripts/harness/n8n.mjs').N8nContext, 'extraEnv' | 'logDir'> & { workDir: string, registryUrl: string }} */
let base;
/** @type {{ setting: string, baseUrl: string, cookie: string, stop: () => Promise<void> } | undefined} */
let current;

before(
	async () => {
		const paths = await ensureN8n();
		const { workDir, userFolder } = createWorkFolder('n8n-idem-unverified-', teardown);
		const { n8nDbLogin } = await startStackDatabases({
			workDir,
			label: 'unverified',
			teardown,
		});
		const tarball = await buildAndPack(path.join(workDir, 'pack'));
		const registry = await startRegistry({
			dir: path.join(workDir, 'registry'),
			packageName: PACKAGE,
		});
		teardown.push(() => registry.stop());
		await run(
			'npm',
			[
				'publish',
				tarball,
				'--ignore-scripts',
				'--provenance=false',
				`--registry=${registry.url}`,
				`--userconfig=${registry.userconfig}`,
			],
			{ timeout: 120_000 },
		);
		progress(`registry: published ${path.basename(tarball)}`);
		// A package installed before the owner turned the setting off, as after an upgrade to n8n 3,
		// with the README's own install lines run as written (HOME is the user folder, so their
		// ~/.n8n/nodes is where this n8n loads community packages from).
		await installAsReadmeSays(tarball, userFolder);
		base = {
			paths,
			workDir,
			userFolder,
			registryUrl: registry.url,
			port: await freePort(),
			brokerPort: await freePort(),
			db: n8nDbLogin,
		};
	},
	{ timeout: 30 * 60_000 },
);

after(async () => {
	await teardown.stop();
});

/**
 * The n8n server with N8N_UNVERIFIED_PACKAGES_ENABLED set to `setting`, and the owner's session:
 * the previous server is stopped first (same database, user folder and port).
 * @param {'false' | 'true'} setting
 */
async function n8nWith(setting) {
	if (current?.setting === setting) return current;
	await current?.stop();
	const logDir = path.join(base.workDir, `logs-${setting}`);
	mkdirSync(logDir, { recursive: true });
	const n8n = await startN8nServer({
		...base,
		logDir,
		extraEnv: {
			...registryInstallEnv(base.registryUrl),
			N8N_UNVERIFIED_PACKAGES_ENABLED: setting,
		},
	});
	teardown.push(() => n8n.stop());
	await setLicenseFeature(n8n.baseUrl, CUSTOM_REGISTRY_FEATURE, true);
	const cookie = await ownerSession(n8n.baseUrl, OWNER);
	current = { setting, baseUrl: n8n.baseUrl, cookie, stop: n8n.stop };
	return current;
}

test(
	"false (n8n 3's default): installing through the Community nodes API is refused with n8n's message",
	{ timeout: 15 * 60_000 },
	async () => {
		const n8n = await n8nWith('false');
		assert.equal(
			(await frontendSettings(n8n.baseUrl, n8n.cookie)).unverifiedCommunityNodesEnabled,
			false,
		);
		const refused = await installPackage(n8n.baseUrl, n8n.cookie, PACKAGE);
		progress(
			`n8n answered the install ${refused.status}: ${refused.json?.message ?? refused.text}`,
		);
		assert.notEqual(refused.status, 200, refused.text.slice(0, 300));
		assert.match(
			refused.json?.message ?? refused.text,
			new RegExp(FORBIDDEN.replace(/[!]/g, '\\$&')),
		);
		assert.deepEqual(
			(await installedPackages(n8n.baseUrl, n8n.cookie)).map((p) => p.packageName),
			[],
			'n8n recorded no installed package',
		);
	},
);

test(
	'false, in n8n 2.41.1: the package already in ~/.n8n/nodes still loads (the loading half of the change is n8n 3)',
	{ timeout: 15 * 60_000 },
	async () => {
		const n8n = await n8nWith('false');
		// n8n 2.41.1's loader (community-packages.module.js, nodeLoaders) checks only
		// N8N_COMMUNITY_PACKAGES_PREVENT_LOADING; the rule says n8n 3 will stop loading such packages.
		// When an n8n line does, this assertion fails and the README's Install note must say so.
		const loaded = await loadedNodeTypes(n8n.baseUrl, n8n.cookie);
		for (const type of NODE_TYPES) assert.ok(loaded.includes(type), `${type} is loaded`);
	},
);

test(
	'true: the package in ~/.n8n/nodes loads, and installing it through the Community nodes API works',
	{ timeout: 15 * 60_000 },
	async () => {
		const n8n = await n8nWith('true');
		assert.equal(
			(await frontendSettings(n8n.baseUrl, n8n.cookie)).unverifiedCommunityNodesEnabled,
			true,
		);
		const loaded = await loadedNodeTypes(n8n.baseUrl, n8n.cookie);
		for (const type of NODE_TYPES) assert.ok(loaded.includes(type), `${type} is loaded`);

		const installed = await installPackage(n8n.baseUrl, n8n.cookie, PACKAGE);
		assert.equal(installed.status, 200, installed.text.slice(0, 300));
		assert.equal(installed.json.data.packageName, PACKAGE);
		assert.deepEqual(
			installed.json.data.installedNodes
				.map((/** @type {{ type: string }} */ node) => node.type)
				.sort(),
			[...NODE_TYPES].sort(),
		);
		const listed = await installedPackages(n8n.baseUrl, n8n.cookie);
		assert.deepEqual(
			listed.map((p) => p.packageName),
			[PACKAGE],
		);
	},
);
