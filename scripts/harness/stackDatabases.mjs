// The stack's PostgreSQL: n8n's own database and the keys database (processed_events and the
// template's business_log), on one server or, for restart tests, the keys on a second one; with the
// pooler option both credentials reach the keys database through PgBouncer in transaction mode.
import pg from 'pg';

import { createOwnerRole, startKeyStoreServer } from './keystore.mjs';
import { progress } from './log.mjs';
import { startPgBouncer } from './pgbouncer.mjs';
import { randomSuffix, startPostgres } from './postgres.mjs';
import { startReplicatedKeyStore } from './replication.mjs';
import { BUSINESS_LOG_SQL } from './templates.mjs';

/**
 * @param {object} options
 * @param {string} options.workDir
 * @param {string} options.label part of both database names.
 * @param {{ separate?: boolean, role?: string, replicated?: { synchronous?: boolean } }} [options.keyStore] see startStack.
 * @param {{ defaultPoolSize?: number, maxClientConn?: number, serverLoginRetry?: number }} [options.pooler] see startStack.
 * @param {boolean} [options.businessOnN8nServer] see startStack.
 * @param {Record<string, string>} [options.serverSettings] see startStack.
 * @param {import('./teardown.mjs').Teardown} options.teardown
 */
export async function startStackDatabases({
	workDir,
	label,
	keyStore,
	pooler: poolerOptions,
	businessOnN8nServer = false,
	serverSettings,
	teardown,
}) {
	if (keyStore?.role && !keyStore.separate)
		throw new Error('keyStore.role needs keyStore.separate');
	if (keyStore?.replicated && (keyStore.separate || keyStore.role))
		throw new Error('keyStore.replicated is a key store of its own: no separate, no role');
	const server = await startPostgres({ workDir, settings: serverSettings });
	teardown.push(() => server.stop());
	const keyServer = keyStore?.replicated
		? await startReplicatedKeyStore({ workDir, synchronous: keyStore.replicated.synchronous })
		: keyStore?.separate
			? await startKeyStoreServer({ workDir })
			: server;
	if (keyServer !== server) teardown.push(() => keyServer.stop());

	const suffix = randomSuffix();
	const keysDatabase = `idem_${label}_${suffix}`.replace(/[^a-z0-9_]/g, '_');
	const n8nDatabase = `n8n_${label}_${suffix}`.replace(/[^a-z0-9_]/g, '_');
	await createDatabase(keyServer, keysDatabase, teardown);
	await createDatabase(server, n8nDatabase, teardown);
	// The webhook template's business step on a database of its own beside n8n's, not in the keys database.
	const businessDatabase = businessOnN8nServer
		? `biz_${label}_${suffix}`.replace(/[^a-z0-9_]/g, '_')
		: keysDatabase;
	if (businessOnN8nServer) await createDatabase(server, businessDatabase, teardown);
	progress(
		`PostgreSQL: created databases ${keysDatabase} (keys, business_log) and ${n8nDatabase} (n8n)${businessOnN8nServer ? `, ${businessDatabase} (business_log, beside n8n's)` : ''}`,
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

	// The harness's own connections go to the servers directly, never through the pooler; to a
	// replicated key store's current primary, whichever node that is.
	const keysDb =
		'primaryPool' in keyServer
			? keyServer.primaryPool(keysDatabase)
			: new pg.Pool({ ...keyServer.clientConfig(keysDatabase), max: 4 });
	keysDb.on('error', () => undefined);
	const n8nDb = new pg.Pool({ ...server.clientConfig(n8nDatabase), max: 2 });
	n8nDb.on('error', () => undefined);
	const businessDb = businessOnN8nServer
		? new pg.Pool({ ...server.clientConfig(businessDatabase), max: 2 })
		: keysDb;
	businessDb.on('error', () => undefined);
	teardown.push(async () => {
		await keysDb.end().catch(() => undefined);
		await n8nDb.end().catch(() => undefined);
		if (businessDb !== keysDb) await businessDb.end().catch(() => undefined);
	});
	await keysDb.query(BUSINESS_LOG_SQL);
	if (businessDb !== keysDb) await businessDb.query(BUSINESS_LOG_SQL);
	if (keyStore?.role) await keysDb.query(`ALTER TABLE business_log OWNER TO "${keyLogin.user}"`);

	return {
		server,
		keyServer,
		keyLogin,
		pooler,
		keysDatabase,
		n8nDatabase,
		/** n8n's own database as startN8nServer's `db` takes it. */
		n8nDbLogin: {
			host: server.host,
			port: server.port,
			user: server.user,
			password: server.password,
			database: n8nDatabase,
		},
		keysDb,
		n8nDb,
		businessDatabase,
		/** Where the webhook template's business_log is: keysDb, or with businessOnN8nServer its own database. */
		businessDb,
		/** What the Idempotency Postgres credential holds: the keys database, directly or through the pooler. */
		keysFields: {
			host: keysEndpoint.host,
			port: keysEndpoint.port,
			database: keysDatabase,
			user: keysEndpoint.user,
			password: keysEndpoint.password,
		},
		/** What the Business Postgres credential holds: the same, or the business database beside n8n's. */
		businessFields: businessOnN8nServer
			? {
					host: server.host,
					port: server.port,
					database: businessDatabase,
					user: server.user,
					password: server.password,
				}
			: undefined,
	};
}

/** A fresh database; dropped at the end on a DATABASE_URL server (an embedded one is removed whole). */
async function createDatabase(host, name, teardown) {
	await host.createDatabase(name);
	teardown.push(async () => {
		if (host.kind === 'url') await host.dropDatabase(name);
	});
}
