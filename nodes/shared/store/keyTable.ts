import type { PoolEntry } from '../transport/poolCache';
import { ColumnsMissingError } from './ColumnsMissingError';
import type { TableRef } from './identifiers';
import {
	createOperatorIndexSql,
	inspectOperatorIndexesSql,
	operatorIndexName,
	type OperatorIndex,
} from './sql/operators';
import {
	addColumnsIfPermittedSql,
	createIndexIfPermittedSql,
	createTableSql,
	groupsNeeded,
	hasGroup,
	inspectTableSql,
	OPTIONAL_COLUMN_NAMES,
	type GroupOptions,
} from './sql/schema';

export interface PrepareOptions extends GroupOptions {
	/** May the table, its index and missing columns be created? Without, only what is needed is checked. */
	create: boolean;
	/** May missing columns be added (default: as `create`)? Complete Key adds, never creates a table. */
	addColumns?: boolean;
}

/** undefined_table and undefined_column: what a statement meets when its table changed under it. */
function tableOrColumnMissing(error: unknown): boolean {
	const code = (error as { code?: string } | undefined)?.code;
	return code === '42P01' || code === '42703';
}

/** What inspectTableSql finds. */
export interface TableState {
	table_exists: boolean;
	has_first_seen_index: boolean;
	optional_columns: string[];
}

/**
 * The key table behind one pool, as its structure goes: inspects it, creates it when missing, adds
 * missing column groups, the first_seen index and the operators' indexes. What is settled is
 * remembered in the pool's entry (a promise per table and need), so it is done once per pool.
 */
export class KeyTable {
	constructor(
		private readonly entry: PoolEntry,
		readonly ref: TableRef,
	) {}

	/** Is the table there, with its first_seen index, and which optional columns does it have? */
	async inspect(): Promise<TableState | undefined> {
		const inspected = await this.entry.pool.query<TableState>(inspectTableSql(), [
			this.ref.qualified,
			OPTIONAL_COLUMN_NAMES,
		]);
		return inspected.rows[0];
	}

	/**
	 * Creates the table and its first_seen index when missing, and the column groups the options need
	 * (or says exactly which ALTER TABLE to run); settled once per pool, table and options.
	 */
	async prepare(options: PrepareOptions): Promise<void> {
		const groups = groupsNeeded(options);
		if (!options.create && groups.length === 0) return;
		const mayAdd = options.addColumns ?? options.create;
		const need = `${groups.join('+') || 'simple'}|${options.create ? 'create' : mayAdd ? 'add' : 'check'}`;
		await this.once(need, async () => await this.prepareTable(options));
	}

	/**
	 * Prepares the table, then runs `work` (one statement). When the statement finds the table or
	 * one of its columns gone (a DBA dropped, renamed or recreated it while n8n ran), the "prepared"
	 * mark of this table is forgotten and, where the table may be created, it is prepared again and
	 * the statement run once more. The failed statement changed nothing, so running it again is safe.
	 */
	async withPrepared<T>(options: PrepareOptions, work: () => Promise<T>): Promise<T> {
		await this.prepare(options);
		let failure: unknown;
		try {
			return await work();
		} catch (error) {
			failure = error;
		}
		if (!tableOrColumnMissing(failure)) throw failure;
		this.forget();
		if (!options.create) throw failure;
		await this.prepare(options);
		return await work();
	}

	/**
	 * Does the table have the lease columns? And, with `addIndexes`, makes the indexes `indexes`
	 * need where the user may (the first_seen index too, for a hand-made table): once per pool,
	 * table and set. The lease indexes only on a table with the lease columns.
	 */
	async prepareOperatorIndexes({
		indexes,
		addIndexes,
	}: {
		indexes: readonly OperatorIndex[];
		addIndexes: boolean;
	}): Promise<{ lease: boolean; tableExists: boolean }> {
		const state = await this.inspect();
		const tableExists = state?.table_exists === true;
		const lease = hasGroup(state?.optional_columns ?? [], 'lease');
		if (!tableExists || !addIndexes) return { lease, tableExists };
		const wanted = indexes.filter((index) => index === 'keyPrefix' || lease);
		await this.once(
			`operator:${[...wanted].sort().join('+')}`,
			async () => await this.addIndexes(wanted, state.has_first_seen_index),
		);
		return { lease, tableExists };
	}

	/** Forgets everything settled for this table (it was dropped, renamed or recreated). */
	private forget(): void {
		for (const mark of this.entry.preparedTables.keys()) {
			if (mark.startsWith(`${this.ref.qualified}|`)) this.entry.preparedTables.delete(mark);
		}
	}

	/** Runs `settle` once per pool, table and need; concurrent executions await the same promise. */
	private async once(need: string, settle: () => Promise<void>): Promise<void> {
		const { preparedTables } = this.entry;
		const mark = `${this.ref.qualified}|${need}`;
		let prepared = preparedTables.get(mark);
		if (prepared === undefined) {
			prepared = settle();
			preparedTables.set(mark, prepared);
			// A failed attempt (database down, no privilege) must be retried by the next execution.
			prepared.catch(() => preparedTables.delete(mark));
		}
		await prepared;
	}

	private async prepareTable(options: PrepareOptions): Promise<void> {
		const { create, lease } = options;
		const { pool } = this.entry;
		let state = await this.inspect();
		if (!state?.table_exists) {
			// Without Create Table If Missing, the statement itself reports the missing table.
			if (create)
				await pool.query(
					createTableSql(this.ref, { lease, fingerprint: options.fingerprint === true }),
				);
			return;
		}
		if (create && !state.has_first_seen_index)
			await pool.query(createIndexIfPermittedSql(this.ref));
		// A complete table needs no DDL, so a user with only SELECT, INSERT, UPDATE, DELETE on it is enough.
		const missing = () =>
			groupsNeeded(options).filter((group) => !hasGroup(state?.optional_columns ?? [], group));
		if (missing().length === 0) return;
		if (options.addColumns ?? create) {
			for (const group of missing()) await pool.query(addColumnsIfPermittedSql(this.ref, group));
			state = await this.inspect();
		}
		// One ALTER TABLE for everything still missing, so the table's owner runs one statement.
		if (missing().length > 0) throw new ColumnsMissingError(this.ref, missing());
	}

	private async addIndexes(
		indexes: readonly OperatorIndex[],
		hasFirstSeenIndex: boolean,
	): Promise<void> {
		const { pool } = this.entry;
		if (!hasFirstSeenIndex) await pool.query(createIndexIfPermittedSql(this.ref));
		if (indexes.length === 0) return;
		const names = indexes.map((index) => operatorIndexName(this.ref, index));
		const present = await pool.query<{ name: string }>(inspectOperatorIndexesSql(), [
			this.ref.qualified,
			names,
		]);
		const have = new Set(present.rows.map((row) => row.name));
		for (const index of indexes) {
			if (!have.has(operatorIndexName(this.ref, index))) await this.createIndex(index);
		}
	}

	/**
	 * Builds one index without blocking writes. A user who may not (not the table's owner) goes on
	 * without it, as with the first_seen index; so does one racing another execution that builds the
	 * same index (duplicate name). A build that fails half-way leaves an invalid index, which the
	 * queries do not use (the inspection checks indisvalid) and the docs say how to drop.
	 */
	private async createIndex(index: OperatorIndex): Promise<void> {
		let failure: unknown;
		try {
			await this.entry.pool.query(createOperatorIndexSql(this.ref, index));
		} catch (error) {
			failure = error;
		}
		const code = (failure as { code?: string } | undefined)?.code;
		if (failure !== undefined && code !== '42501' && code !== '42P07') throw failure;
	}
}
