import { fromStorableJson } from './storableJson';
import {
	ownedKeyId,
	type OwnedKey,
	type OwnedKeyResult,
	type OwnedKeyResults,
	type StepRecord,
	type StepState,
} from './keyStoreTypes';

/** Each key and token once, sorted by key, so executions with overlapping batches lock rows in one order. */
export function sortedDistinctOwned(targets: readonly OwnedKey[]): OwnedKey[] {
	const byId = new Map(targets.map((target) => [ownedKeyId(target), target]));
	return [...byId.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The rows of completeSql or releaseOwnedSql, by key and token; `doneColumn` says what was done. */
export function ownedKeyResultsOf(
	rows: ReadonlyArray<Record<string, unknown>>,
	doneColumn: string,
): OwnedKeyResults {
	const results: OwnedKeyResults = new Map();
	for (const row of rows) {
		const target = {
			key: row.key as string,
			token: (row.owner_token as string | null) ?? undefined,
		};
		results.set(ownedKeyId(target), {
			done: row[doneColumn] === true,
			rowExists: row.row_exists === true,
			attempt: typeof row.attempts === 'number' ? row.attempts : undefined,
			completedByOwner: row.completed_by_owner === true,
			reopened: row.reopened === true,
			answeredEvent: row.answered_event === true,
			alreadyRecorded: row.already_recorded === true && row.owned === true,
			...('next_record' in row ? stepBoundaryFields(row) : {}),
		});
	}
	return results;
}

/** recordStepSql with `next`: whether the token held the key, and the next step's record. */
function stepBoundaryFields(row: Record<string, unknown>): Partial<OwnedKeyResult> {
	const nextRecord = stepRecordOf(row.next_record);
	return { owned: row.owned === true, ...(nextRecord === undefined ? {} : { nextRecord }) };
}

/** A step's record as read from the row (its items decoded, see storableJson); undefined when there is none. */
export function stepRecordOf(stored: unknown): StepRecord | undefined {
	if (stored === null || stored === undefined) return undefined;
	const record = stored as { at: string; items: unknown };
	return { at: record.at, items: fromStorableJson(record.items) as unknown[] };
}

/** The rows of stepStateSql, by key and token. */
export function stepStatesOf(rows: ReadonlyArray<Record<string, unknown>>): Map<string, StepState> {
	const states = new Map<string, StepState>();
	for (const row of rows) {
		const record = stepRecordOf(row.record);
		states.set(ownedKeyId({ key: row.key as string, token: row.owner_token as string }), {
			owned: row.owned === true,
			rowExists: row.row_exists === true,
			attempt: typeof row.attempts === 'number' ? row.attempts : undefined,
			...(record === undefined ? {} : { record }),
		});
	}
	return states;
}

/** releaseSql's rows (one per key) for every target: released, and whether it held an answered event. */
export function releasedResultsOf(
	targets: readonly OwnedKey[],
	rows: ReadonlyArray<{ key: string; released: boolean; answered_event: boolean }>,
): OwnedKeyResults {
	const byKey = new Map(rows.map((row) => [row.key, row]));
	const results: OwnedKeyResults = new Map();
	for (const target of targets) {
		const row = byKey.get(target.key);
		results.set(ownedKeyId(target), {
			done: row?.released === true,
			// A key kept as an answered event is there; of the others, only a released one is known to be.
			rowExists: row?.released === true || row?.answered_event === true,
			answeredEvent: row?.answered_event === true,
		});
	}
	return results;
}
