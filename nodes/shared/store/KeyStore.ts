import { checkOut, type CheckedOutClient } from '../transport/checkOut';
import { isConnectionLoss } from '../transport/connectionRetry';
import type { PoolClient } from '../transport/pg';
import type { PoolEntry } from '../transport/poolCache';
import {
	runCompletingTransaction,
	type CompletingTransaction,
	type CompletingTransactionResult,
} from './completingTransaction';
import type { TableRef } from './identifiers';
import { KeyTable, type PrepareOptions } from './keyTable';
import { purgeSelection } from './selectionPurge';
import { purgeKeysSelection } from './sql/keySelection';
import { existingKeysSql, lockableKeysSql } from './sql/lockBound';
import { completeSql, releaseOwnedSql, releaseSql } from './sql/ownedKeys';
import {
	reserveLeaseSql,
	reserveSql,
	reserveWithFingerprintSql,
	reserveWithFirstSeenSql,
} from './sql/reserve';
import { hasGroup } from './sql/schema';
import type { StoredResponse } from './storedResponse';

export type { PrepareOptions };

/** A key to reserve and, where Reserve records one, the fingerprint of the request it belongs to. */
export interface ReserveTarget {
	key: string;
	fingerprint?: string;
}

/** What one reserve statement did. */
export interface ReserveOutcome {
	/** The keys this statement inserted: new, for the caller to process. Every other key was already reserved. */
	inserted: Set<string>;
	/** When each key that already existed was first reserved (ms since 1970), where that was looked up and known. */
	firstSeenMs: Map<string, number>;
	/** The fingerprint each key that already existed was reserved with, where it has one. */
	storedFingerprints: Map<string, string>;
}

/** A reserved key and the token of the reservation that holds it (none: whoever holds it). */
export interface OwnedKey {
	key: string;
	token?: string;
	/** Complete Key: the answer to store with the completion. */
	response?: StoredResponse;
}

/** What one lease-mode reserve statement did. */
export interface LeaseOutcome {
	/** Keys this statement reserved (new) or took over (lease ended): run the business step. */
	reserved: Map<string, { attempt: number; leaseUntilMs: number }>;
	/** Every other key: completed (or written in simple mode), or in progress in another execution. */
	held: Map<string, HeldKey>;
}

export interface HeldKey {
	status: 'completed' | 'in_progress';
	firstSeenMs?: number;
	/** In progress only: seconds until its lease ends and a retry may take it over. */
	retryAfterSeconds?: number;
	/** The fingerprint of the request that reserved it, where one was recorded. */
	storedFingerprint?: string;
	/** Completed only: the answer Complete Key stored with it. */
	response?: StoredResponse;
}

/** What happened to one owned key in Complete or Release. */
export interface OwnedKeyResult {
	done: boolean;
	/** Was there a row for the key at all (false: released or purged)? */
	rowExists: boolean;
	/** The attempt of the reservation that holds the key now, where another one does. */
	attempt?: number;
	/** Release only: the item's token completed the key, so it stays (its effect committed). */
	completedByOwner?: boolean;
}

/** The result of an owned-key statement, by key and token. */
export type OwnedKeyResults = Map<string, OwnedKeyResult>;

export function ownedKeyId({ key, token }: OwnedKey): string {
	// Keys and tokens never hold NUL (refused before storage), so the pair is unambiguous.
	return `${key}\u0000${token ?? ''}`;
}

