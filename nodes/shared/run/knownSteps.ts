import { ExpiringEntries } from './expiringEntries';

/**
 * What a statement of this process has just confirmed about a key this execution holds: the steps
 * recorded under it, and until when its lease cannot end. Idempotency Step (version 2) answers "is
 * this step done?" from it without a round trip, while the answer is as good as a read:
 * - only for a key, table and token that Reserve reserved in this execution, in this process. Held
 *   in memory, not in n8n's flow context: an execution resumed after a Wait (maybe in another
 *   process, hours later) finds nothing here and reads the key store as before;
 * - only while the lease cannot have ended, measured on this process's monotonic clock from before
 *   the statement was sent: the database started the lease later than that, so it ends later too,
 *   and no wall-clock offset between the two hosts enters. A margin covers a database clock that steps;
 * - only for FRESH_MS: an operator purge or a release from another workflow is not ordered with
 *   this execution, and an answer this young is what a read just before the step would have said;
 * - forgotten as soon as a node of this execution completes, releases or records for the key.
 * Nothing else writes a key's steps while its lease holds, so within those bounds a step that is not
 * among the names is not done.
 */
const FRESH_MS = 2_000;
/** Never used this close to the lease's end (ms). */
const LEASE_MARGIN_MS = 1_000;
/** Entries older than FRESH_MS are useless: swept when this many are held. */
const SWEEP_AT = 1_000;

interface KnownEntry {
	token: string;
	names: ReadonlySet<string>;
}

const known = new ExpiringEntries<KnownEntry>(SWEEP_AT);

function entryId(executionId: string, scope: string, key: string): string {
	return `${executionId}\u0000${scope}\u0000${key}`;
}

/** Now, on the clock the entries use; taken before a statement is sent. */
export function monotonicNow(): number {
	return performance.now();
}

/**
 * Notes what a statement sent at `sentAt` (monotonicNow) confirmed: `token` holds `key` with a lease
 * of `leaseMs` from then on at least, and these steps were recorded under it.
 */
export function noteKnownSteps(
	where: { executionId: string; scope: string },
	key: string,
	confirmed: { token: string; names: readonly string[]; sentAt: number; leaseMs: number },
): void {
	const usableUntil = Math.min(
		confirmed.sentAt + FRESH_MS,
		confirmed.sentAt + confirmed.leaseMs - LEASE_MARGIN_MS,
	);
	const id = entryId(where.executionId, where.scope, key);
	const entry = { token: confirmed.token, names: new Set(confirmed.names) };
	known.set(id, entry, usableUntil, monotonicNow());
}

/** The recorded step names, where a fresh answer for this key and token is known; else undefined. */
export function knownStepsOf(
	where: { executionId: string; scope: string },
	key: string,
	token: string,
): ReadonlySet<string> | undefined {
	const entry = known.get(entryId(where.executionId, where.scope, key), monotonicNow());
	return entry?.token === token ? entry.names : undefined;
}

/** A node of this execution is about to change the key's row: no answer from before it stands. */
export function forgetKnownSteps(where: { executionId: string; scope: string }, key: string): void {
	known.delete(entryId(where.executionId, where.scope, key));
}

/**
 * Reserve in lease mode: each key it routed as new was reserved (or taken over) by its statement,
 * sent at `sentAt`, for `leaseSeconds`, with the steps the statement found recorded.
 */
export function noteReservedSteps(
	where: { executionId: string; scope: string },
	reserved: ReadonlyMap<string, { steps: string[] }>,
	keys: readonly string[],
	lease: { token: string; leaseSeconds: number; sentAt: number },
): void {
	for (const key of keys) {
		const names = reserved.get(key)?.steps;
		if (names === undefined) continue;
		noteKnownSteps(where, key, {
			token: lease.token,
			names,
			sentAt: lease.sentAt,
			leaseMs: lease.leaseSeconds * 1000,
		});
	}
}
