import type { PoolEntry } from '../transport/poolCache';
import type { TableRef } from './identifiers';
import { KeyTable } from './keyTable';
import { previewSelection, purgeSelection, type SelectionPurgeResult } from './selectionPurge';
import { fromStorableJson } from './storableJson';
import { prefixEnd, purgeCutoffSql, type KeySelection } from './sql/keySelection';
import {
	dropDeadLettersSql,
	lookUpDeadLettersSql,
	lookUpKeysSql,
	lookUpPrefixSql,
	lookUpStuckSql,
	reportSql,
	retryDeadLettersOutcomeSql,
	type OperatorIndex,
} from './sql/operators';

/** One key as the operator sees it. Times in ms since 1970; a missing key has only `key` and `found`. */
export interface KeyRow {
	key: string;
	found: boolean;
	status?: 'in_progress' | 'completed' | 'legacy' | 'dead_letter';
	/** Runs so far (a dead letter's: the attempts the Redrive Trigger made before giving up). */
	attempt?: number;
	firstSeenMs?: number;
	leaseUntilMs?: number;
	completedAtMs?: number;
	hasFingerprint?: boolean;
	hasResponse?: boolean;
	/** Holds a stored delivery (Reserve's Answer First); in progress, an answered event. */
	hasDelivery?: boolean;
	/** First 8 hex digits of sha256(owner token): tells reservations apart, cannot act for one. */
	holder?: string;
	/** The event's recorded steps (Idempotency Step), oldest first. */
	steps?: Array<{ step: string; recordedAt: string }>;
	response?: unknown;
	/** The database's clock when the row was read, for "stuck for … seconds". */
	nowMs: number;
}

export interface ReportOptions {
	/** Seconds after its lease end before an in-progress key counts as stuck. */
	graceSeconds: number;
	/** A PostgreSQL interval: the retention whose purge is previewed. */
	retention: string;
	/** Every count stops here (then reads "at least"), so the report's cost is bounded. */
	countLimit: number;
}

export interface Report {
	estimatedTotal: number | null;
	lease: boolean;
	counts: Record<
		| 'inProgress'
		| 'running'
		| 'stuck'
		| 'waitingForRedrive'
		| 'takeovers'
		| 'lastHour'
		| 'lastDay'
		| 'purgeOlder'
		| 'purgeKept'
		| 'purgeKeptAnswered'
		| 'deadLetters',
		number
	>;
	/** The oldest dead letters' keys (at most REPORT_DEAD_LETTER_KEYS). */
	deadLetterKeys: string[];
	oldestStuckLeaseUntilMs?: number;
	oldestWaitingLeaseUntilMs?: number;
	oldest?: { key: string; firstSeenMs: number };
	cutoff: Date;
	nowMs: number;
}

export interface TargetedPurge {
	selection: Omit<KeySelection, 'lease'>;
	keys?: string[];
	prefix?: string;
	retention?: string;
	dryRun: boolean;
	batchSize: number;
	/** How many of the matched or deleted keys to list. */
	listLimit: number;
	/** A dry run counts at most this many. */
	countLimit: number;
}

export type TargetedPurgeResult = SelectionPurgeResult;

/**
 * What Retry or Drop Dead Letters did with one key: `changed` (retried or dropped), else the status
 * it had (undefined: no such key), which says why it was left alone.
 */
export interface DeadLetterOutcome {
	key: string;
	changed: boolean;
	status?: NonNullable<KeyRow['status']>;
}

// The tests compute the prefix range's end as the look-ups and the purge do.
export { prefixEnd };

type Row = Record<string, unknown>;

const msOf = (epoch: unknown): number | undefined =>
	typeof epoch === 'number' ? Math.round(epoch * 1000) : undefined;

function keyRow(row: Row): KeyRow {
	const nowMs = msOf(row.now) ?? Date.now();
	if (row.found !== true) return { key: row.key as string, found: false, nowMs };
	return {
		key: row.key as string,
		found: true,
		status: row.status as KeyRow['status'],
		attempt: row.attempt as number,
		firstSeenMs: msOf(row.first_seen),
		leaseUntilMs: msOf(row.lease_until),
		completedAtMs: msOf(row.completed_at),
		hasFingerprint: row.has_fingerprint === true,
		hasResponse: row.has_response === true,
		hasDelivery: row.has_delivery === true,
		holder: typeof row.holder === 'string' ? row.holder : undefined,
		...(row.response === null || row.response === undefined
			? {}
			: { response: fromStorableJson(row.response) }),
		steps: (row.steps as KeyRow['steps']) ?? [],
		nowMs,
	};
}

/**
 * The operators' statements on one key table (Idempotency Keys node): look up, report, targeted
 * purge. Beside KeyStore, which serves the nodes of a webhook's path; these never reserve anything.
 */
export class OperatorQueries {
	private readonly table: KeyTable;

	constructor(
		private readonly entry: PoolEntry,
		readonly ref: TableRef,
	) {
		this.table = new KeyTable(entry, ref);
	}

	/**
	 * Does the table have the lease columns? And, with `addIndexes`, makes the indexes `indexes`
	 * need where the user may (see KeyTable.prepareOperatorIndexes).
	 */
	async prepare(options: {
		indexes: readonly OperatorIndex[];
		addIndexes: boolean;
	}): Promise<{ lease: boolean; tableExists: boolean }> {
		return await this.table.prepareOperatorIndexes(options);
	}

