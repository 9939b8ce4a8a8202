import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { namedKeys } from '../../shared/errors/describeStatementError';
import { releaseUnreachableText } from '../../shared/errors/lostKeys';
import { dropAnsweredEventsOf } from '../../shared/parameters/dropAnsweredEvents';
import { knownLeaseEnd, ownedKeyReader } from '../../shared/run/ownedKeys';
import { readItemTargets, routeItems, type ItemRoute } from '../../shared/run/itemFlow';
import { FailedStep, openStoreStep, statementStep } from '../../shared/run/storeStep';
import { ownedKeyId, type OwnedKey, type OwnedKeyResult } from '../../shared/store/KeyStore';

/** What an item says about its key: released, or why not. */
function releasedRoute(target: OwnedKey, result: OwnedKeyResult | undefined): ItemRoute {
	const { key } = target;
	if (result?.done === true) {
		// Reopened: kept with its lease ended. With step records the retry resumes after them; an
		// answered event waits for the Redrive Trigger, which runs it again from its stored delivery.
		const reopened = result.reopened === true;
		return {
			output: 0,
			idempotency: {
				key,
				released: true,
				...(reopened ? { reopened: true } : {}),
				...(reopened && result.answeredEvent !== true ? { stepsKept: true } : {}),
				...(reopened && result.answeredEvent === true ? { waiting: 'redrive' } : {}),
				...(!reopened && result.answeredEvent === true ? { droppedAnsweredEvent: true } : {}),
			},
		};
	}
	// A key this execution completed stays: its effect committed, and freeing it would run it again.
	// An answered event stays unless Drop Answered Events is on: nobody would resend it.
	const reason =
		result?.completedByOwner === true
			? 'completed'
			: result?.answeredEvent === true && target.token === undefined
				? 'answered_event'
				: result?.rowExists === true
					? 'not_owner'
					: 'not_found';
	return { output: 0, idempotency: { key, released: false, reason } };
}

/**
 * Deletes each item's key in one statement, so a retry of that event runs the business step again.
 * A key that comes with its reservation's token is deleted only while that token holds it; one with
 * step records (Idempotency Step) is kept with its lease ended, so the retry skips what was done,
 * and so is an answered event (its owner's release; without a token it stays) unless Drop Answered
 * Events is on.
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const create = this.getNodeParameter('createTable', 0, true) as boolean;
	const readTarget = ownedKeyReader(this, 'release');
	const dropAnsweredEvents = dropAnsweredEventsOf(this);

	const opened = await openStoreStep(this, 1);
	if (opened instanceof FailedStep) return opened.outputs;
	const targets = await readItemTargets(this, readTarget);
	const keys = targets.present.map((target) => target.key);
	const results = await statementStep(
		this,
		opened,
		{
			outputCount: 1,
			action: `release ${namedKeys(keys)}`,
			prepare: { create, lease: false },
			itemErrors: targets.failed,
			// Deleting twice under the owner's token deletes once. A key without a token is deleted
			// whoever holds it: after a first attempt whose answer was lost, a second could delete a new
			// reservation made in between, so only a connection refused before sending is retried there.
			repeatable: targets.present.every((target) => target.token !== undefined)
				? true
				: 'beforeSending',
			whenUnreachable: releaseUnreachableText(knownLeaseEnd(this.getInputData(), keys)),
		},
		async (store) => await store.release(targets.present, { dropAnsweredEvents }),
	);
	if (results instanceof FailedStep) return results.outputs;

	return routeItems(this, targets, 1, (target) =>
		releasedRoute(target, results.get(ownedKeyId(target))),
	);
}
