// The stack's PostgreSQL: n8n's own database and the keys database (processed_events and the
// template's business_log), on one server or, for restart tests, the keys on a second one; with the
// pooler option both credentials reach the keys database through PgBouncer in transaction mode.
import pg from 'pg';

import { createOwnerRole, startKeyStoreServer } from './keystore.mjs';
import { progress } from './log.mjs';
import { startPgBouncer } from './pgbouncer.mjs';
import { randomSuffix, startPostgres } from './postgres.mjs';
import { BUSINESS_LOG_SQL } from './templates.mjs';

/**
 * @param {object} options
 * @param {string} options.workDir
 * @param {string} options.label part of both database names.
 * @param {{ separate?: boolean, role?: string }} [options.keyStore] see startStack.
 * @param {{ defaultPoolSize?: number, maxClientConn?: number }} [options.pooler] see startStack.
 * @param {import('./teardown.mjs').Teardown} options.teardown
 */
export async function startStackDatabases({
	workDir,
	label,
	keyStore,
	pooler: poolerOptions,
	teardown,
}) {
	if (keyStore?.role && !keyStore.separate)
		throw new Error('keyStore.role needs keyStore.separate');
	const server = await startPostgres({ workDir });
	teardown.push(() => server.stop());
	const keyServer = keyStore?.separate ? await startKeyStoreServer({ workDir }) : server;
	if (keyServer !== server) teardown.push(() => keyServer.stop());

	const suffix = randomSuffix();
	const keysDatabase = `idem_${label}_${suffix}`.replace(/[^a-z0-9_]/g, '_');
	const n8nDatabase = `n8n_${label}_${suffix}`.replace(/[^a-z0-9_]/g, '_');
	await createDatabase(keyServer, keysDatabase, teardown);
	await createDatabase(server, n8nDatabase, teardown);
	progress(
		`PostgreSQL: created databases ${keysDatabase} (keys, business_log) and ${n8nDatabase} (n8n)`,
	);
	const keyLogin = keyStore?.role
		? await createOwnerRole(keyServer, keysDatabase, keyStore.role)
		: { user: keyServer.user, password: keyServer.password };

	const pooler = poolerOptions
		? await startPgBouncer({ workDir, server: keyServer, login: keyLogin, ...poolerOptions })
		: undefined;
	if (pooler) teardown.push(() => pooler.stop());
	const keysEndpoint = pooler
		? { host: pooler.host, port: pooler.port, ...pooler.login }
		: { host: keyServer.host, port: keyServer.port, ...keyLogin };

	// The harness's own connections go to the servers directly, never through the pooler.
	const keysDb = new pg.Pool({ ...keyServer.clientConfig(keysDatabase), max: 4 });
	keysDb.on('error', () => undefined);
	const n8nDb = new pg.Pool({ ...server.clientConfig(n8nDatabase), max: 2 });
	n8nDb.on('error', () => undefined);
	teardown.push(async () => {
		await keysDb.end().catch(() => undefined);
		await n8nDb.end().catch(() => undefined);
	});
	await keysDb.query(BUSINESS_LOG_SQL);
	if (keyStore?.role) await keysDb.query(`ALTER TABLE business_log OWNER TO "${keyLogin.user}"`);

	return {
		server,
		keyServer,
		keyLogin,
		pooler,
		keysDatabase,
		n8nDatabase,
		keysDb,
		n8nDb,
		/** What both Postgres credentials hold: the keys database, directly or through the pooler. */
		keysFields: {
			host: keysEndpoint.host,
			port: keysEndpoint.port,
			database: keysDatabase,
			user: keysEndpoint.user,
			password: keysEndpoint.password,
		},
	};
}

/** A fresh database; dropped at the end on a DATABASE_URL server (an embedded one is removed whole). */
async function createDatabase(host, name, teardown) {
	await host.createDatabase(name);
	teardown.push(async () => {
		if (host.kind === 'url') await host.dropDatabase(name);
	});
}
