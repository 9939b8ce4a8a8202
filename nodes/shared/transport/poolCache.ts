import { LoggerProxy, type Logger } from 'n8n-workflow';

import {
	clientConfig,
	digestOfSettings,
	maxConnections,
	poolSettings,
	type IdempotencyPostgresCredential,
} from './connectionOptions';
import { Pool } from './pg';
import { poolTimings } from './poolTimings';

export interface PoolEntry {
	pool: Pool;
	/** Tables already checked or created through this pool (`"schema"."table"`), each settled once. */
	preparedTables: Map<string, Promise<void>>;
	/** The last error an idle client reported (server restart, network drop); kept for diagnostics. */
	lastIdleError?: Error;
}

export interface PoolRequest {
	/** n8n's id of the credential: when its settings change, the pool of the old settings is closed. */
	credentialId?: string | null;
	/** Where the pool reports its errors: the logger of the execution that used it last. */
	logger?: Logger;
}

/** A cached pool and what decides when it is closed. */
interface CachedPool {
	entry: PoolEntry;
	digest: string;
	/** host:port/database as user, for log lines (never the password). */
	target: string;
	logger: Logger;
	lastUsedMs: number;
	/** Why it is no longer handed out (credential edited); undefined while it is the current pool. */
	retiredBecause?: string;
	closing: boolean;
}

/** Pools handed out to executions, by digest of their settings. */
const current = new Map<string, CachedPool>();
/** Every pool not closed yet, including retired ones still finishing an execution's statements. */
const open = new Set<CachedPool>();
/** The digest each credential id was last used with, to notice an edited credential. */
const digestByCredentialId = new Map<string, string>();
/**
 * The settings each credential id was last hashed from, with their digest: every execution hands
 * the node a fresh copy of the same credential, and an HMAC per execution and node is wasted work
 * when nothing changed. Compared as the whole settings text, so any edit gets a new digest. It holds
 * the password only as the pool's own connection options do: in this process's memory, never logged.
 */
const lastHashed = new Map<string, { settings: string; digest: string }>();

function digestFor(
	credential: IdempotencyPostgresCredential,
	credentialId?: string | null,
): string {
	// Without an id (a workflow run outside n8n's database) one shared slot: still exact, since the
	// whole settings text is compared.
	const slot = credentialId ?? '';
	const settings = poolSettings(credential);
	const last = lastHashed.get(slot);
	if (last !== undefined && last.settings === settings) return last.digest;
	const digest = digestOfSettings(settings);
	lastHashed.set(slot, { settings, digest });
	return digest;
}

/**
 * One pool per distinct credential, kept across executions so they reuse connections instead of
 * opening one each. A pool unused for a while is closed; so is the pool of a credential's old
 * settings once the credential was edited.
 *
 * No timers: n8n Cloud's rules for community nodes forbid setTimeout and setInterval. Pools are
 * checked whenever an execution asks for one, and a retired pool closes by itself when its last
 * connection is gone (pg closes idle connections after `idleClientMs`). An unused pool holds no
 * connection after `idleClientMs` either; it is ended at the next execution after `unusedPoolMs`.
 */
export function poolFor(
	credential: IdempotencyPostgresCredential,
	request: PoolRequest = {},
): PoolEntry {
	const digest = digestFor(credential, request.credentialId);
	if (request.credentialId) retireEditedCredential(request.credentialId, digest);
	for (const other of [...open]) if (current.get(digest) !== other) closeIfQuiet(other);
	const cached = current.get(digest) ?? openPool(credential, digest, request.logger ?? LoggerProxy);
	if (request.logger) cached.logger = request.logger;
	cached.lastUsedMs = Date.now();
	return cached.entry;
}

function openPool(
	credential: IdempotencyPostgresCredential,
	digest: string,
	logger: Logger,
): CachedPool {
	const pool = new Pool({
		...clientConfig(credential),
		max: maxConnections(credential),
		idleTimeoutMillis: poolTimings().idleClientMs,
	});
	const cached: CachedPool = {
		entry: { pool, preparedTables: new Map() },
		digest,
		target: `${credential.host}:${Number(credential.port)}/${credential.database} as ${credential.user}`,
		logger,
		lastUsedMs: Date.now(),
		closing: false,
	};
	// Without a listener, an idle client's error (e.g. PostgreSQL restarting) is an unhandled
	// 'error' event and takes the whole n8n process down. The pool drops that client itself; the
	// operator learns about it from n8n's log.
	pool.on('error', (error: Error & { code?: string }) => {
		cached.entry.lastIdleError = error;
		cached.logger.error(
			`Idempotency Postgres: an idle connection to ${cached.target} failed: ${error.message}`,
			{
				code: error.code,
			},
		);
	});
	// Every checkout and return counts as use: a pool is unused only when nobody touched it for a while.
	const touch = () => (cached.lastUsedMs = Date.now());
	pool.on('acquire', touch);
	pool.on('release', touch);
	// A retired pool whose last connection closed (idle timeout, error) has nothing left to finish,
	// unless it was used a moment ago: an execution may be between two statements.
	pool.on('remove', () => {
		if (cached.retiredBecause !== undefined && pool.totalCount === 0) closeIfQuiet(cached);
	});
	current.set(digest, cached);
	open.add(cached);
	return cached;
}

function retireEditedCredential(credentialId: string, digest: string): void {
	const previous = digestByCredentialId.get(credentialId);
	digestByCredentialId.set(credentialId, digest);
	if (previous === undefined || previous === digest) return;
	// Another credential with the very same settings may still use that pool.
	for (const used of digestByCredentialId.values()) if (used === previous) return;
	const old = current.get(previous);
	if (old === undefined) return;
	current.delete(previous);
	old.retiredBecause = 'its credential was edited';
	closeIfQuiet(old);
}

/** How long a pool may go without a checkout before it is closed. */
function quietLimitMs(cached: CachedPool): number {
	const timings = poolTimings();
	return cached.retiredBecause === undefined ? timings.unusedPoolMs : timings.retiredPoolGraceMs;
}

/** Closes a pool nobody has checked a client out of for its limit; a busy pool is left alone. */
function closeIfQuiet(cached: CachedPool): void {
	const { pool } = cached.entry;
	const limit = quietLimitMs(cached);
	const busy = pool.totalCount > pool.idleCount || pool.waitingCount > 0;
	if (busy || Date.now() - cached.lastUsedMs < limit) return;
	void closePool(
		cached,
		cached.retiredBecause ?? `it was not used for ${Math.round(limit / 1000)} s`,
	);
}

async function closePool(cached: CachedPool, reason: string): Promise<void> {
	if (cached.closing) return;
	cached.closing = true;
	if (current.get(cached.digest) === cached) current.delete(cached.digest);
	open.delete(cached);
	try {
		await cached.entry.pool.end();
		cached.logger.debug(
			`Idempotency Postgres: closed the pool to ${cached.target} because ${reason}`,
		);
	} catch (error) {
		cached.logger.error(
			`Idempotency Postgres: closing the pool to ${cached.target} failed: ${(error as Error).message}`,
		);
	}
}

/** Closes every pool. For tests and benchmarks that must let the process exit. */
export async function closeAllPools(): Promise<void> {
	const all = [...open];
	digestByCredentialId.clear();
	lastHashed.clear();
	await Promise.all(all.map(async (cached) => await closePool(cached, 'all pools were closed')));
}
