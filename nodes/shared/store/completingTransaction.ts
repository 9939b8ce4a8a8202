import type { StoredResponse } from '../answers/storedResponse';
import { sessionEnded } from '../transport/connectionRetry';
import type { PoolClient, QueryResult } from '../transport/pg';
import type { TableRef } from './identifiers';
import type { StepRecord } from './keyStoreTypes';
import { completeLockedSql, lockOwnedKeysSql, restoreLockTimeoutSql } from './sql/ownedKeys';
import { recordLockedStepSql } from './sql/steps';
import { StepStatementError } from './StepStatementError';

/** A reserved key and the token of the reservation the item claims to hold it with. */
export interface ClaimedKey {
	key: string;
	token: string;
	/** The answer to store with the completion (the first claim's, for a key several items share). */
	response?: StoredResponse;
}

/** What the locked row says about one claim. */
export type KeyHold =
	/** This token holds the key in progress: the statements may run and the key is completed. */
	| { state: 'owned' }
	/** This token completed the key earlier: its effect committed then and must not run again. */
	| { state: 'completedByOwner' }
	/** Recording as a step: the step is recorded already (this or an earlier execution); nothing runs. */
	| { state: 'stepRecorded'; record: StepRecord }
	/** Someone else holds it, or nobody (released, purged). Nothing runs for it. */
	| { state: 'lost'; rowExists: boolean; attempt?: number; completed?: boolean };

/** Runs one user statement for an item inside the transaction. */
export type RunStatement = (
	itemIndex: number,
	text: string,
	values: unknown[],
) => Promise<QueryResult[]>;

export interface CompletingTransaction<T> {
	claims: readonly ClaimedKey[];
	/** Roll back without running anything when any claim is lost (else the lost ones are left out). */
	stopIfAnyLost: boolean;
	/** The user's statements, for the claims that are owned, in the caller's (item) order. */
	statements: (run: RunStatement, holds: ReadonlyMap<string, KeyHold>) => Promise<T>;
	/**
	 * Record the statements as a step of the event instead of completing the key (a step of a
	 * workflow with several): `itemsOf` gives what is recorded for a key from what they returned.
	 */
	step?: { name: string; itemsOf: (result: T, key: string) => unknown[] };
}

export interface CompletingTransactionResult<T> {
	/** By claimId. */
	holds: Map<string, KeyHold>;
	/** What `statements` returned; undefined when they did not run (nothing owned, or rolled back on a lost claim). */
	result?: T;
	committed: boolean;
}

export function claimId({ key, token }: ClaimedKey): string {
	// Keys and tokens never hold NUL (refused before storage), so the pair is unambiguous.
	return `${key}\u0000${token}`;
}

interface LockedRow {
	previous_lock_timeout: string;
	key: string | null;
	owner_token: string | null;
	status: string | null;
	attempts: number | null;
	/** Only when recording a step: its record, if there is one. */
	step_record?: StepRecord | null;
}

function holdOf(claim: ClaimedKey, row: LockedRow | undefined): KeyHold {
	if (row === undefined) return { state: 'lost', rowExists: false };
	if (row.owner_token === claim.token) {
		if (row.status === 'in_progress' && row.step_record)
			return { state: 'stepRecorded', record: row.step_record };
		if (row.status === 'in_progress') return { state: 'owned' };
		if (row.status === 'completed') return { state: 'completedByOwner' };
	}
	return {
		state: 'lost',
		rowExists: true,
		attempt: row.attempts ?? undefined,
		completed: row.status !== 'in_progress',
	};
}

/**
 * The exactly-once step, on one connection inside BEGIN … COMMIT (the caller's): lock the claimed
 * key rows in key order and check that each claim still holds its key in progress, run the user's
 * statements, mark the owned keys completed (or, as a step of a longer workflow, record the step;
 * a step recorded already runs nothing). The effect and the completion then commit together or
 * not at all: a crash anywhere leaves the key in progress without the effect, and an execution whose
 * lease was taken over cannot commit, because the takeover's UPDATE waits for these row locks and
 * the owner check runs on the newest row version.
 */
export async function runCompletingTransaction<T>(
	client: PoolClient,
	ref: TableRef,
	transaction: CompletingTransaction<T>,
): Promise<CompletingTransactionResult<T> & { rollback: boolean }> {
	const keys = [...new Set(transaction.claims.map((claim) => claim.key))].sort();
	const { step } = transaction;
	const locked = await client.query<LockedRow>(
		lockOwnedKeysSql(ref, { step: step !== undefined }),
		step === undefined ? [keys] : [keys, step.name],
	);
	const rowByKey = new Map<string, LockedRow>();
	for (const row of locked.rows) if (row.key !== null) rowByKey.set(row.key, row);

	const holds = new Map<string, KeyHold>();
	for (const claim of transaction.claims)
		holds.set(claimId(claim), holdOf(claim, rowByKey.get(claim.key)));
	const holdList = [...holds.values()];
	const anyLost = holdList.some((hold) => hold.state === 'lost');
	const ownedKeys = [
		...new Set(
			transaction.claims
				.filter((claim) => holds.get(claimId(claim))?.state === 'owned')
				.map((claim) => claim.key),
		),
	].sort();
	if (ownedKeys.length === 0 || (anyLost && transaction.stopIfAnyLost))
		return { holds, committed: false, rollback: true };

	await client.query(restoreLockTimeoutSql(), [locked.rows[0].previous_lock_timeout]);
	const run: RunStatement = async (itemIndex, text, values) => {
		let failure: unknown;
		try {
			const result = await client.query(text, values.length > 0 ? values : undefined);
			// Several statements without parameters come back as one result each.
			return Array.isArray(result) ? (result as QueryResult[]) : [result];
		} catch (error) {
			failure = error;
		}
		// The connection to the key store ended under the user's statement: that is the store's
		// outage, not the statement's fault, and the whole transaction may be tried again.
		if (sessionEnded(failure)) throw failure;
		throw new StepStatementError(itemIndex, failure as Error);
	};
	const result = await transaction.statements(run, holds);
	if (step !== undefined) {
		const items = ownedKeys.map((key) => JSON.stringify(step.itemsOf(result, key)));
		await client.query(recordLockedStepSql(ref), [ownedKeys, items, step.name]);
		return { holds, result, committed: true, rollback: false };
	}
	const responseByKey = new Map<string, StoredResponse | undefined>();
	for (const claim of transaction.claims)
		if (!responseByKey.has(claim.key)) responseByKey.set(claim.key, claim.response);
	const responses = ownedKeys.map((key) => {
		const response = responseByKey.get(key);
		return response === undefined ? null : JSON.stringify(response);
	});
	const storing = responses.some((response) => response !== null);
	await client.query(
		completeLockedSql(ref, { response: storing }),
		storing ? [ownedKeys, responses] : [ownedKeys],
	);
	return { holds, result, committed: true, rollback: false };
}
