import type { PoolEntry } from '../transport/poolCache';
import {
	runCompletingTransaction,
	type CompletingTransaction,
	type CompletingTransactionResult,
} from './completingTransaction';
import type { TableRef } from './identifiers';
import type {
	LeaseOutcome,
	OwnedKey,
	OwnedKeyResults,
	PurgeOptions,
	PurgeResult,
	RedriveClaim,
	RedriveOptions,
	ReserveOutcome,
	ReserveTarget,
	StepBoundaryTarget,
	StepRecordTarget,
	StepState,
} from './keyStoreTypes';
import { KeyTable, type PrepareOptions } from './keyTable';
import { forgetLeases, keepLeases, type KeepOptions } from './leaseKeeper';
import { withLockDiagnosis } from './lockDiagnosis';
import {
	ownedKeyResultsOf,
	releasedResultsOf,
	sortedDistinctOwned,
	stepStatesOf,
} from './ownedKeyRows';
import {
	leaseOutcomeOf,
	reserveOutcomeOf,
	sortedDistinctTargets,
	type LeaseRow,
	type ReserveRow,
} from './reserveRows';
import { ANSWERED_COUNT_LIMIT, purgeSelection } from './selectionPurge';
import { purgeKeysSelection } from './sql/keySelection';
import { completeSql, releaseOwnedSql, releaseSql } from './sql/ownedKeys';
import { recordStepSql, stepStateSql } from './sql/steps';
import {
	reserveLeaseSql,
	reserveSql,
	reserveWithFingerprintSql,
	reserveWithFirstSeenSql,
} from './sql/reserve';
import { claimRedrivesSql, retryDeadLettersSql } from './sql/redrive';
import { redriveClaimOf, type RedriveRow } from './redriveRows';
import { hasGroup } from './sql/schema';
import { toStorableJson } from './storableJson';
import { inTransaction } from './transaction';

