// The stack the UI suite drives: n8n 2.41.1 as a user first meets it (no package, no credentials,
// no workflows, no owner), a throw-away npm registry on 127.0.0.1 that the package is published to,
// and an embedded PostgreSQL holding n8n's own database and the keys database the user's
// credential will point at.
//
// One thing differs from a user's server: n8n installs community packages from a registry other
// than npmjs.org only with the licensed feature `feat:communityNodes:customRegistry`. n8n's own
// test mode (E2E_TESTS=true) makes license features switchable through PATCH /rest/e2e/feature;
// the suite switches on that one feature, and N8N_COMMUNITY_PACKAGES_REGISTRY names the local
// registry. Everything else is n8n's default user path.
import path from 'node:path';

import {
	CUSTOM_REGISTRY_FEATURE,
	registryInstallEnv,
	setLicenseFeature,
} from '../../../scripts/harness/communityApi.mjs';
import { ensureN8n, progress, startN8nServer } from '../../../scripts/harness/index.mjs';
import { freePort } from '../../../scripts/harness/ports.mjs';
import { startRegistry } from '../../../scripts/harness/registry.mjs';
import { startStackDatabases } from '../../../scripts/harness/stackDatabases.mjs';
import { createTeardown, createWorkFolder } from '../../../scripts/harness/teardown.mjs';

export async function startUiStack({ packageName }) {
	const teardown = createTeardown();
	try {
		const paths = await ensureN8n();
		const { workDir, userFolder, logDir } = createWorkFolder('n8n-idem-ui-', teardown);

		// The wrong-password check needs a server that asks for passwords: the embedded one does
		// (scram-sha-256); a DATABASE_URL server often trusts 127.0.0.1.
		delete process.env.DATABASE_URL;
		const { n8nDbLogin, keysDb, keysFields } = await startStackDatabases({
			workDir,
			label: 'ui',
			teardown,
		});

		const registry = await startRegistry({ dir: path.join(workDir, 'registry'), packageName });
		teardown.push(() => registry.stop());

		const ctx = {
			paths,
			userFolder,
			logDir,
			port: await freePort(),
			brokerPort: await freePort(),
			db: n8nDbLogin,
			extraEnv: registryInstallEnv(registry.url),
		};
		const n8n = await startN8nServer(ctx);
		teardown.push(() => n8n.stop());
		await setLicenseFeature(n8n.baseUrl, CUSTOM_REGISTRY_FEATURE, true);
		progress(
			`n8n: ${CUSTOM_REGISTRY_FEATURE} switched on through PATCH /rest/e2e/feature; registry ${registry.url}`,
		);

		return {
			workDir,
			n8n,
			baseUrl: n8n.baseUrl,
			registry,
			keysDb,
			/** What the user types into the Idempotency Postgres credential. */
			keysLogin: keysFields,
			stop: teardown.stop,
		};
	} catch (error) {
		await teardown.stop();
		throw error;
	}
}

/**
 * n8n as an n8n Cloud user meets it: community packages off (N8N_COMMUNITY_PACKAGES_ENABLED=false),
 * this package nowhere, no registry, no test mode; n8n's own database and the keys database the
 * user's Postgres credential points at (its business_log made by the harness: a test that creates
 * it itself drops it first).
 */
export async function startCloudUiStack() {
	const teardown = createTeardown();
	try {
		const paths = await ensureN8n();
		const { workDir, userFolder, logDir } = createWorkFolder('n8n-idem-cloud-ui-', teardown);
		delete process.env.DATABASE_URL;
		const { n8nDbLogin, keysDb, keysFields } = await startStackDatabases({
			workDir,
			label: 'cloudui',
			teardown,
		});
		const n8n = await startN8nServer({
			paths,
			userFolder,
			logDir,
			port: await freePort(),
			brokerPort: await freePort(),
			db: n8nDbLogin,
			extraEnv: { N8N_COMMUNITY_PACKAGES_ENABLED: 'false' },
		});
		teardown.push(() => n8n.stop());
		return {
			workDir,
			n8n,
			baseUrl: n8n.baseUrl,
			keysDb,
			keysLogin: keysFields,
			stop: teardown.stop,
		};
	} catch (error) {
		await teardown.stop();
		throw error;
	}
}
