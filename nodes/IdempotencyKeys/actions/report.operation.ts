import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { isoTime } from '../../shared/run/isoTime';
import { FailedStep } from '../../shared/run/storeStep';
import { openOperator, operatorStatement } from '../helpers/openOperator';
import {
	countLimitProperty,
	graceProperty,
	graceSeconds,
	MAX_COUNT_LIMIT,
	retentionOf,
	retentionProperties,
	wholeNumber,
} from '../helpers/settings';

export const description: INodeProperties[] = [
	graceProperty(),
	...retentionProperties.map((property) =>
		property.name === 'retentionAmount'
			? {
					...property,
					displayName: 'Preview Purge Older Than',
					description:
						'The report says how many keys a purge with this retention would delete (keys whose lease still runs and answered events are kept)',
				}
			: property,
	),
	countLimitProperty(),
];

/**
 * One item: counts by state, stuck keys, keys waiting for the redrive, dead letters (the oldest named), the oldest key, recent
 * reservations, takeovers and a purge preview, from one statement whose every part is a bounded range of an index.
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const opened = await openOperator(this, () => ({
		graceSeconds: graceSeconds(this),
		retention: retentionOf(this),
		countLimit: wholeNumber(this, 'countLimit', 'Count Up To', {
			min: 1,
			max: MAX_COUNT_LIMIT,
			fallback: 100_000,
		}),
		addIndexes: this.getNodeParameter('addIndexes', 0, true) as boolean,
	}));
	if (opened instanceof FailedStep) return opened.outputs;
	const { settings } = opened;
	const report = await operatorStatement(this, opened, 'report on the keys', async (queries) => {
		const { lease } = await queries.prepare({
			indexes: ['inProgress', 'takeover', 'deadLetter'],
			addIndexes: settings.addIndexes,
		});
		return await queries.report(settings, { lease });
	});
	if (report instanceof FailedStep) return report.outputs;
	const { counts } = report;
	const capped = Object.entries(counts)
		.filter(([, value]) => value >= settings.countLimit)
		.map(([name]) => name);
	const estimatedTotal = report.estimatedTotal;
	const summary = {
		table: opened.queries.ref.qualified,
		hasLeaseColumns: report.lease,
		// PostgreSQL keeps no exact row count: this is the planner's, as of the last VACUUM or ANALYZE.
		estimatedTotal,
		counts: {
			inProgress: counts.inProgress,
			leaseRunning: counts.running,
			stuck: counts.stuck,
			waitingForRedrive: counts.waitingForRedrive,
			deadLetters: counts.deadLetters,
			completedOrLegacyEstimated:
				estimatedTotal === null
					? null
					: Math.max(0, estimatedTotal - counts.inProgress - counts.deadLetters),
		},
		stuck: {
			count: counts.stuck,
			graceSeconds: settings.graceSeconds,
			oldestLeaseEnd: isoTime(report.oldestStuckLeaseUntilMs) ?? null,
		},
		// Answered events (Answer First) whose lease ended: the sender will not resend them, the Redrive
		// Trigger runs them. Not stuck; an old oldestLeaseEnd says the trigger is not running.
		waitingForRedrive: {
			count: counts.waitingForRedrive,
			oldestLeaseEnd: isoTime(report.oldestWaitingLeaseUntilMs) ?? null,
			...(counts.waitingForRedrive > 0
				? {
						next: 'Nothing to do while the Redrive Trigger is active: it runs them again (after Max Attempts they become dead letters). Look Up → Waiting for Redrive lists them',
					}
				: {}),
		},
		// Events the Redrive Trigger gave up on: they wait for an operator (Retry or Drop Dead Letters).
		deadLetters: {
			count: counts.deadLetters,
			oldestKeys: report.deadLetterKeys,
			allListed: report.deadLetterKeys.length === counts.deadLetters,
			...(counts.deadLetters > 0
				? {
						next: 'Look Up → Dead Letters lists them all; Retry Dead Letters runs them again, Drop Dead Letters deletes them',
					}
				: {}),
		},
		oldest:
			report.oldest === undefined
				? null
				: { key: report.oldest.key, firstSeenAt: isoTime(report.oldest.firstSeenMs) },
		reservedLastHour: counts.lastHour,
		reservedLastDay: counts.lastDay,
		takeovers: counts.takeovers,
		purgePreview: {
			olderThan: settings.retention,
			cutoff: report.cutoff.toISOString(),
			wouldDelete: Math.max(0, counts.purgeOlder - counts.purgeKept - counts.purgeKeptAnswered),
			keptLeaseRunning: counts.purgeKept,
			keptAnsweredEvents: counts.purgeKeptAnswered,
		},
		countLimit: settings.countLimit,
		capped,
		reportedAt: isoTime(report.nowMs),
	};
	return [[{ json: summary, pairedItem: { item: 0 } }]];
}