	/** One row per key, in order, a missing one included (found false). */
	async lookUpKeys(keys: readonly string[], includeResponse: boolean): Promise<KeyRow[]> {
		if (keys.length === 0) return [];
		const result = await this.entry.pool.query<Row>(lookUpKeysSql(this.ref), [
			keys,
			includeResponse,
		]);
		return result.rows.map(keyRow);
	}

	/** Keys starting with `prefix`, in byte order, at most `limit`. */
	async lookUpPrefix(prefix: string, limit: number, includeResponse: boolean): Promise<KeyRow[]> {
		const result = await this.entry.pool.query<Row>(lookUpPrefixSql(this.ref), [
			prefix,
			prefixEnd(prefix) ?? null,
			limit,
			null,
			includeResponse,
		]);
		return result.rows.map(keyRow);
	}

	/**
	 * In-progress keys whose lease ended more than `graceSeconds` ago, longest stuck first: without
	 * a stored delivery (stuck), or with `answered`, the answered events waiting for the redrive.
	 */
	async lookUpStuck(
		graceSeconds: number,
		limit: number,
		includeResponse: boolean,
		{ lease, answered = false }: { lease: boolean; answered?: boolean },
	): Promise<KeyRow[]> {
		// Without the lease columns nothing is ever in progress.
		if (!lease) return [];
		const result = await this.entry.pool.query<Row>(lookUpStuckSql(this.ref, { answered }), [
			graceSeconds,
			limit,
			includeResponse,
		]);
		return result.rows.map(keyRow);
	}

	/** Dead letters, oldest first, at most `limit`. */
	async lookUpDeadLetters(
		limit: number,
		includeResponse: boolean,
		{ lease }: { lease: boolean },
	): Promise<KeyRow[]> {
		// Without the lease columns there is no status, so no dead letter.
		if (!lease) return [];
		const result = await this.entry.pool.query<Row>(lookUpDeadLettersSql(this.ref), [
			limit,
			includeResponse,
		]);
		return result.rows.map(keyRow);
	}

	/**
	 * Retry Dead Letters (`retry`) or Drop Dead Letters (`drop`) on `keys`, in one statement each:
	 * only dead letters change. One outcome per distinct key, sorted.
	 */
	async changeDeadLetters(
		action: 'retry' | 'drop',
		keys: readonly string[],
		{ lease }: { lease: boolean },
	): Promise<Map<string, DeadLetterOutcome>> {
		const sorted = [...new Set(keys)].sort();
		const outcomes = new Map<string, DeadLetterOutcome>();
		if (sorted.length === 0) return outcomes;
		if (!lease) {
			// The two-column table has no status: nothing there is a dead letter.
			for (const row of await this.lookUpKeys(sorted, false))
				outcomes.set(row.key, { key: row.key, changed: false, status: row.status });
			return outcomes;
		}
		const text =
			action === 'retry' ? retryDeadLettersOutcomeSql(this.ref) : dropDeadLettersSql(this.ref);
		const result = await this.entry.pool.query<Row>(text, [sorted]);
		for (const row of result.rows) {
			const key = row.key as string;
			outcomes.set(key, {
				key,
				changed: row.changed === true,
				status: (row.status ?? undefined) as DeadLetterOutcome['status'],
			});
		}
		return outcomes;
	}

	async report(options: ReportOptions, { lease }: { lease: boolean }): Promise<Report> {
		const { pool } = this.entry;
		const cutoff = (await pool.query<{ cutoff: Date }>(purgeCutoffSql(), [options.retention]))
			.rows[0].cutoff;
		const result = await pool.query<Row>(reportSql(this.ref, { lease }), [
			options.countLimit,
			options.graceSeconds,
			cutoff,
			this.ref.qualified,
		]);
		const row = result.rows[0];
		const count = (name: string) => Number(row[name] ?? 0);
		const oldestMs = msOf(row.oldest_first_seen);
		return {
			estimatedTotal: row.estimated_total === null ? null : Number(row.estimated_total),
			lease,
			counts: {
				inProgress: count('in_progress'),
				running: count('running'),
				stuck: count('stuck'),
				waitingForRedrive: count('waiting_for_redrive'),
				takeovers: count('takeovers'),
				lastHour: count('last_hour'),
				lastDay: count('last_day'),
				purgeOlder: count('purge_older'),
				purgeKept: count('purge_kept'),
				purgeKeptAnswered: count('purge_kept_answered'),
				deadLetters: count('dead_letters'),
			},
			deadLetterKeys: (row.dead_letter_keys as string[] | null) ?? [],
			oldestStuckLeaseUntilMs: msOf(row.oldest_stuck_lease_until),
			oldestWaitingLeaseUntilMs: msOf(row.oldest_waiting_lease_until),
			oldest:
				typeof row.oldest_key === 'string' && oldestMs !== undefined
					? { key: row.oldest_key, firstSeenMs: oldestMs }
					: undefined,
			cutoff,
			nowMs: msOf(row.now) ?? Date.now(),
		};
	}

	/**
	 * A targeted purge, or its dry run (see selectionPurge.ts). Both run the same selection on the
	 * same index, the purge in batches until one comes back short.
	 */
	async purge(options: TargetedPurge, { lease }: { lease: boolean }): Promise<TargetedPurgeResult> {
		const selected = { ...options, selection: { ...options.selection, lease } };
		return options.dryRun
			? await previewSelection(this.entry.pool, this.ref, selected, options)
			: await purgeSelection(this.entry.pool, this.ref, selected, options);
	}
}
