import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { KeyError } from '../../shared/keys/KeyError';
import {
	dropAnsweredEventsOf,
	dropAnsweredEventsProperty,
} from '../../shared/parameters/dropAnsweredEvents';
import { FailedStep } from '../../shared/run/storeStep';
import { MAX_BATCH_SIZE } from '../../shared/store/selectionPurge';
import type { KeySelection } from '../../shared/store/sql/keySelection';
import { openOperator, operatorStatement } from '../helpers/openOperator';
import {
	countLimitProperty,
	keyPrefix,
	keyPrefixProperty,
	keysOf,
	keysProperty,
	MAX_COUNT_LIMIT,
	MAX_LIST_LIMIT,
	retentionOf,
	retentionProperties,
	wholeNumber,
} from '../helpers/settings';

type PurgeBy = KeySelection['by'];

const show = (purgeBy: PurgeBy[]) => ({ displayOptions: { show: { purgeBy } } });

export const description: INodeProperties[] = [
	{
		displayName: 'Dry Run',
		name: 'dryRun',
		type: 'boolean',
		default: true,
		description:
			'Whether to only report what would be deleted (count and keys) and delete nothing. Turn off to delete.',
	},
	{
		displayName: 'Select Keys By',
		name: 'purgeBy',
		type: 'options',
		noDataExpression: true,
		default: 'keys',
		options: [
			{ name: 'Age', value: 'age', description: 'Keys first seen before a retention' },
			{
				name: 'Key Prefix',
				value: 'prefix',
				description: 'Keys of a namespace or starting with a prefix',
			},
			{ name: 'Keys', value: 'keys', description: 'The keys listed (from every item)' },
		],
	},
	{ ...keysProperty, ...show(['keys']) },
	{ ...keyPrefixProperty, ...show(['prefix']) },
	...retentionProperties.map((property) => ({ ...property, ...show(['age']) })),
	{
		displayName: 'Only Keys That Are',
		name: 'statusFilter',
		type: 'options',
		default: 'any',
		options: [
			{ name: 'Any State', value: 'any' },
			{ name: 'Completed', value: 'completed', description: 'Completed by Complete Key' },
			{
				name: 'Completed or Legacy',
				value: 'completedOrLegacy',
				description: 'Everything Reserve treats as done (never a dead letter)',
			},
			{
				name: 'Dead Letter',
				value: 'deadLetter',
				description: 'Given up on by the Redrive Trigger, with their stored delivery',
			},
			{
				name: 'In Progress',
				value: 'inProgress',
				description: 'Reserved and not completed; stuck ones unless running leases are included',
			},
			{
				name: 'Legacy',
				value: 'legacy',
				description: 'Written in simple mode or by the hand-built pattern (no status)',
			},
		],
	},
	{
		displayName: 'Also Delete Keys Whose Lease Runs',
		name: 'includeRunningLeases',
		type: 'boolean',
		default: false,
		description:
			'Whether to delete keys an execution is working on right now. Off, they are kept: deleting one lets a retry run the business step a second time while the first still runs.',
	},
	dropAnsweredEventsProperty('counted and listed in keptAnsweredEvents and keptAnsweredKeys'),
	{
		displayName: 'Batch Size',
		name: 'batchSize',
		type: 'number',
		default: 1000,
		typeOptions: { minValue: 1, maxValue: MAX_BATCH_SIZE },
		description: 'Rows deleted per statement. Small batches keep each lock short on a big table.',
	},
	{
		displayName: 'List Up To',
		name: 'listLimit',
		type: 'number',
		default: 100,
		typeOptions: { minValue: 0, maxValue: MAX_LIST_LIMIT },
		description: 'How many of the deleted (or, in a dry run, matched) keys the output lists',
	},
	{ ...countLimitProperty(), displayOptions: { show: { dryRun: [true] } } },
];