export type { PrepareOptions };
// The types the nodes use with KeyStore, and ownedKeyId, are theirs to import from here.
export * from './keyStoreTypes';

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
	 * Prepares the table, then runs `work` (one statement); prepares again and runs it once more
	 * where the table changed under it (see KeyTable.withPrepared).
	 */
	async withPreparedTable<T>(options: PrepareOptions, work: () => Promise<T>): Promise<T> {
		return await this.table.withPrepared(options, work);
	}

	/** One statement of the key nodes, naming the keys another transaction held after a lock timeout. */
	private async statement<T>(run: () => Promise<T>, keys?: readonly string[]): Promise<T> {
		return await withLockDiagnosis(this.entry.pool, this.ref, run, keys);
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
		if (targets.length === 0) return reserveOutcomeOf([]);
		const { keys, fingerprints } = sortedDistinctTargets(targets);
		const result = await this.statement(
			async () =>
				await this.entry.pool.query<ReserveRow>({
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
		return reserveOutcomeOf(result.rows);
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
			delivery = false,
		}: { token: string; leaseSeconds: number; fingerprint?: boolean; delivery?: boolean },
	): Promise<LeaseOutcome> {
		if (targets.length === 0) return leaseOutcomeOf([], [], leaseSeconds);
		const { keys, fingerprints, deliveries } = sortedDistinctTargets(targets);
		const result = await this.statement(
			async () =>
				await this.entry.pool.query<LeaseRow>({
					text: reserveLeaseSql(this.ref, { fingerprint, delivery, steps: true }),
					values: [
						keys,
						token,
						leaseSeconds,
						...(fingerprint ? [fingerprints] : []),
						...(delivery
							? [deliveries.map((one) => (one === null ? null : toStorableJson(one)))]
							: []),
					],
					rowMode: 'array',
				}),
			keys,
		);
		return leaseOutcomeOf(result.rows, keys, leaseSeconds);
	}

	/**
	 * Answer first: claims the keys whose execution died after the sender was answered (their lease
	 * and backoff ended, a stored delivery), and makes dead letters of those out of attempts, in one
	 * statement (sql/redrive.ts).
	 */
	async claimRedrives(options: RedriveOptions): Promise<RedriveClaim> {
		const result = await this.statement(
			async () =>
				await this.entry.pool.query<RedriveRow>({
					text: claimRedrivesSql(this.ref),
					values: [
						options.token,
						options.leaseSeconds,
						options.maxAttempts,
						options.limit,
						options.backoffSeconds,
						options.workflowId,
						options.claimUnscoped ?? false,
					],
					rowMode: 'array',
				}),
		);
		return redriveClaimOf(result.rows);
	}

	/** Makes dead letters due again at once; returns the keys that were dead letters. */
	async retryDeadLetters(keys: readonly string[]): Promise<string[]> {
		if (keys.length === 0) return [];
		const sorted = [...new Set(keys)].sort();
		const result = await this.statement(
			async () =>
				await this.entry.pool.query<{ key: string }>(retryDeadLettersSql(this.ref), [sorted]),
			sorted,
		);
		return result.rows.map((row) => row.key);
	}

	/** Renews these leases while their execution lives (leaseKeeper.ts). */
	keepLeases(leases: ReadonlyArray<{ key: string; token: string }>, options: KeepOptions): void {
		keepLeases(this.entry, this.ref, leases, options);
	}

	/** The owned keys a completion or release lets go: the keeper renews them no more. */
	private forget(targets: readonly OwnedKey[]): void {
		const owned = targets.filter((target): target is OwnedKey & { token: string } =>
			Boolean(target.token),
		);
		if (owned.length > 0) forgetLeases(this.entry, this.ref, owned);
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
				target.response === undefined ? null : toStorableJson(target.response),
			),
		];
		const results = await this.ownedKeyStatement(
			completeSql(this.ref, { response }),
			targets,
			'completed',
			response ? responses : undefined,
		);
		this.forget(targets);
		return results;
	}

	/**
	 * Deletes keys in one statement: keys with a token only while that token owns them, keys without
	 * one whoever holds them; an answered event only with `dropAnsweredEvents` (else its owner's
	 * release reopens it, see releaseOwnedSql). Without any token it runs releaseSql, which a
	 * two-column table takes.
	 */
	async release(
		targets: readonly OwnedKey[],
		{ dropAnsweredEvents = false }: { dropAnsweredEvents?: boolean } = {},
	): Promise<OwnedKeyResults> {
		// Before the statement: a reopened key's lease ends now, and no renewal may push it on again.
		this.forget(targets);
		const answered = dropAnsweredEvents ? 'drop' : 'keep';
		if (targets.some((target) => target.token !== undefined)) {
			return await this.ownedKeyStatement(releaseOwnedSql(this.ref, answered), targets, 'released');
		}
		if (targets.length === 0) return new Map();
		const keys = [...new Set(targets.map((target) => target.key))].sort();
		const result = await this.statement(
			async () =>
				await this.entry.pool.query<{ key: string; released: boolean; answered_event: boolean }>(
					releaseSql(this.ref, answered),
					[keys],
				),
			keys,
		);
		return releasedResultsOf(targets, result.rows);
	}

	private async ownedKeyStatement(
		sql: string,
		targets: readonly OwnedKey[],
		doneColumn: string,
		/** Parameters after the keys and tokens ($3 …), arrays aligned with the sorted targets. */
		moreValues?: (sorted: OwnedKey[]) => unknown[],
	): Promise<OwnedKeyResults> {
		if (targets.length === 0) return new Map();
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
		return ownedKeyResultsOf(result.rows, doneColumn);
	}

	/**
	 * What each key holds for `step`, read for the item's token: whether that token still holds the
	 * key in progress, and the step's record if there is one.
	 */
	async stepStates(
		targets: readonly (OwnedKey & { token: string })[],
		step: string,
	): Promise<Map<string, StepState>> {
		if (targets.length === 0) return new Map();
		const sorted = sortedDistinctOwned(targets);
		const keys = sorted.map((target) => target.key);
		const result = await this.statement(
			async () =>
				await this.entry.pool.query<Record<string, unknown>>(stepStateSql(this.ref), [
					keys,
					sorted.map((target) => target.token),
					step,
				]),
			keys,
		);
		return stepStatesOf(result.rows);
	}

	/**
	 * Records what `step` produced for each key, in one statement, where the target's token still
	 * holds the key in progress; a step recorded already keeps its first record.
	 */
	async recordStep(targets: readonly StepRecordTarget[], step: string): Promise<OwnedKeyResults> {
		return await this.ownedKeyStatement(recordStepSql(this.ref), targets, 'recorded', (sorted) => [
			sorted.map((target) => toStorableJson((target as StepRecordTarget).items)),
			step,
		]);
	}

	/**
	 * A boundary between two steps, in one statement: records what `step` produced for each key that
	 * has items (as recordStep), and reads every key's record of `next`, with whether its token
	 * holds the key. A key without items (its step was skipped) is only read.
	 */
	async recordStepAndCheckNext(
		targets: readonly StepBoundaryTarget[],
		step: string,
		next: string,
	): Promise<OwnedKeyResults> {
		return await this.ownedKeyStatement(
			recordStepSql(this.ref, { next: true }),
			targets,
			'recorded',
			(sorted) => [
				sorted.map((target) => {
					const { items } = target as StepBoundaryTarget;
					return items === null ? null : toStorableJson(items);
				}),
				step,
				next,
			],
		);
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
		const result = await this.statement(
			async () =>
				await inTransaction(this.entry.pool, async (client) => {
					const outcome = await runCompletingTransaction(client, this.ref, transaction);
					return { commit: !outcome.rollback, value: outcome };
				}),
			keys,
		);
		this.forget(transaction.claims);
		return result;
	}

	/**
	 * Purge Keys: deletes keys first seen before the retention (of any state, bar running leases and,
	 * unless dropped, answered events; within `keyPrefix` when given) in batches: the Keys node's
	 * purge by age, the same statement. Then counts the answered events it kept, in one statement.
	 */
	async purge(options: PurgeOptions): Promise<PurgeResult> {
		const state = await this.table.inspect();
		const selection = purgeKeysSelection({
			lease: hasGroup(state?.optional_columns ?? [], 'lease'),
			withinPrefix: options.keyPrefix !== undefined,
			answeredEvents: options.dropAnsweredEvents === true ? 'drop' : 'keep',
		});
		const result = await purgeSelection(
			this.entry.pool,
			this.ref,
			{ selection, prefix: options.keyPrefix, retention: options.retention },
			{ batchSize: options.batchSize, listLimit: 0, countLimit: ANSWERED_COUNT_LIMIT },
		);
		return {
			deleted: result.count,
			// A selection by age always has its cutoff.
			cutoff: result.cutoff as Date,
			batches: result.batches,
			keptAnsweredEvents: result.answeredEvents.kept,
			droppedAnsweredEvents: result.answeredEvents.dropped,
		};
	}
}
