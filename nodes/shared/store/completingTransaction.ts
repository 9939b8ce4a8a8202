import { sessionEnded } from '../transport/connectionRetry';
import type { PoolClient, QueryResult } from '../transport/pg';
import type { TableRef } from './identifiers';
import type { StepRecord, StoredResponse } from './keyStoreTypes';
import { stepRecordOf } from './ownedKeyRows';
import { oversizedRecord, type OversizedRecord } from './recordSize';
import { completeLockedSql, lockOwnedKeysSql, restoreLockTimeoutSql } from './sql/ownedKeys';
import { recordLockedStepSql } from './sql/steps';
import { StepStatementError } from './StepStatementError';
import { toStorableJson } from './storableJson';

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
	/**
	 * Recording a step: what the statements returned for the key is over the record cap. Its
	 * statements were rolled back (nothing of them committed) and the key is still in progress.
	 */
	| ({ state: 'tooLarge' } & OversizedRecord)
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
	/**
	 * Roll back without running anything when any claim is lost, and roll everything back when a
	 * step's record is over the cap (else those are left out and the others commit).
	 */
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
	/** Only when recording a step: its record, if there is one (as stored, see stepRecordOf). */
	step_record?: unknown;
}

function holdOf(claim: ClaimedKey, row: LockedRow | undefined): KeyHold {
	if (row === undefined) return { state: 'lost', rowExists: false };
	if (row.owner_token === claim.token) {
		const record = stepRecordOf(row.step_record);
		if (row.status === 'in_progress' && record !== undefined)
			return { state: 'stepRecorded', record };
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
	const ownedKeys = ownedKeysOf(transaction.claims, holds);
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
	if (step !== undefined) return await runAndRecordStep(client, ref, transaction, step, holds, run);
	const result = await transaction.statements(run, holds);
	const responseByKey = new Map<string, StoredResponse | undefined>();
	for (const claim of transaction.claims)
		if (!responseByKey.has(claim.key)) responseByKey.set(claim.key, claim.response);
	const responses = ownedKeys.map((key) => {
		const response = responseByKey.get(key);
		return response === undefined ? null : toStorableJson(response);
	});
	const storing = responses.some((response) => response !== null);
	await client.query(
		completeLockedSql(ref, { response: storing }),
		storing ? [ownedKeys, responses] : [ownedKeys],
	);
	return { holds, result, committed: true, rollback: false };
}

/** The keys that claims hold in progress here (the statements run for them), sorted. */
function ownedKeysOf(claims: readonly ClaimedKey[], holds: ReadonlyMap<string, KeyHold>): string[] {
	const owned = claims.filter((claim) => holds.get(claimId(claim))?.state === 'owned');
	return [...new Set(owned.map((claim) => claim.key))].sort();
}

/**
 * Runs the statements and records what they returned as the step, key by key. A key whose record
 * would be over the cap must not commit, and its statements cannot be undone alone (the items of
 * several keys run interleaved, in item order): the whole round is rolled back to a savepoint, that
 * key is left out (tooLarge) and the round runs again for the others. A rolled-back round committed
 * nothing, so every effect still happens once. With stopIfAnyLost (the node stops at its first
 * failing item) nothing commits at all.
 */
async function runAndRecordStep<T>(
	client: PoolClient,
	ref: TableRef,
	transaction: CompletingTransaction<T>,
	step: NonNullable<CompletingTransaction<T>['step']>,
	holds: Map<string, KeyHold>,
	run: RunStatement,
): Promise<CompletingTransactionResult<T> & { rollback: boolean }> {
	await client.query('SAVEPOINT idempotency_step_record');
	for (;;) {
		const ownedKeys = ownedKeysOf(transaction.claims, holds);
		if (ownedKeys.length === 0) return { holds, committed: false, rollback: true };
		const result = await transaction.statements(run, holds);
		const items = ownedKeys.map((key) => toStorableJson(step.itemsOf(result, key)));
		let anyTooLarge = false;
		ownedKeys.forEach((key, index) => {
			const over = oversizedRecord(items[index]);
			if (over === undefined) return;
			anyTooLarge = true;
			for (const claim of transaction.claims)
				if (claim.key === key) holds.set(claimId(claim), { state: 'tooLarge', ...over });
		});
		if (!anyTooLarge) {
			await client.query(recordLockedStepSql(ref), [ownedKeys, items, step.name]);
			return { holds, result, committed: true, rollback: false };
		}
		if (transaction.stopIfAnyLost) return { holds, committed: false, rollback: true };
		await client.query('ROLLBACK TO SAVEPOINT idempotency_step_record');
	}
}
