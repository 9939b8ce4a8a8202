// A key store that fails over: a PostgreSQL 15 primary and a hot standby made with pg_basebackup,
// streaming on 127.0.0.1, from this machine's Debian binaries (the embedded server ships no
// pg_basebackup). A fault test kills the primary's postmaster with kill -9, promotes the standby
// with pg_ctl promote, and may build a new standby from the new primary for its next round, the way
// a managed service or Patroni replaces the node it lost. startStack's `keyStore: { replicated }`.
//
// As root every command runs as the `postgres` account (PostgreSQL refuses root), in data folders
// it owns inside the harness's temp folder. Every node has the same superuser and password, so the
// credentials n8n holds (and PgBouncer's auth file) stay valid whichever node is the primary.
import { randomBytes } from 'node:crypto';
import {
	accessSync,
	appendFileSync,
	chmodSync,
	chownSync,
	constants,
	mkdirSync,
	rmSync,
	writeFileSync,
} from 'node:fs';
import path from 'node:path';
import pg from 'pg';

import { progress, waitFor } from './log.mjs';
import { openReplicationLink } from './replicationLink.mjs';
import { freePort } from './ports.mjs';
import { harnessClientConfig, initdbArguments, postgresAccount, quoteIdent } from './postgres.mjs';
import { runTracked, spawnTracked, stopTracked, tailOf } from './processes.mjs';

/** Debian's PostgreSQL 15 (`apt-get install -y postgresql-15`); N8N_E2E_PG_BIN points elsewhere. */
export function replicationBinaries() {
	const dir = process.env.N8N_E2E_PG_BIN ?? '/usr/lib/postgresql/15/bin';
	const binaries = Object.fromEntries(
		['initdb', 'postgres', 'pg_ctl', 'pg_basebackup'].map((name) => [name, path.join(dir, name)]),
	);
	for (const file of Object.values(binaries)) {
		try {
			accessSync(file, constants.X_OK);
		} catch {
			throw new Error(
				`${file} is missing: a replicated key store needs PostgreSQL's server binaries with pg_basebackup (Debian: apt-get install -y postgresql-15, or set N8N_E2E_PG_BIN)`,
			);
		}
	}
	return binaries;
}

/**
 * Settings every node shares (pg_basebackup copies postgresql.conf to the standby). fsync stays
 * off: a kill -9 of the postmaster loses nothing the OS already holds, and these are throw-away
 * clusters; synchronous_commit stays at its default `on`, which is what synchronous replication
 * waits on.
 */
const SHARED_SETTINGS = [
	"listen_addresses = '127.0.0.1'",
	"unix_socket_directories = ''",
	'max_connections = 200',
	'fsync = off',
	'wal_level = replica',
	'max_wal_senders = 10',
	'hot_standby = on',
	// A standby must not fall behind so far that the primary recycled the WAL it still needs.
	'wal_keep_size = 256MB',
	'wal_receiver_status_interval = 1s',
	// A standby whose primary died waits this long before it looks for WAL again, and a promote
	// request waits for that wait to end (PostgreSQL 15): 5 s by default.
	"wal_retrieve_retry_interval = '200ms'",
];

/**
 * @param {{ workDir: string, name?: string, synchronous?: boolean }} options
 *   synchronous: the first standby is named in the primary's synchronous_standby_names, so every
 *   commit waits until the standby has flushed it (synchronous_commit = on); else asynchronous.
 */
