import { fromStorableJson } from './storableJson';
import { DEAD_LETTER } from './sql/redrive';
import type { LeaseOutcome, ReserveOutcome, ReserveTarget, StoredResponse } from './keyStoreTypes';

/**
 * Each key once, sorted, with the fingerprint of its first item: the one a new key is recorded with
 * (a later item of the same key is its duplicate, and compared with it).
 */
export function sortedDistinctTargets(targets: readonly ReserveTarget[]): {
	keys: string[];
	fingerprints: Array<string | null>;
	deliveries: Array<object | null>;
} {
	const first = new Map<string, ReserveTarget>();
	for (const target of targets) if (!first.has(target.key)) first.set(target.key, target);
	const keys = [...first.keys()].sort();
	return {
		keys,
		fingerprints: keys.map((key) => first.get(key)?.fingerprint ?? null),
		deliveries: keys.map((key) => first.get(key)?.delivery ?? null),
	};
}

/** A simple-mode reservation's row: [key, first_seen (s since 1970), stored fingerprint]. */
export type ReserveRow = [string, (number | null)?, (string | null)?];

export function reserveOutcomeOf(rows: readonly ReserveRow[]): ReserveOutcome {
	const outcome: ReserveOutcome = {
		inserted: new Set(),
		firstSeenMs: new Map(),
		storedFingerprints: new Map(),
	};
	for (const [key, firstSeenEpoch, storedFingerprint] of rows) {
		// Inserted rows come without first_seen; rows that existed always have one (NOT NULL).
		if (firstSeenEpoch === null || firstSeenEpoch === undefined) outcome.inserted.add(key);
		else outcome.firstSeenMs.set(key, Math.round(firstSeenEpoch * 1000));
		if (typeof storedFingerprint === 'string')
			outcome.storedFingerprints.set(key, storedFingerprint);
	}
	return outcome;
}

/** reserveLeaseSql's row: [key, state, attempts, lease_until, first_seen, retry_after, fingerprint, response, steps]. */
export type LeaseRow = [
	string,
	string | null,
	number | null,
	number | null,
	number | null,
	number | null,
	string | null,
	StoredResponse | null,
	(string[] | null)?,
];

/** The lease reservation's outcome for `keys` (distinct), from its rows. */
export function leaseOutcomeOf(
	rows: readonly LeaseRow[],
	keys: readonly string[],
	leaseSeconds: number,
): LeaseOutcome {
	const outcome: LeaseOutcome = { reserved: new Map(), held: new Map() };
	for (const [
		key,
		state,
		attempts,
		leaseUntilEpoch,
		firstSeenEpoch,
		retryAfter,
		storedFingerprint,
		response,
		steps,
	] of rows) {
		if (state === 'reserved') {
			outcome.reserved.set(key, {
				attempt: attempts ?? 1,
				leaseUntilMs: Math.round((leaseUntilEpoch ?? 0) * 1000),
				steps: steps ?? [],
			});
			continue;
		}
		const firstSeenMs = firstSeenEpoch === null ? undefined : Math.round(firstSeenEpoch * 1000);
		const recorded = storedFingerprint === null ? {} : { storedFingerprint };
		// Anything but in_progress (completed, empty from simple mode or the hand-built pattern) is
		// done; a dead letter (sql/redrive.ts) is held for an operator, said as such on the item.
		outcome.held.set(
			key,
			state === 'in_progress'
				? {
						status: 'in_progress',
						firstSeenMs,
						retryAfterSeconds: retryAfter ?? Math.ceil(leaseSeconds),
						...recorded,
					}
				: {
						status: state === DEAD_LETTER ? DEAD_LETTER : 'completed',
						firstSeenMs,
						...recorded,
						...(response === null
							? {}
							: { response: fromStorableJson(response) as StoredResponse }),
					},
		);
	}
	// Reserved by a concurrent execution after this statement's snapshot: in progress there.
	for (const key of keys) {
		if (!outcome.reserved.has(key) && !outcome.held.has(key)) {
			outcome.held.set(key, {
				status: 'in_progress',
				retryAfterSeconds: Math.ceil(leaseSeconds),
			});
		}
	}
	return outcome;
}
