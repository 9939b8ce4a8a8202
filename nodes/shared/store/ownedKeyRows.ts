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

/** The simple DELETE's result for every target: released (and so there) where its key came back. */
export function releasedResultsOf(
	targets: readonly OwnedKey[],
	released: ReadonlySet<string>,
): OwnedKeyResults {
	const results: OwnedKeyResults = new Map();
	for (const target of targets) {
		results.set(ownedKeyId(target), {
			done: released.has(target.key),
			rowExists: released.has(target.key),
		});
	}
	return results;
}