export async function startReplicatedKeyStore({
	workDir,
	name = 'replicated',
	synchronous = false,
}) {
	const binaries = replicationBinaries();
	const account = postgresAccount();
	const baseDir = path.join(workDir, name);
	mkdirSync(baseDir, { recursive: true });
	// The postgres account must reach the data folders inside the harness's temp folder.
	chmodSync(workDir, 0o755);
	chmodSync(baseDir, 0o755);
	const user = 'postgres';
	const password = randomBytes(12).toString('hex');
	const env = {
		PATH: process.env.PATH,
		LC_ALL: 'C',
		LC_MESSAGES: 'C',
		LANG: 'C',
		PGPASSWORD: password,
	};
	const ownedByPostgres = (file) => {
		if (account.uid !== undefined) chownSync(file, account.uid, account.gid);
	};
	const run = async (binary, args, label, logFile) => {
		const status = await runTracked(binary, args, {
			name: label,
			cwd: baseDir,
			env,
			logFile,
			timeoutMs: 120_000,
			...account,
		});
		if (status.code !== 0)
			throw new Error(
				`${label} failed (exit ${status.code ?? status.signal}):\n${tailOf(logFile, 30)}`,
			);
	};

	/** @typedef {{ name: string, host: string, port: number, dataDir: string, logFile: string, process?: import('./processes.mjs').TrackedProcess, role: 'primary' | 'standby' | 'killed', link?: import('./replicationLink.mjs').ReplicationLink }} ReplicaNode */
	/** @type {ReplicaNode[]} */
	const nodes = [];
	let primary;
	let standby;
	/** Whether the primary waits for its standby on every commit (synchronous_standby_names). */
	let waitsForStandby = false;
	const clientConfig = (node, database = 'postgres') =>
		harnessClientConfig({ host: '127.0.0.1', port: node.port, user, password }, database);

	/**
	 * @param {ReplicaNode} node
	 * @param {string} sql
	 * @param {unknown[]} [params]
	 * @returns {Promise<pg.QueryResult<any>>}
	 */
	async function query(node, sql, params = [], database = 'postgres') {
		const client = new pg.Client(clientConfig(node, database));
		client.on('error', () => undefined);
		await client.connect();
		try {
			return await client.query(sql, params);
		} finally {
			await client.end().catch(() => undefined);
		}
	}

	async function newNode(role) {
		const node = {
			name: `node${nodes.length + 1}`,
			host: '127.0.0.1',
			port: await freePort(),
			dataDir: '',
			logFile: '',
			role,
		};
		node.dataDir = path.join(baseDir, node.name);
		node.logFile = path.join(baseDir, `${node.name}.log`);
		mkdirSync(node.dataDir, { mode: 0o700 });
		ownedByPostgres(node.dataDir);
		nodes.push(node);
		return node;
	}

	async function startNode(node) {
		node.process = spawnTracked(binaries.postgres, ['-D', node.dataDir, '-p', String(node.port)], {
			name: `PostgreSQL (${name} ${node.name})`,
			cwd: baseDir,
			env,
			logFile: node.logFile,
			// SIGINT is PostgreSQL's fast shutdown; SIGQUIT its immediate one.
			stopSignal: 'SIGINT',
			lastResortSignal: 'SIGQUIT',
			...account,
		});
		const up = await waitFor(
			`PostgreSQL (${name} ${node.name}) on 127.0.0.1:${node.port}`,
			async () => {
				// An exited server ends the wait at once (a thrown error would only be retried).
				if (node.process?.exitStatus) return { exited: node.process.exitStatus };
				await query(node, 'SELECT 1');
				return { exited: undefined };
			},
			{ timeoutMs: 60_000, intervalMs: 100 },
		);
		if (up.exited)
			throw new Error(
				`PostgreSQL (${name} ${node.name}) exited (${JSON.stringify(up.exited)}):\n${tailOf(node.logFile, 20)}`,
			);
	}

	async function initPrimary() {
		const node = await newNode('primary');
		const passwordFile = path.join(baseDir, 'pwfile');
		writeFileSync(passwordFile, `${password}\n`, { mode: 0o644 });
		try {
			await run(
				binaries.initdb,
				initdbArguments({ dataDir: node.dataDir, user, passwordFile }),
				`initdb (${name})`,
				path.join(baseDir, 'initdb.log'),
			);
		} finally {
			rmSync(passwordFile, { force: true });
		}
		appendFileSync(path.join(node.dataDir, 'postgresql.conf'), `\n${SHARED_SETTINGS.join('\n')}\n`);
		await startNode(node);
		progress(
			`PostgreSQL: ${name} primary ${node.name} on 127.0.0.1:${node.port} (pid ${node.process?.pid})`,
		);
		return node;
	}

	/**
	 * A new hot standby of the current primary (pg_basebackup, WAL streamed during the copy), named
	 * by its application_name; with `synchronous` the primary waits for it on every commit, else the
	 * primary's synchronous_standby_names is emptied.
	 */
	async function addStandby({ synchronous: sync = false } = {}) {
		if (standby) throw new Error(`${name} already has a standby (${standby.name})`);
		const node = await newNode('standby');
		await run(
			binaries.pg_basebackup,
			[
				`--pgdata=${node.dataDir}`,
				'--host=127.0.0.1',
				`--port=${primary.port}`,
				`--username=${user}`,
				'--wal-method=stream',
				'--checkpoint=fast',
				'--no-sync',
			],
			`pg_basebackup (${name} ${node.name})`,
			path.join(baseDir, `${node.name}-basebackup.log`),
		);
		// The standby streams through a relay the test can hold back (holdStandbyBehind).
		node.link = await openReplicationLink(primary.port);
		const signal = path.join(node.dataDir, 'standby.signal');
		writeFileSync(signal, '', { mode: 0o600 });
		ownedByPostgres(signal);
		// postgresql.auto.conf came from the primary; the last setting of a name wins. A promoted
		// standby starts without a synchronous standby of its own (until one is added), else every
		// commit on it would wait for a standby that does not exist.
		appendFileSync(
			path.join(node.dataDir, 'postgresql.auto.conf'),
			`\nprimary_conninfo = 'host=127.0.0.1 port=${node.link.port} user=${user} password=${password} application_name=${node.name}'\nsynchronous_standby_names = ''\n`,
		);
		await startNode(node);
		standby = node;
		await replicate({ synchronous: sync });
		return node;
	}

	/**
	 * Makes the primary wait for its standby on every commit (`synchronous`), or not, and returns
	 * once pg_stat_replication shows the standby streaming in that mode.
	 */
	async function replicate({ synchronous: sync }) {
		if (!standby) throw new Error(`${name} has no standby`);
		const node = standby;
		waitsForStandby = sync;
		await query(primary, `ALTER SYSTEM SET synchronous_standby_names = '${sync ? node.name : ''}'`);
		await query(primary, 'SELECT pg_reload_conf()');
		const state = await waitFor(
			`${node.name} streaming from ${primary.name} (${sync ? 'sync' : 'async'})`,
			async () => {
				const { rows } = await query(
					primary,
					'SELECT state, sync_state FROM pg_stat_replication WHERE application_name = $1',
					[node.name],
				);
				const row = rows[0];
				return row?.state === 'streaming' && row.sync_state === (sync ? 'sync' : 'async')
					? row
					: undefined;
			},
			{ timeoutMs: 60_000, intervalMs: 200 },
		);
		progress(
			`PostgreSQL: ${name} standby ${node.name} on 127.0.0.1:${node.port} streaming from ${primary.name} (${state.sync_state})`,
		);
	}

	/** kill -9 of the primary's postmaster only, as a crashed host would leave it; returns when it died. */
	async function killPrimary() {
		const victim = primary;
		const pid = victim.process?.pid;
		if (!pid || victim.process?.exitStatus) throw new Error(`${victim.name} is not running`);
		process.kill(pid, 'SIGKILL');
		await victim.process?.exited;
		victim.role = 'killed';
		progress(`PostgreSQL: ${name} primary ${victim.name} killed (kill -9 ${pid})`);
		return victim;
	}

	/**
	 * Holds the primary's WAL back from the standby (its replication link), as a standby in another
	 * zone or under load falls behind: an asynchronously replicated primary goes on acknowledging
	 * commits the standby does not have. `release()` lets it catch up; `cutWithPrimary()` (after
	 * killPrimary) drops what it never got and returns how many bytes that was.
	 */
	function holdStandbyBehind() {
		const link = standby?.link;
		if (!link) throw new Error(`${name} has no standby to hold behind`);
		// A synchronous primary would stop acknowledging commits instead.
		if (waitsForStandby)
			throw new Error(`${name} replicates synchronously: nothing to hold behind`);
		link.hold();
		progress(`PostgreSQL: ${name} standby ${standby.name} held behind ${primary.name}`);
		return { release: () => link.release(), cutWithPrimary: () => link.cut() };
	}

	/** pg_ctl promote on the standby, waiting until it accepts writes; it is the primary from then on. */
	async function promote() {
		if (!standby) throw new Error(`${name} has no standby to promote`);
		const node = standby;
		await run(
			binaries.pg_ctl,
			['promote', '-D', node.dataDir, '-w', '-t', '60'],
			`pg_ctl promote (${name} ${node.name})`,
			path.join(baseDir, `${node.name}-promote.log`),
		);
		await waitFor(
			`${node.name} out of recovery`,
			async () =>
				(await query(node, 'SELECT pg_is_in_recovery() AS r')).rows[0].r === false || undefined,
			{ timeoutMs: 30_000, intervalMs: 50 },
		);
		// Its link led to the primary it replaced.
		await node.link?.close();
		node.link = undefined;
		node.role = 'primary';
		primary = node;
		standby = undefined;
		waitsForStandby = false;
		progress(`PostgreSQL: ${name} ${node.name} promoted, the primary on 127.0.0.1:${node.port}`);
		return node;
	}

	/** Everything still running (the killed postmaster's backends too), fast shutdown first. */
	async function stop() {
		for (const node of [...nodes].reverse())
			if (node.process) await stopTracked(node.process, { graceMs: 15_000 });
		for (const node of nodes) await node.link?.close();
	}

	/**
	 * A pg.Pool look-alike on `database` of whichever node is the primary when a query starts: the
	 * harness reads the key store across failovers without knowing which node that is.
	 */
	function primaryPool(database, { max = 4 } = {}) {
		const pools = new Map();
		const poolOf = (node) => {
			let pool = pools.get(node);
			if (!pool) {
				pool = new pg.Pool({ ...clientConfig(node, database), max });
				pool.on('error', () => undefined);
				pools.set(node, pool);
			}
			return pool;
		};
		return {
			query: (...args) => poolOf(primary).query(...args),
			on: () => undefined,
			end: async () => {
				for (const pool of pools.values()) await pool.end().catch(() => undefined);
			},
		};
	}

	try {
		primary = await initPrimary();
		await addStandby({ synchronous });
	} catch (error) {
		await stop();
		throw error;
	}

	return {
		kind: 'replicated',
		host: '127.0.0.1',
		/** The first primary's port (PgBouncer starts in front of it); `primary.port` follows failovers. */
		port: primary.port,
		user,
		password,
		adminDatabase: 'postgres',
		get primary() {
			return primary;
		},
		get standby() {
			return standby;
		},
		nodes,
		clientConfig: (database = 'postgres') => clientConfig(primary, database),
		/** Runs on the current primary. */
		admin: (sql, database = 'postgres') => query(primary, sql, [], database),
		query: (node, sql, params, database) => query(node, sql, params, database),
		createDatabase: async (database) => {
			await query(primary, `CREATE DATABASE ${quoteIdent(database)}`);
		},
		dropDatabase: async (database) => {
			await query(primary, `DROP DATABASE IF EXISTS ${quoteIdent(database)} WITH (FORCE)`);
		},
		primaryPool,
		addStandby,
		replicate,
		holdStandbyBehind,
		killPrimary,
		promote,
		stop,
	};
}
