import type { IExecuteFunctions } from 'n8n-workflow';

import { executionEnd } from './executionLifetime';
import { ExpiringEntries } from './expiringEntries';
import { monotonicNow } from './knownSteps';

/**
 * The verdicts Verify Webhook Signature made in this process, per execution, so that a Reserve after
 * it trusts a `signature` verdict only where it saw it made: an item's JSON is whatever its trigger
 * made of the request, and a queue message parsed as JSON can say `signature: { valid: true, … }`
 * and so choose a key and suppress another event. A verdict counts for the execution that made it
 * (its provider and digest), never for another: a sub-workflow, or an execution resumed after a Wait
 * in another process, lets Reserve verify itself instead.
 */

/** Dropped at the execution's end; held at most this long where n8n does not say when that is. */
const HOLD_MS = 60 * 60 * 1000;
const witnessed = new ExpiringEntries<Set<string>>(1000);

function idOf(provider: string, digest: string): string {
	return `${provider}\u0000${digest}`;
}

/** Notes the verdicts this Verify run made (each valid item's provider and digest). */
export function noteWitnessedVerdicts(
	context: IExecuteFunctions,
	verdicts: ReadonlyArray<{ provider: string; digest: string }>,
): void {
	if (verdicts.length === 0) return;
	const executionId = String(context.getExecutionId() ?? '');
	const now = monotonicNow();
	let seen = witnessed.get(executionId, now);
	if (seen === undefined) {
		seen = new Set();
		witnessed.set(executionId, seen, now + HOLD_MS, now);
		void executionEnd(context)?.then(() => witnessed.delete(executionId));
	}
	for (const { provider, digest } of verdicts) seen.add(idOf(provider, digest));
}

/** Whether a Verify of this execution, in this process, made this verdict. */
export function wasWitnessed(
	context: IExecuteFunctions,
	provider: string,
	digest: string,
): boolean {
	const executionId = String(context.getExecutionId() ?? '');
	return witnessed.get(executionId, monotonicNow())?.has(idOf(provider, digest)) ?? false;
}
