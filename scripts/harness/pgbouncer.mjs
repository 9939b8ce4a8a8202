// PgBouncer (Debian's `pgbouncer` package) in front of a PostgreSQL server, on a free port of
// 127.0.0.1, so a suite can reach the key store the way production often does: through a pooler in
// transaction mode, where consecutive transactions of one client may run on different server
// connections and nothing but a transaction's own work can be relied on.
//
// PgBouncer refuses to run as root: as root it runs as the `postgres` account (as the embedded
// PostgreSQL does), so its folder, config and auth file are made readable by that account.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, chmodSync, chownSync, constants, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';

import { progress, waitFor } from './log.mjs';
import { freePort } from './ports.mjs';
import { harnessClientConfig, postgresAccount } from './postgres.mjs';
import { spawnTracked, stopTracked, tailOf } from './processes.mjs';

/** The pgbouncer binary, or undefined when the package is not installed (`apt-get install -y pgbouncer`). */
export function pgbouncerBinary() {
	for (const candidate of ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer']) {
		try {
			accessSync(candidate, constants.X_OK);
			return candidate;
		} catch {
			// not here
		}
	}
	try {
		return (
			execFileSync('sh', ['-c', 'command -v pgbouncer'], { encoding: 'utf8' }).trim() || undefined
		);
	} catch {
		return undefined;
	}
}

/** A value for pgbouncer.ini or its auth file: double quotes, a quote written twice. */
function quoted(text) {
	return `"${String(text).replace(/"/g, '""')}"`;
}

/**
 * Starts PgBouncer in `<workDir>/<name>` in front of `server` ({ host, port }), every database name
 * passed through (`* = host=… port=…`). Clients log in as `login.user` with `pooler.password`
 * (SCRAM, checked by PgBouncer); PgBouncer logs in to the server with `login.password` (empty for a
 * trust server: then PgBouncer's own password is a random one, so a wrong password can still be tried).
 * serverLoginRetry: seconds PgBouncer refuses logins after a failed server login (its default 15);
 * `pointAt(server)` re-points it at another server (a promoted standby) with RELOAD.
 * @param {{ workDir: string, server: { host: string, port: number }, login: { user: string, password?: string },
 *   poolMode?: 'transaction' | 'session' | 'statement', maxClientConn?: number, defaultPoolSize?: number,
 *   serverLoginRetry?: number, name?: string }} options
 */
export async function startPgBouncer({
	workDir,
	server,
	login,
	poolMode = 'transaction',
	maxClientConn = 200,
	defaultPoolSize = 5,
	serverLoginRetry,
	name = 'pgbouncer',
}) {
	const binary = pgbouncerBinary();
	if (!binary) throw new Error('pgbouncer is not installed (Debian: apt-get install -y pgbouncer)');
	const account = postgresAccount();
	const baseDir = path.join(workDir, name);
	mkdirSync(baseDir, { recursive: true });
	// The account PgBouncer runs as must reach its config inside the harness's temp folder.
	chmodSync(workDir, 0o755);
	chmodSync(baseDir, 0o755);

	const user = login.user;
	// PgBouncer logs in to the server with the auth file's password; a trust server ignores it.
	const password = login.password || randomBytes(12).toString('hex');
	const authFile = path.join(baseDir, 'userlist.txt');
	writeFileSync(authFile, `${quoted(user)} ${quoted(password)}\n`, { mode: 0o600 });
	if (account.uid !== undefined) chownSync(authFile, account.uid, account.gid);

	const port = await freePort();
	const configFile = path.join(baseDir, 'pgbouncer.ini');
	/** The ini in front of `target`; rewritten (then RELOAD) to re-point PgBouncer. */
	const writeConfig = (target) =>
		writeFileSync(
			configFile,
			[
				'[databases]',
				`* = host=${target.host} port=${target.port}`,
				'[pgbouncer]',
				'listen_addr = 127.0.0.1',
				`listen_port = ${port}`,
				// No Unix socket: nothing outside this folder, nothing another run could collide with.
				'unix_socket_dir =',
				'auth_type = scram-sha-256',
				`auth_file = ${authFile}`,
				`pool_mode = ${poolMode}`,
				`max_client_conn = ${maxClientConn}`,
				`default_pool_size = ${defaultPoolSize}`,
				...(serverLoginRetry === undefined ? [] : [`server_login_retry = ${serverLoginRetry}`]),
				// SHOW POOLS / SHOW STATS on the admin console (database `pgbouncer`).
				`admin_users = ${user}`,
				'',
			].join('\n'),
			{ mode: 0o644 },
		);
	writeConfig(server);

	const logFile = path.join(baseDir, 'pgbouncer.log');
	const env = { PATH: process.env.PATH, LC_ALL: 'C', LANG: 'C' };
	// SIGINT is PgBouncer's safe shutdown (waits for clients); SIGTERM its immediate one.
	const processHandle = spawnTracked(binary, [configFile], {
		name: `PgBouncer (${name})`,
		cwd: baseDir,
		env,
		logFile,
		stopSignal: 'SIGTERM',
		...account,
	});

	const clientConfig = (database) =>
		harnessClientConfig({ host: '127.0.0.1', port, user, password }, database);

	/** Rows of an admin-console command (SHOW POOLS, SHOW STATS, SHOW CLIENTS …): simple protocol only. */
	async function admin(command) {
		const client = new pg.Client(clientConfig('pgbouncer'));
		client.on('error', () => undefined);
		await client.connect();
		try {
			return (await client.query(command)).rows;
		} finally {
			await client.end().catch(() => undefined);
		}
	}

	try {
		await waitFor(
			`PgBouncer (${name}) on 127.0.0.1:${port}`,
			async () => {
				if (processHandle.exitStatus)
					throw new Error(
						`PgBouncer exited (${JSON.stringify(processHandle.exitStatus)}):\n${tailOf(logFile, 20)}`,
					);
				await admin('SHOW VERSION');
				return true;
			},
			{ timeoutMs: 30_000, intervalMs: 100 },
		);
	} catch (error) {
		await stopTracked(processHandle, { graceMs: 5_000 });
		throw error;
	}
	progress(
		`PgBouncer: ${poolMode} mode on 127.0.0.1:${port} in front of ${server.host}:${server.port} (default_pool_size ${defaultPoolSize}, max_client_conn ${maxClientConn}, pid ${processHandle.pid})`,
	);

	return {
		host: '127.0.0.1',
		port,
		poolMode,
		defaultPoolSize,
		maxClientConn,
		/** What clients log in with: the server's user, PgBouncer's password. */
		login: { user, password },
		logFile,
		process: processHandle,
		clientConfig,
		admin,
		/** Transactions PgBouncer has passed to the server for `database` so far (SHOW STATS). */
		async transactions(database) {
			const row = (await admin('SHOW STATS')).find((stats) => stats.database === database);
			return Number(row?.total_xact_count ?? 0);
		},
		/** Re-points every database at `target` ({ host, port }): the ini rewritten, then RELOAD. */
		async pointAt(target) {
			writeConfig(target);
			await admin('RELOAD');
			progress(`PgBouncer: re-pointed at ${target.host}:${target.port} (RELOAD)`);
		},
		stop: async () => await stopTracked(processHandle, { graceMs: 10_000 }),
	};
}
