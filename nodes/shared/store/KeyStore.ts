import type { PoolEntry } from '../transport/poolCache';
import type { TableRef } from './identifiers';
import {
	createIndexIfPermittedSql,
	createTableSql,
	inspectTableSql,
	purgeBatchSql,
	purgeCutoffSql,
	releaseSql,
	reserveSql,
	reserveWithFirstSeenSql,
} from './sql';

/** What one reserve statement did. */
export interface ReserveOutcome {
	/** The keys this statement inserted: new, for the caller to process. Every other key was already reserved. */
	inserted: Set<string>;
	/** When each key that already existed was first reserved (ms since 1970), where that was looked up and known. */
	firstSeenMs: Map<string, number>;
}

/** Sorted, each key once: every execution then locks keys in the same order, so overlapping batches cannot deadlock. */
function sortedDistinct(keys: readonly string[]): string[] {
	const sorted = [...keys].sort();
	let kept = 0;
	for (const key of sorted) if (kept === 0 || sorted[kept - 1] !== key) sorted[kept++] = key;
	sorted.length = kept;
	return sorted;
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
	constructor(
		private readonly entry: PoolEntry,
		readonly ref: TableRef,
	) {}

	/** Creates the table and its first_seen index when missing, once per pool and table. */
	async ensureTable(): Promise<void> {
		const { preparedTables } = this.entry;
		let prepared = preparedTables.get(this.ref.qualified);
		if (prepared === undefined) {
			prepared = this.createTableIfMissing();
			preparedTables.set(this.ref.qualified, prepared);
			// A failed attempt (database down, no privilege) must be retried by the next execution.
			prepared.catch(() => preparedTables.delete(this.ref.qualified));
		}
		await prepared;
	}

	private async createTableIfMissing(): Promise<void> {
		const { pool } = this.entry;
		const inspected = await pool.query<{ table_exists: boolean; has_first_seen_index: boolean }>(
			inspectTableSql(),
			[this.ref.qualified],
		);
		const state = inspected.rows[0];
		if (!state?.table_exists) await pool.query(createTableSql(this.ref));
		else if (!state.has_first_seen_index) await pool.query(createIndexIfPermittedSql(this.ref));
		// A complete table needs no DDL, so a user with only SELECT, INSERT, DELETE on it is enough.
	}

	/**
	 * Reserves all keys in one statement and one round trip. The statement is atomic, so on error
	 * nothing was reserved by it. `firstSeen` also reads when each key that already existed was first
	 * reserved (an index lookup per such key).
	 */
	async reserve(keys: readonly string[], { firstSeen }: { firstSeen: boolean }): Promise<ReserveOutcome> {
		const outcome: ReserveOutcome = { inserted: new Set(), firstSeenMs: new Map() };
		if (keys.length === 0) return outcome;
		const result = await this.entry.pool.query<[string, (number | null)?]>({
			text: firstSeen ? reserveWithFirstSeenSql(this.ref) : reserveSql(this.ref),
			values: [sortedDistinct(keys)],
			// Rows as arrays: no object per row for a batch of thousands.
			rowMode: 'array',
		});
		for (const [key, firstSeenEpoch] of result.rows) {
			// Inserted rows come without first_seen; rows that existed always have one (NOT NULL).
			if (firstSeenEpoch === null || firstSeenEpoch === undefined) outcome.inserted.add(key);
			else outcome.firstSeenMs.set(key, Math.round(firstSeenEpoch * 1000));
		}
		return outcome;
	}

	/** Deletes the keys in one statement; returns the keys that existed. */
	async release(keys: readonly string[]): Promise<Set<string>> {
		if (keys.length === 0) return new Set();
		const result = await this.entry.pool.query<{ key: string }>(releaseSql(this.ref), [keys]);
		return new Set(result.rows.map((row) => row.key));
	}

	/** Deletes keys older than the retention in batches, each its own short statement. */
	async purge(options: PurgeOptions): Promise<PurgeResult> {
		const { pool } = this.entry;
		const cutoffResult = await pool.query<{ cutoff: Date }>(purgeCutoffSql(), [options.retention]);
		const cutoff = cutoffResult.rows[0].cutoff;
		const sql = purgeBatchSql(this.ref);
		let deleted = 0;
		let batches = 0;
		for (;;) {
			const result = await pool.query(sql, [cutoff, options.keyPrefix ?? null, options.batchSize]);
			const count = result.rowCount ?? 0;
			batches += 1;
			deleted += count;
			if (count < options.batchSize) break;
		}
		return { deleted, cutoff, batches };
	}
}
