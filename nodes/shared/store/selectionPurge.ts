import type { Pool } from '../transport/pg';
import type { TableRef } from './identifiers';
import {
	keySelectionDeleteSql,
	keySelectionParameters,
	keySelectionPreviewSql,
	prefixEnd,
	purgeCutoffSql,
	type KeySelection,
} from './sql/keySelection';

/** The most rows one purge statement deletes: Batch Size's limit in Purge Keys and the Keys node. */
export const MAX_BATCH_SIZE = 100_000;

/** The keys a purge selects, and the values its statements need. */
export interface SelectedKeys {
	selection: KeySelection;
	keys?: readonly string[];
	prefix?: string;
	/** By age: a PostgreSQL interval, e.g. `30 days`; keys first seen longer ago go. */
	retention?: string;
}

export interface SelectionPurgeResult {
	/** Deleted, or for a dry run matched (at most its count limit + 1: more than the limit). */
	count: number;
	/** The first of them (at most the list limit), sorted. */
	keys: string[];
	batches: number;
	/** By age: the instant keys first seen before it were selected. */
	cutoff?: Date;
}

/** The selection's bind values, in order; by age, the cutoff computed once, in database time. */
async function selectionValues(
	pool: Pool,
	{ selection, keys, prefix, retention }: SelectedKeys,
): Promise<{ values: unknown[]; cutoff?: Date }> {
	let cutoff: Date | undefined;
	if (selection.by === 'age') {
		cutoff = (await pool.query<{ cutoff: Date }>(purgeCutoffSql(), [retention])).rows[0].cutoff;
	}
	const byName = {
		keys: [...new Set(keys ?? [])].sort(),
		prefix: prefix ?? '',
		prefixEnd: prefixEnd(prefix ?? '') ?? null,
		cutoff,
	};
	return { values: keySelectionParameters(selection).map((name) => byName[name]), cutoff };
}

/**
 * A dry run: the purge's own selection (same WHERE, same index) counted up to `countLimit` + 1,
 * without deleting.
 */
export async function previewSelection(
	pool: Pool,
	ref: TableRef,
	selected: SelectedKeys,
	{ countLimit, listLimit }: { countLimit: number; listLimit: number },
): Promise<SelectionPurgeResult> {
	const { values, cutoff } = await selectionValues(pool, selected);
	const preview = await pool.query<{ matched: number; keys: string[] }>(
		keySelectionPreviewSql(ref, selected.selection),
		[...values, countLimit + 1, listLimit],
	);
	const { matched, keys } = preview.rows[0];
	return { count: matched, keys: [...keys].sort(), batches: 0, cutoff };
}

/**
 * Deletes the selected keys in batches of its own short statements, each skipping rows another
 * transaction holds, until a batch comes back short; lists the first `listLimit` keys deleted.
 */
export async function purgeSelection(
	pool: Pool,
	ref: TableRef,
	selected: SelectedKeys,
	{ batchSize, listLimit }: { batchSize: number; listLimit: number },
): Promise<SelectionPurgeResult> {
	const { values, cutoff } = await selectionValues(pool, selected);
	const sql = keySelectionDeleteSql(ref, selected.selection);
	const keys: string[] = [];
	let count = 0;
	let batches = 0;
	for (;;) {
		const result = await pool.query<{ key: string }>(sql, [...values, batchSize]);
		batches += 1;
		count += result.rows.length;
		for (const row of result.rows) if (keys.length < listLimit) keys.push(row.key);
		if (result.rows.length < batchSize) break;
	}
	keys.sort();
	return { count, keys, batches, cutoff };
}