function sortedDistinctOwned(targets: readonly OwnedKey[]): OwnedKey[] {
	const byId = new Map(targets.map((target) => [ownedKeyId(target), target]));
	return [...byId.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** undefined_table and undefined_column: what a statement meets when its table changed under it. */
function tableOrColumnMissing(error: unknown): boolean {
	const code = (error as { code?: string } | undefined)?.code;
	return code === '42P01' || code === '42703';
}

const LOCK_NOT_AVAILABLE = '55P03';

function sqlState(error: unknown): string | undefined {
	return (error as { code?: string } | undefined)?.code;
}

/** How long naming the locked keys after a lock timeout may itself wait (a whole table may be locked). */
const DIAGNOSIS_LOCK_WAIT = '200ms';

/**
 * Each key once, sorted, with the fingerprint of its first item: the one a new key is recorded with
 * (a later item of the same key is its duplicate, and compared with it).
 */
function sortedDistinctTargets(targets: readonly ReserveTarget[]): {
	keys: string[];
	fingerprints: Array<string | null>;
} {
	const first = new Map<string, string | null>();
	for (const { key, fingerprint } of targets)
		if (!first.has(key)) first.set(key, fingerprint ?? null);
	const keys = [...first.keys()].sort();
	return { keys, fingerprints: keys.map((key) => first.get(key) ?? null) };
}

export interface PurgeOptions {
	/** A PostgreSQL interval, e.g. `30 days`. */
	retention: string;
	/** Only keys starting with this text (`<namespace>:`); all keys when undefined. */
	keyPrefix?: string;
	batchSize: number;
}

export interface PurgeResult {
	deleted: number;
	cutoff: Date;
	batches: number;
}

/** The key table behind one pool: every read and write of keys goes through here. */
export class KeyStore {
	private readonly table: KeyTable;

	constructor(
		private readonly entry: PoolEntry,
		readonly ref: TableRef,
	) {
		this.table = new KeyTable(entry, ref);
	}

	/**
	 * Creates the table and its first_seen index when missing, and in lease mode the lease columns
	 * (or says exactly which ALTER TABLE to run); settled once per pool, table and options.
	 */
	async prepare(options: PrepareOptions): Promise<void> {
		await this.table.prepare(options);
	}

	/**
	 * Prepares the table, then runs `work` (one statement). When the statement finds the table or
	 * one of its columns gone (a DBA dropped, renamed or recreated it while n8n ran), the "prepared"
	 * mark of this table is forgotten and, where the table may be created, it is prepared again and
	 * the statement run once more. The failed statement changed nothing, so running it again is safe.
	 */
	async withPreparedTable<T>(options: PrepareOptions, work: () => Promise<T>): Promise<T> {
		await this.prepare(options);
		let failure: unknown;
		try {
			return await work();
		} catch (error) {
			failure = error;
		}
		if (!tableOrColumnMissing(failure)) throw failure;
		this.table.forget();
		if (!options.create) throw failure;
		await this.prepare(options);
		return await work();
	}

	/**
	 * Runs one statement of the key nodes; after a lock timeout, looks up which of its keys another
	 * transaction holds, for the error message. (A connection that failed, read-only or timed out,
	 * is dropped by the pool, so a setting it started with cannot outlive its first failed write.)
	 */
	private async statement<T>(run: () => Promise<T>, keys: readonly string[] = []): Promise<T> {
		let failure: unknown;
		try {
			return await run();
		} catch (error) {
			failure = error;
		}
		if (sqlState(failure) === LOCK_NOT_AVAILABLE && keys.length > 0) {
			(failure as { lockedKeys?: string[] }).lockedKeys = await this.keysLockedByOthers(keys);
		}
		throw failure;
	}

	/**
	 * The keys that exist and that another transaction holds right now, in a transaction of its own
	 * that locks nothing it keeps (rolled back) and waits for nothing long. Undefined when that
	 * could not be told (the table itself locked, the database gone).
	 */
	private async keysLockedByOthers(keys: readonly string[]): Promise<string[] | undefined> {
		const distinct = [...new Set(keys)].sort();
		const { pool } = this.entry;
		// Naming the keys is worth no wait for a connection: with none free, the error says less.
		if (pool.idleCount === 0 && pool.totalCount >= (pool.options.max ?? 10)) return undefined;
		let checkedOut: CheckedOutClient;
		try {
			checkedOut = await checkOut(pool);
		} catch {
			return undefined;
		}
		const { client } = checkedOut;
		let failure: unknown;
		let locked: string[] | undefined;
		try {
			await client.query('BEGIN');
			await client.query(`SET LOCAL lock_timeout = '${DIAGNOSIS_LOCK_WAIT}'`);
			const existing = await client.query<{ key: string }>(existingKeysSql(this.ref), [distinct]);
			const lockable = await client.query<{ key: string }>(lockableKeysSql(this.ref), [distinct]);
			const free = new Set(lockable.rows.map((row) => row.key));
			locked = existing.rows.map((row) => row.key).filter((key) => !free.has(key));
			await client.query('ROLLBACK');
		} catch (error) {
			failure = error;
		}
		// A failed diagnosis leaves the transaction open: the pool must drop that connection.
		checkedOut.release(failure instanceof Error ? failure : undefined);
		return failure === undefined ? locked : undefined;
	}

	/**
	 * Reserves all keys in one statement and one round trip. The statement is atomic, so on error
	 * nothing was reserved by it. `firstSeen` also reads when each key that already existed was first
	 * reserved (an index lookup per such key); `fingerprint` records each new key's fingerprint and
	 * reads the stored one of every key that existed (and so also first_seen).
	 */
	async reserve(
		targets: readonly ReserveTarget[],
		{ firstSeen, fingerprint = false }: { firstSeen: boolean; fingerprint?: boolean },
	): Promise<ReserveOutcome> {
		const outcome: ReserveOutcome = {
			inserted: new Set(),
			firstSeenMs: new Map(),
			storedFingerprints: new Map(),
		};
		if (targets.length === 0) return outcome;
		const { keys, fingerprints } = sortedDistinctTargets(targets);
		const result = await this.statement(
			async () =>
				await this.entry.pool.query<[string, (number | null)?, (string | null)?]>({
					text: fingerprint
						? reserveWithFingerprintSql(this.ref)
						: firstSeen
							? reserveWithFirstSeenSql(this.ref)
							: reserveSql(this.ref),
					values: fingerprint ? [keys, fingerprints] : [keys],
					// Rows as arrays: no object per row for a batch of thousands.
					rowMode: 'array',
				}),
			keys,
		);
		for (const [key, firstSeenEpoch, storedFingerprint] of result.rows) {
			// Inserted rows come without first_seen; rows that existed always have one (NOT NULL).
			if (firstSeenEpoch === null || firstSeenEpoch === undefined) outcome.inserted.add(key);
			else outcome.firstSeenMs.set(key, Math.round(firstSeenEpoch * 1000));
			if (typeof storedFingerprint === 'string')
				outcome.storedFingerprints.set(key, storedFingerprint);
		}
		return outcome;
	}

	/**
	 * Lease mode: reserves new keys and takes over keys whose lease ended, in one statement, for
	 * `leaseSeconds` of database time, owned by `token`. Every other key comes back with its state,
	 * its stored fingerprint and its stored response. With `fingerprint`, new keys record theirs and
	 * a key recorded with another one is not taken over.
	 */
	async reserveWithLease(
		targets: readonly ReserveTarget[],
		{
			token,
			leaseSeconds,
			fingerprint = false,
		}: { token: string; leaseSeconds: number; fingerprint?: boolean },
	): Promise<LeaseOutcome> {
		const outcome: LeaseOutcome = { reserved: new Map(), held: new Map() };
		if (targets.length === 0) return outcome;
		const { keys, fingerprints } = sortedDistinctTargets(targets);
		const result = await this.statement(
			async () =>
				await this.entry.pool.query<
					[
						string,
						string | null,
						number | null,
						number | null,
						number | null,
						number | null,
						string | null,
						StoredResponse | null,
					]
				>({
					text: reserveLeaseSql(this.ref, { fingerprint }),
					values: fingerprint
						? [keys, token, leaseSeconds, fingerprints]
						: [keys, token, leaseSeconds],
					rowMode: 'array',
				}),
			keys,
		);
		for (const [
			key,
			state,
			attempts,
			leaseUntilEpoch,
			firstSeenEpoch,
			retryAfter,
			storedFingerprint,
			response,
		] of result.rows) {
			if (state === 'reserved') {
				outcome.reserved.set(key, {
					attempt: attempts ?? 1,
					leaseUntilMs: Math.round((leaseUntilEpoch ?? 0) * 1000),
				});
				continue;
			}
			const firstSeenMs = firstSeenEpoch === null ? undefined : Math.round(firstSeenEpoch * 1000);
			const recorded = storedFingerprint === null ? {} : { storedFingerprint };
			// Anything but in_progress (completed, empty from simple mode or the hand-built pattern) is done.
			outcome.held.set(
				key,
				state === 'in_progress'
					? {
							status: 'in_progress',
							firstSeenMs,
							retryAfterSeconds: retryAfter ?? Math.ceil(leaseSeconds),
							...recorded,
						}
					: {
							status: 'completed',
							firstSeenMs,
							...recorded,
							...(response === null ? {} : { response }),
						},
			);
		}
		// Reserved by a concurrent execution after this statement's snapshot: in progress there.
		for (const key of keys) {
			if (!outcome.reserved.has(key) && !outcome.held.has(key)) {
				outcome.held.set(key, {
					status: 'in_progress',
					retryAfterSeconds: Math.ceil(leaseSeconds),
				});
			}
		}
		return outcome;
	}

	/**
	 * Marks keys completed where their token still owns them, in one statement; with `response`,
	 * stores each target's response in the same UPDATE.
	 */
	async complete(
		targets: readonly OwnedKey[],
		{ response = false }: { response?: boolean } = {},
	): Promise<OwnedKeyResults> {
		const responses = (sorted: OwnedKey[]) => [
			sorted.map((target) =>
				target.response === undefined ? null : JSON.stringify(target.response),
			),
		];
		return await this.ownedKeyStatement(
			completeSql(this.ref, { response }),
			targets,
			'completed',
			response ? responses : undefined,
		);
	}

	/**
	 * Deletes keys in one statement: keys with a token only while that token owns them, keys without
	 * one whoever holds them. Without any token it runs the simple DELETE, which a two-column table takes.
	 */
	async release(targets: readonly OwnedKey[]): Promise<OwnedKeyResults> {
		if (targets.some((target) => target.token !== undefined)) {
			return await this.ownedKeyStatement(releaseOwnedSql(this.ref), targets, 'released');
		}
		const results: OwnedKeyResults = new Map();
		if (targets.length === 0) return results;
		const keys = [...new Set(targets.map((target) => target.key))].sort();
		const deleted = await this.statement(
			async () => await this.entry.pool.query<{ key: string }>(releaseSql(this.ref), [keys]),
			keys,
		);
		const released = new Set(deleted.rows.map((row) => row.key));
		for (const target of targets) {
			results.set(ownedKeyId(target), {
				done: released.has(target.key),
				rowExists: released.has(target.key),
			});
		}
		return results;
	}

	private async ownedKeyStatement(
		sql: string,
		targets: readonly OwnedKey[],
		doneColumn: string,
		/** Parameters after the keys and tokens ($3 …), aligned with the sorted targets. */
		moreValues?: (sorted: OwnedKey[]) => unknown[][],
	): Promise<OwnedKeyResults> {
		const results: OwnedKeyResults = new Map();
		if (targets.length === 0) return results;
		// Sorted by key, so executions with overlapping batches lock rows in one order.
		const sorted = sortedDistinctOwned(targets);
		const keys = sorted.map((target) => target.key);
		const result = await this.statement(
			async () =>
				await this.entry.pool.query<Record<string, unknown>>(sql, [
					keys,
					sorted.map((target) => target.token ?? null),
					...(moreValues?.(sorted) ?? []),
				]),
			keys,
		);
		for (const row of result.rows) {
			const target = {
				key: row.key as string,
				token: (row.owner_token as string | null) ?? undefined,
			};
			results.set(ownedKeyId(target), {
				done: row[doneColumn] === true,
				rowExists: row.row_exists === true,
				attempt: typeof row.attempts === 'number' ? row.attempts : undefined,
				completedByOwner: row.completed_by_owner === true,
			});
		}
		return results;
	}

	/**
	 * The exactly-once step: the user's statements and the completion of the keys they belong to, in
	 * one transaction on one connection (see runCompletingTransaction). Any failure rolls it all back.
	 * A failed COMMIT leaves the outcome unknown to this execution; either way the key is then
	 * completed with the effect, or in progress without it, never completed without it.
	 */
	async completeInTransaction<T>(
		transaction: CompletingTransaction<T>,
	): Promise<CompletingTransactionResult<T>> {
		const keys = transaction.claims.map((claim) => claim.key);
		return await this.statement(
			async () =>
				await this.inTransaction(async (client) => {
					const outcome = await runCompletingTransaction(client, this.ref, transaction);
					return { commit: !outcome.rollback, value: outcome };
				}),
			keys,
		);
	}

	/**
	 * Runs `work` between BEGIN and COMMIT (or ROLLBACK, when it asks for it or fails) on one pooled
	 * connection. A connection that was lost, or whose ROLLBACK failed, is dropped by the pool, never
	 * reused mid-transaction.
	 */
	private async inTransaction<T>(
		work: (client: PoolClient) => Promise<{ commit: boolean; value: T }>,
	): Promise<T> {
		const { client, release } = await checkOut(this.entry.pool);
		let failure: unknown;
		let broken: Error | undefined;
		try {
			await client.query('BEGIN');
			const { commit, value } = await work(client);
			await client.query(commit ? 'COMMIT' : 'ROLLBACK');
			release();
			return value;
		} catch (error) {
			failure = error;
		}
		// A lost connection is dropped at once, never handed to the next execution.
		if (isConnectionLoss(failure)) broken = failure as Error;
		else {
			try {
				await client.query('ROLLBACK');
			} catch (rollbackError) {
				broken = rollbackError as Error;
			}
		}
		release(broken);
		throw failure;
	}

	/**
	 * Purge Keys: deletes keys first seen before the retention (of any state, bar running leases;
	 * within `keyPrefix` when given) in batches: the Keys node's purge by age, the same statement.
	 */
	async purge(options: PurgeOptions): Promise<PurgeResult> {
		const state = await this.table.inspect();
		const selection = purgeKeysSelection({
			lease: hasGroup(state?.optional_columns ?? [], 'lease'),
			withinPrefix: options.keyPrefix !== undefined,
		});
		const { count, batches, cutoff } = await purgeSelection(
			this.entry.pool,
			this.ref,
			{ selection, prefix: options.keyPrefix, retention: options.retention },
			{ batchSize: options.batchSize, listLimit: 0 },
		);
		// A selection by age always has its cutoff.
		return { deleted: count, cutoff: cutoff as Date, batches };
	}
}