function purgeSettings(context: IExecuteFunctions) {
	const by = context.getNodeParameter('purgeBy', 0, 'keys') as PurgeBy;
	const status = context.getNodeParameter('statusFilter', 0, 'any') as KeySelection['status'];
	const dryRun = context.getNodeParameter('dryRun', 0, true) as boolean;
	let keys: string[] | undefined;
	if (by === 'keys') {
		// Every item's keys: a list of keys to redo arrives as items.
		const items = context.getInputData();
		keys = items.flatMap((_item, itemIndex) =>
			keysOf(context.getNodeParameter('keys', itemIndex, '')),
		);
		if (keys.length === 0)
			throw new KeyError(
				'No key to purge',
				'Set Keys to the keys to delete, one per line, or to an expression such as {{ $json.key }}.',
			);
	}
	return {
		dryRun,
		selection: {
			by,
			status,
			includeRunningLeases: context.getNodeParameter('includeRunningLeases', 0, false) as boolean,
			answeredEvents: dropAnsweredEventsOf(context) ? ('drop' as const) : ('keep' as const),
		},
		keys,
		prefix: by === 'prefix' ? keyPrefix(context, { required: true }) : undefined,
		retention: by === 'age' ? retentionOf(context) : undefined,
		batchSize: wholeNumber(context, 'batchSize', 'Batch Size', {
			min: 1,
			max: MAX_BATCH_SIZE,
			fallback: 1000,
		}),
		listLimit: wholeNumber(context, 'listLimit', 'List Up To', {
			min: 0,
			max: MAX_LIST_LIMIT,
			fallback: 100,
		}),
		countLimit: dryRun
			? wholeNumber(context, 'countLimit', 'Count Up To', {
					min: 1,
					max: MAX_COUNT_LIMIT,
					fallback: 100_000,
				})
			: MAX_COUNT_LIMIT,
		addIndexes: context.getNodeParameter('addIndexes', 0, true) as boolean,
	};
}

/**
 * Deletes the selected keys in batches, or (dry run) says what it would delete; answered events
 * only with Drop Answered Events, and either way the output counts and lists them. Both run the same
 * selection on the same index, so a purge right after its dry run deletes what the dry run listed,
 * bar keys that changed state in between.
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const opened = await openOperator(this, () => purgeSettings(this));
	if (opened instanceof FailedStep) return opened.outputs;
	const { settings } = opened;
	const result = await operatorStatement(
		this,
		opened,
		settings.dryRun ? 'preview the purge' : 'purge the keys',
		async (queries) => {
			const { lease } = await queries.prepare({
				indexes: settings.selection.by === 'prefix' ? ['keyPrefix'] : [],
				addIndexes: settings.addIndexes,
			});
			return await queries.purge(settings, { lease });
		},
	);
	if (result instanceof FailedStep) return result.outputs;
	const selection = {
		by: settings.selection.by,
		...(settings.prefix === undefined ? {} : { keyPrefix: settings.prefix }),
		...(settings.keys === undefined ? {} : { keyCount: new Set(settings.keys).size }),
		...(result.cutoff === undefined ? {} : { cutoff: result.cutoff.toISOString() }),
		status: settings.selection.status,
		includeRunningLeases: settings.selection.includeRunningLeases,
		dropAnsweredEvents: settings.selection.answeredEvents === 'drop',
	};
	// Answered events (Answer First): the sender will not resend them, so what was kept or dropped is named.
	const answered = result.answeredEvents;
	const kept = { keptAnsweredEvents: answered.kept, keptAnsweredKeys: answered.keptKeys };
	const count = settings.dryRun ? Math.min(result.count, settings.countLimit) : result.count;
	const summary = settings.dryRun
		? {
				dryRun: true,
				wouldDelete: count,
				capped: result.count > settings.countLimit,
				keys: result.keys,
				keysComplete: result.keys.length === count && !(result.count > settings.countLimit),
				...kept,
				wouldDropAnsweredEvents: answered.dropped,
				selection,
			}
		: {
				dryRun: false,
				deleted: count,
				batches: result.batches,
				keys: result.keys,
				keysComplete: result.keys.length === count,
				...kept,
				droppedAnsweredEvents: answered.dropped,
				droppedAnsweredKeys: answered.droppedKeys,
				selection,
			};
	return [[{ json: summary, pairedItem: { item: 0 } }]];
}
