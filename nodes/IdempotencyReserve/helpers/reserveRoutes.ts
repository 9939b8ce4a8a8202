import { KeyError } from '../../shared/keys/KeyError';
import { isoTime } from '../../shared/run/isoTime';
import type { ItemRoute } from '../../shared/run/itemFlow';
import type { LeaseOutcome, ReserveOutcome, ReserveTarget } from '../../shared/store/KeyStore';
import type { ReserveOutputs } from '../../shared/reserveRules/reserveOutputs';
import type { MismatchHandling } from '../../shared/reserveRules/reserveSettings';

/**
 * Where Reserve sends each item, from what its one statement found for the item's key: new, a
 * duplicate, in flight, or a key reused for another request.
 */

/** How long a fingerprint prefix in an output is: enough to tell two apart, too short to matter. */
const FINGERPRINT_PREFIX_LENGTH = 12;

/**
 * A duplicate whose request differs from the one that reserved the key: both fingerprints known and
 * different (a row without one never mismatches). Undefined when it is the same request.
 */
function mismatchOf(
	target: ReserveTarget,
	stored: string | undefined,
	onMismatch: MismatchHandling,
): { mismatch: true; fingerprint: string; storedFingerprint: string } | KeyError | undefined {
	const { key, fingerprint } = target;
	if (fingerprint === undefined || stored === undefined || fingerprint === stored) return undefined;
	const mine = `${fingerprint.slice(0, FINGERPRINT_PREFIX_LENGTH)}…`;
	const theirs = `${stored.slice(0, FINGERPRINT_PREFIX_LENGTH)}…`;
	if (onMismatch === 'error') {
		return new KeyError(
			`The key "${key}" was reserved for another request: its fingerprint differs (stored ${theirs}, this request ${mine})`,
			'The same key came with a different payload. Check that the key is unique per request (a Custom key, a client reusing an Idempotency-Key), or set On Mismatch to Flag the Duplicate and answer 422.',
			'fingerprint-mismatch',
		);
	}
	return { mismatch: true, fingerprint: mine, storedFingerprint: theirs };
}

/** A repeat goes to `duplicate`; a mismatch to `reused key` where the node has that output. */
function duplicateOutput(outputs: ReserveOutputs, mismatch: boolean): number {
	return mismatch && outputs.reusedKey !== undefined ? outputs.reusedKey : outputs.duplicate;
}

/** Simple mode: the key is new when this statement inserted it. */
export function routeSimple(
	outcome: ReserveOutcome,
	target: ReserveTarget,
	onMismatch: MismatchHandling,
	outputs: ReserveOutputs,
): ItemRoute | KeyError {
	const { key } = target;
	// Taking the key out of `inserted` makes only the first item of a key new within the
	// execution; later items with the same key are its duplicates, compared with its fingerprint.
	if (outcome.inserted.delete(key)) {
		if (target.fingerprint !== undefined) outcome.storedFingerprints.set(key, target.fingerprint);
		return { output: outputs.new, idempotency: { key, isNew: true } };
	}
	const mismatch = mismatchOf(target, outcome.storedFingerprints.get(key), onMismatch);
	if (mismatch instanceof KeyError) return mismatch;
	const firstSeenMs = outcome.firstSeenMs.get(key);
	return {
		output: duplicateOutput(outputs, mismatch !== undefined),
		idempotency: {
			key,
			isNew: false,
			...(firstSeenMs !== undefined ? { firstSeenAt: isoTime(firstSeenMs) } : {}),
			...mismatch,
		},
	};
}

/**
 * Lease mode: new or taken over goes on with its token; a completed key is a duplicate, a key
 * still in progress is in flight (its own output from version 2). A mismatch is never in flight (a
 * duplicate or reused key), so another payload under a key is answered the same way whether its
 * first request has finished.
 */
export function routeLease(
	outcome: LeaseOutcome,
	target: ReserveTarget,
	token: string,
	leaseSeconds: number,
	onMismatch: MismatchHandling,
	outputs: ReserveOutputs,
): ItemRoute | KeyError {
	const { key } = target;
	const reserved = outcome.reserved.get(key);
	if (reserved !== undefined) {
		outcome.reserved.delete(key);
		// This execution now holds the key: a later item with the same key is in progress here.
		outcome.held.set(key, {
			status: 'in_progress',
			retryAfterSeconds: Math.ceil(leaseSeconds),
			storedFingerprint: target.fingerprint,
		});
		return {
			output: outputs.new,
			idempotency: {
				key,
				isNew: true,
				token,
				leaseUntil: isoTime(reserved.leaseUntilMs),
				attempt: reserved.attempt,
			},
		};
	}
	const held = outcome.held.get(key) ?? {
		status: 'in_progress',
		retryAfterSeconds: Math.ceil(leaseSeconds),
	};
	const mismatch = mismatchOf(target, held.storedFingerprint, onMismatch);
	if (mismatch instanceof KeyError) return mismatch;
	return {
		output:
			held.status === 'in_progress' && mismatch === undefined
				? outputs.inFlight
				: duplicateOutput(outputs, mismatch !== undefined),
		idempotency: {
			key,
			isNew: false,
			status: held.status,
			...(held.firstSeenMs !== undefined ? { firstSeenAt: isoTime(held.firstSeenMs) } : {}),
			...(held.retryAfterSeconds !== undefined
				? { retryAfterSeconds: held.retryAfterSeconds }
				: {}),
			...mismatch,
			// The first answer, to replay; never for another request under the same key.
			...(held.response !== undefined && mismatch === undefined ? { response: held.response } : {}),
		},
	};
}
