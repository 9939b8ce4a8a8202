import { KeyError } from '../keys/KeyError';

/**
 * What Complete Key, Release Key and the exactly-once step say when the item's reservation no longer
 * holds its key, or when the key store stayed unreachable: who holds it instead, what that leaves
 * behind, and what to do.
 */

/** What a key's row says when the item's token no longer holds it. */
export interface LostKey {
	rowExists: boolean;
	/** The attempt of the reservation that holds it now. */
	attempt?: number;
	/** That reservation has completed it already (known to the exactly-once step, which locks the row). */
	completed?: boolean;
}

/** Who holds the key instead, as the start of a sentence; `before` ends "released or purged …". */
function lostKeySentence(key: string, found: LostKey, before: string): string {
	if (!found.rowExists)
		// An asynchronously replicated key store that failed over forgets recent reservations too.
		return `The key "${key}" is no longer reserved: it was released or purged (or lost by a key-store failover) ${before}`;
	const attempt = found.attempt === undefined ? '' : ` (attempt ${found.attempt})`;
	const there = found.completed === true ? ', which has completed it' : '';
	return `The key "${key}" was taken over by another execution${attempt}${there} after this execution's lease ended`;
}

/**
 * Why a key's token no longer owns it. Only Complete Key reports this as an error: its business step
 * ran, and another execution may run it again, which someone must know about.
 */
export function lostKeyError(key: string, found: LostKey): KeyError {
	const idempotentHint =
		'Make Lease longer than the slowest run from Reserve to Complete Key, and make the business step idempotent too (for example a unique index on its event key).';
	if (!found.rowExists) {
		return new KeyError(
			lostKeySentence(key, found, 'before Complete Key ran'),
			`A retry of this event may run the business step again. ${idempotentHint}`,
		);
	}
	return new KeyError(
		lostKeySentence(key, found, ''),
		`The business step ran here and may run there too. ${idempotentHint}`,
	);
}

/**
 * The exactly-once step found the key lost when it locked the row: nothing of its statements ran
 * or committed, so the event's effect happens once, in whichever execution holds the key.
 */
export function lostInTransactionError(key: string, found: LostKey): KeyError {
	return new KeyError(
		`${lostKeySentence(key, found, 'before this step ran')}, so this step's statements were rolled back`,
		found.rowExists
			? 'Nothing was committed here: the execution that holds the key runs the step, so the effect happens once. Make Lease longer than the slowest run from Reserve to this step.'
			: 'Nothing was committed here. A retry of the event reserves it again and runs the step then.',
	);
}

/**
 * Idempotency Step found the key no longer held by this execution's reservation: before a step
 * (`check`), nothing more may run here, since the execution that holds it now does the rest; after
 * one (`record`), the step ran here and is not recorded, so whoever holds the key may run it again.
 */
export function lostStepError(
	key: string,
	step: string,
	found: LostKey,
	when: 'check' | 'record',
): KeyError {
	const sentence = lostKeySentence(
		key,
		found,
		`before step "${step}" was ${when === 'check' ? 'checked' : 'recorded'}`,
	);
	const lease = 'Make Lease longer than the slowest run from Reserve to Complete Key.';
	return new KeyError(
		sentence,
		when === 'check'
			? `Step "${step}" did not run here: the execution that holds the key runs it. ${lease}`
			: `Step "${step}" ran here but is not recorded, so a retry may run it again. ${lease}`,
	);
}

const leaseEnds = (leaseEnd: string | undefined) =>
	leaseEnd === undefined ? 'until its lease ends' : `until its lease ends at ${leaseEnd}`;

/**
 * Complete Key could not reach the key store through all its retries: what that leaves behind and
 * the choice it leaves, for the error's description (an Error Workflow acts on it).
 */
export function completeUnreachableText(leaseEnd: string | undefined): string {
	return [
		`The business step's effect has committed and the key is not completed: it stays in progress, held by this execution's reservation ${leaseEnds(leaseEnd)}, and the sender's retries get "in progress" until then.`,
		'Releasing it (Release Key, or Idempotency Keys → Purge) would run the step again at once, on the next retry; keeping it runs the step again after the lease ends, when a retry takes it over.',
		'Either way the step runs twice unless it is idempotent itself. For a business step on PostgreSQL, the Exactly-Once SQL node is the real answer: its effect and the completion commit together, so an outage rolls both back and the retry runs the step once.',
	].join(' ');
}

/** Release Key could not reach the key store through all its retries: what that leaves behind. */
export function releaseUnreachableText(leaseEnd: string | undefined): string {
	return `The key is not released: it stays in progress ${leaseEnds(leaseEnd)}, and the sender's retries get "in progress" until then; after that a retry takes it over and runs the step. Nothing ran twice.`;
}
