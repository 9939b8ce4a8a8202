import { sleep } from 'n8n-workflow';

import type { LeaseOutcome, ReserveTarget } from '../../shared/store/KeyStore';

/**
 * Lease mode's "Wait While In Flight": before routing a key to `in flight`, ask again, with backoff,
 * until its first execution completes it (then a duplicate), its lease ends (then this execution
 * takes it over as new) or the wait runs out (then in flight, as without the wait). Asking again is
 * the same reserve statement, so a takeover stays atomic: of several waiters exactly one gets it.
 * A queue consumer needs this: a message redelivered while its first execution's lease runs must not
 * be acknowledged, and failing at once makes the broker redeliver at once, a hot loop. Waiting W
 * seconds bounds executions per message during a lease of L seconds to about ceil(L / W) + 1.
 * Waiting holds no database connection, only the execution (and its slot of the trigger's
 * parallel-message limit).
 */

/** The first poll comes soon (a fast first execution is usually done), later ones back off to this. */
export const FIRST_POLL_MS = 200;
export const MAX_POLL_MS = 2000;

export type Sleep = (ms: number) => Promise<void>;

const sleepFor: Sleep = async (ms) => await sleep(ms);

/** Keys in progress elsewhere for the same request (a mismatch is answered at once, never waited on). */
function waitingTargets(outcome: LeaseOutcome, targets: readonly ReserveTarget[]): ReserveTarget[] {
	return targets.filter((target) => {
		const held = outcome.held.get(target.key);
		if (held === undefined || held.status !== 'in_progress') return false;
		const stored = held.storedFingerprint;
		return (
			target.fingerprint === undefined || stored === undefined || target.fingerprint === stored
		);
	});
}

/**
 * Waits up to `waitMs` for the in-flight keys of `outcome`, asking `again` for them, and returns
 * the outcome merged with the answers (a key taken over moves from `held` to `reserved`).
 * `polls` counts the extra statements.
 */
export async function waitWhileInFlight(
	outcome: LeaseOutcome,
	targets: readonly ReserveTarget[],
	waitMs: number,
	again: (targets: readonly ReserveTarget[]) => Promise<LeaseOutcome>,
	sleep: Sleep = sleepFor,
): Promise<{ outcome: LeaseOutcome; polls: number }> {
	const deadline = Date.now() + waitMs;
	let delay = FIRST_POLL_MS;
	let polls = 0;
	for (;;) {
		const waiting = waitingTargets(outcome, targets);
		const left = deadline - Date.now();
		if (waiting.length === 0 || left <= 0) return { outcome, polls };
		// Never sleep past the soonest lease end: the takeover should not come late.
		const soonestLeaseEndMs = Math.min(
			...waiting.map((target) => (outcome.held.get(target.key)?.retryAfterSeconds ?? 1) * 1000),
		);
		await sleep(Math.max(1, Math.min(delay, left, soonestLeaseEndMs)));
		delay = Math.min(delay * 2, MAX_POLL_MS);
		const next = await again(waiting);
		polls++;
		for (const [key, reserved] of next.reserved) {
			outcome.held.delete(key);
			outcome.reserved.set(key, reserved);
		}
		for (const [key, held] of next.held) outcome.held.set(key, held);
	}
}
