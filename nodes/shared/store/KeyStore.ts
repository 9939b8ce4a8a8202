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

export interface Reservation {
	isNew: boolean;
	/** When the key was first reserved, for a key that already existed before this statement. */
	firstSeenAt?: Date;
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
	 * Reserves all keys in one statement and one round trip; returns one entry per distinct key. The
	 * statement is atomic, so on error nothing was reserved by it. `firstSeen` also reads when each
	 * key that already existed was first reserved (an index lookup per duplicate).
	 */
	async reserve(keys: readonly string[], { firstSeen }: { firstSeen: boolean }): Promise<Map<string, Reservation>> {
		const reservations = new Map<string, Reservation>();
		if (keys.length === 0) return reservations;
		const sorted = [...new Set(keys)].sort();
		const result = await this.entry.pool.query<{ key: string; first_seen?: Date | null }>(
			firstSeen ? reserveWithFirstSeenSql(this.ref) : reserveSql(this.ref),
			[sorted],
		);
		const existing = new Map<string, Date>();
		const inserted = new Set<string>();
		for (const row of result.rows) {
			if (row.first_seen) existing.set(row.key, row.first_seen);
			else inserted.add(row.key);
		}
		for (const key of sorted) {
			reservations.set(key, inserted.has(key) ? { isNew: true } : { isNew: false, firstSeenAt: existing.get(key) });
		}
		return reservations;
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
