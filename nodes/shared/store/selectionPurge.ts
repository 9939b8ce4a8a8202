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

/** Purge Keys counts the answered events it kept up to this (few are ever in progress at once). */
export const ANSWERED_COUNT_LIMIT = 100_000;

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
	/** Answered events (sql/answeredEvents.ts) the selection held: kept, or dropped (would be, in a dry run). */
	answeredEvents: AnsweredEventCounts;
}

/** Counts (up to the count limit) and the first keys (up to the list limit), sorted. */
export interface AnsweredEventCounts {
	kept: number;
	keptKeys: string[];
	dropped: number;
	droppedKeys: string[];
}

interface Limits {
	listLimit: number;
	/** Counting stops here (a dry run's, and the kept answered events'). */
	countLimit: number;
}

/** The selection's answered events, matched by its own statement restricted to them, not deleted. */
async function matchedAnswered(
	pool: Pool,
	ref: TableRef,
	selection: KeySelection,
	values: unknown[],
	{ countLimit, listLimit }: Limits,
): Promise<{ count: number; keys: string[] }> {
	if (selection.answeredEvents === undefined) return { count: 0, keys: [] };
	const only = { ...selection, answeredEvents: 'only' as const };
	const result = await pool.query<{ matched: number; keys: string[] }>(
		keySelectionPreviewSql(ref, only),
		[...values, countLimit, listLimit],
	);
	const { matched, keys } = result.rows[0];
	return { count: matched, keys: [...keys].sort() };
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
 * without deleting; and the answered events it keeps or would drop, counted up to `countLimit`.
 */
export async function previewSelection(
	pool: Pool,
	ref: TableRef,
	selected: SelectedKeys,
	limits: Limits,
): Promise<SelectionPurgeResult> {
	const { values, cutoff } = await selectionValues(pool, selected);
	const preview = await pool.query<{ matched: number; keys: string[] }>(
		keySelectionPreviewSql(ref, selected.selection),
		[...values, limits.countLimit + 1, limits.listLimit],
	);
	const { matched, keys } = preview.rows[0];
	const answered = await matchedAnswered(pool, ref, selected.selection, values, limits);
	return {
		count: matched,
		keys: [...keys].sort(),
		batches: 0,
		cutoff,
		answeredEvents: answeredCounts(selected.selection, answered),
	};
}

/** A dry run's answered events: kept by `keep`, among what `drop` would delete. */
function answeredCounts(
	selection: KeySelection,
	answered: { count: number; keys: string[] },
): AnsweredEventCounts {
	const none = { count: 0, keys: [] };
	const kept = selection.answeredEvents === 'drop' ? none : answered;
	const dropped = selection.answeredEvents === 'drop' ? answered : none;
	return {
		kept: kept.count,
		keptKeys: kept.keys,
		dropped: dropped.count,
		droppedKeys: dropped.keys,
	};
}

/**
 * Deletes the selected keys in batches of its own short statements, each skipping rows another
 * transaction holds, until a batch comes back short; lists the first `listLimit` keys deleted.
 * Then, keeping answered events, counts those still selected: what the purge left, and why.
 */
export async function purgeSelection(
	pool: Pool,
	ref: TableRef,
	selected: SelectedKeys,
	limits: Limits & { batchSize: number },
): Promise<SelectionPurgeResult> {
	const { batchSize, listLimit } = limits;
	const { values, cutoff } = await selectionValues(pool, selected);
	const sql = keySelectionDeleteSql(ref, selected.selection);
	const keys: string[] = [];
	const droppedKeys: string[] = [];
	let count = 0;
	let dropped = 0;
	let batches = 0;
	for (;;) {
		const result = await pool.query<{ key: string; answered_event?: boolean }>(sql, [
			...values,
			batchSize,
		]);
		batches += 1;
		count += result.rows.length;
		for (const row of result.rows) {
			if (keys.length < listLimit) keys.push(row.key);
			if (row.answered_event !== true) continue;
			dropped += 1;
			if (droppedKeys.length < listLimit) droppedKeys.push(row.key);
		}
		if (result.rows.length < batchSize) break;
	}
	keys.sort();
	droppedKeys.sort();
	const kept =
		selected.selection.answeredEvents === 'keep'
			? await matchedAnswered(pool, ref, selected.selection, values, limits)
			: { count: 0, keys: [] };
	return {
		count,
		keys,
		batches,
		cutoff,
		answeredEvents: { kept: kept.count, keptKeys: kept.keys, dropped, droppedKeys },
	};
}
