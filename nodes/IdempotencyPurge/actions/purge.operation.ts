import { NodeOperationError, type IExecuteFunctions, type INodeExecutionData } from 'n8n-workflow';

import { assertStorableKey } from '../../shared/keys/composeKey';
import { namespaceText } from '../../shared/keys/namespace';
import { dropAnsweredEventsOf } from '../../shared/parameters/dropAnsweredEvents';
import { retentionInterval } from '../../shared/parameters/retention';
import { FailedStep, openStoreStep, statementStep } from '../../shared/run/storeStep';
import { MAX_BATCH_SIZE } from '../../shared/store/selectionPurge';

/** Reads and checks the purge settings; throws NodeOperationError with a hint for a bad value. */
function purgeSettings(context: IExecuteFunctions) {
	const node = context.getNode();
	const retention = retentionInterval(context, {
		label: 'Keep Keys For',
		hint: 'Keep keys longer than the provider can redeliver (Stripe: up to 30 days).',
	});
	const batchSize = Number(context.getNodeParameter('batchSize', 0, 1000));
	if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH_SIZE) {
		throw new NodeOperationError(
			node,
			`Batch Size must be a whole number from 1 to ${MAX_BATCH_SIZE}`,
		);
	}
	// Reserve's own rule (shared/keys/namespace.ts), so "Only Namespace" matches exactly the keys Reserve made with it.
	const namespace = namespaceText(context.getNodeParameter('namespace', 0, ''));
	if (namespace !== '') assertStorableKey(namespace);
	return {
		retention,
		keyPrefix: namespace === '' ? undefined : `${namespace}:`,
		batchSize,
		dropAnsweredEvents: dropAnsweredEventsOf(context),
	};
}

/**
 * Deletes keys older than the retention, in batches, bar answered events unless Drop Answered Events
 * is on; outputs one summary item, with the answered events kept or dropped.
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const opened = await openStoreStep(this, 1, () => purgeSettings(this));
	if (opened instanceof FailedStep) return opened.outputs;
	const create = this.getNodeParameter('createTable', 0, true) as boolean;
	const step = { outputCount: 1, action: 'purge old keys', prepare: { create, lease: false } };
	const result = await statementStep(
		this,
		opened,
		step,
		async (store) => await store.purge(opened.settings),
	);
	if (result instanceof FailedStep) return result.outputs;
	const summary = {
		deleted: result.deleted,
		cutoff: result.cutoff.toISOString(),
		batches: result.batches,
		// Answered events (Answer First) older than the retention: never resent, so kept unless dropped.
		keptAnsweredEvents: result.keptAnsweredEvents,
		droppedAnsweredEvents: result.droppedAnsweredEvents,
	};
	return [[{ json: summary, pairedItem: { item: 0 } }]];
}
