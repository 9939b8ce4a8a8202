import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';

import { itemParameterReader } from '../../shared/parameters/itemParameter';
import { isoTime } from '../../shared/run/isoTime';
import { collectItemKeys, errorItem } from '../../shared/run/itemErrors';
import { FailedStep } from '../../shared/run/storeStep';
import type { KeyRow } from '../../shared/store/operatorQueries';
import { openOperator, operatorStatement } from '../helpers/openOperator';
import {
	graceProperty,
	graceSeconds,
	keyPrefix,
	keyPrefixProperty,
	keysOf,
	keysProperty,
	MAX_LIST_LIMIT,
	wholeNumber,
} from '../helpers/settings';

type LookUpBy = 'keys' | 'prefix' | 'stuck' | 'waitingForRedrive' | 'deadLetters';

const show = (lookUpBy: LookUpBy[]) => ({ displayOptions: { show: { lookUpBy } } });

export const description: INodeProperties[] = [
	{
		displayName: 'Look Up',
		name: 'lookUpBy',
		type: 'options',
		noDataExpression: true,
		default: 'keys',
		options: [
			{
				name: 'Dead Letters',
				value: 'deadLetters',
				description:
					'Keys the Redrive Trigger gave up on after Max Attempts, oldest first: retry or drop them with the operations of the same names. One item each, none when there are none.',
			},
			{
				name: 'Keys',
				value: 'keys',
				description: 'One item per key, in order; a key that does not exist gives found: false',
			},
			{
				name: 'Keys Starting With',
				value: 'prefix',
				description: 'Every key of a namespace or prefix, in byte order, one item each',
			},
			{
				name: 'Stuck Keys',
				value: 'stuck',
				description:
					"Keys in progress whose lease ended and that no retry took over, without a stored delivery: their execution died, and only the sender's resend or an operator finishes them. One item each, none when there are none.",
			},
			{
				name: 'Waiting for Redrive',
				value: 'waitingForRedrive',
				description:
					'Answered events (Answer First): in progress with a stored delivery, their lease ended. Nothing to do: the Redrive Trigger runs them again, and after Max Attempts they become dead letters.',
			},
		],
	},
	{ ...keysProperty, ...show(['keys']) },
	{ ...keyPrefixProperty, ...show(['prefix']) },
	{ ...graceProperty(), ...show(['stuck']) },
	{
		displayName: 'Limit',
		name: 'limit',
		type: 'number',
		default: 50,
		typeOptions: { minValue: 1, maxValue: MAX_LIST_LIMIT },
		description: 'Max number of results to return',
		...show(['prefix', 'stuck', 'waitingForRedrive', 'deadLetters']),
	},
	{
		displayName: 'Include Stored Response',
		name: 'includeResponse',
		type: 'boolean',
		default: false,
		description:
			'Whether to add the answer Complete Key stored with the key (status code, headers, body). Off, the item only says whether there is one.',
	},
];

/** One key as an item: the table's terms, times as ISO text, no owner token (only its label). */
export function keyJson(row: KeyRow): IDataObject {
	if (!row.found) return { key: row.key, found: false };
	const json: IDataObject = {
		key: row.key,
		found: true,
		status: row.status,
		attempt: row.attempt,
		firstSeenAt: isoTime(row.firstSeenMs) ?? null,
		leaseUntil: isoTime(row.leaseUntilMs) ?? null,
		completedAt: isoTime(row.completedAtMs) ?? null,
		hasFingerprint: row.hasFingerprint,
		hasResponse: row.hasResponse,
		hasDelivery: row.hasDelivery ?? false,
		holder: row.holder ?? null,
		steps: row.steps ?? [],
	};
	if (row.status === 'in_progress' && row.leaseUntilMs !== undefined) {
		json.leaseRunning = row.leaseUntilMs > row.nowMs;
		// How long ago the execution should have finished: what an alert wants to say.
		if (!json.leaseRunning)
			json.leaseEndedSecondsAgo = Math.floor((row.nowMs - row.leaseUntilMs) / 1000);
		// An answered event (sql/answeredEvents.ts) whose lease ended: the Redrive Trigger runs it.
		if (!json.leaseRunning && row.hasDelivery === true) json.waiting = 'redrive';
	}
	if (row.response !== undefined) json.response = row.response as IDataObject;
	return json;
}

/** Keys: every item's keys in one statement, each item's results paired with it. */
async function lookUpKeys(context: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = context.getInputData();
	const opened = await openOperator(context, () => ({
		includeResponse: context.getNodeParameter('includeResponse', 0, false) as boolean,
	}));
	if (opened instanceof FailedStep) return opened.outputs;
	const readKeys = itemParameterReader(context, 'keys');
	const { keys, failed } = await collectItemKeys(context, items.length, (itemIndex) =>
		keysOf(readKeys(items[itemIndex], itemIndex)),
	);
	const all = keys.flatMap((itemKeys) => itemKeys ?? []);
	const rows = await operatorStatement(
		context,
		opened,
		'look up the keys',
		async (queries) => await queries.lookUpKeys(all, opened.settings.includeResponse),
		failed,
	);
	if (rows instanceof FailedStep) return rows.outputs;
	const output: INodeExecutionData[] = [];
	let next = 0;
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		const itemError = failed.get(itemIndex);
		if (itemError !== undefined) {
			output.push(errorItem(context, itemError, itemIndex));
			continue;
		}
		const count = keys[itemIndex]?.length ?? 0;
		for (let k = 0; k < count; k++)
			output.push({ json: keyJson(rows[next++]), pairedItem: { item: itemIndex } });
	}
	return [output];
}

const LIST_ACTIONS = {
	prefix: 'list the keys',
	stuck: 'list the stuck keys',
	waitingForRedrive: 'list the keys waiting for the redrive',
	deadLetters: 'list the dead letters',
} as const;

const LIST_INDEXES = {
	prefix: 'keyPrefix',
	stuck: 'inProgress',
	waitingForRedrive: 'inProgress',
	deadLetters: 'deadLetter',
} as const;

/** Prefix, stuck keys, keys waiting for the redrive and dead letters: one question for the node, asked once, one item per key found. */
async function lookUpList(
	context: IExecuteFunctions,
	by: Exclude<LookUpBy, 'keys'>,
): Promise<INodeExecutionData[][]> {
	const opened = await openOperator(context, () => ({
		includeResponse: context.getNodeParameter('includeResponse', 0, false) as boolean,
		limit: wholeNumber(context, 'limit', 'Limit', { min: 1, max: MAX_LIST_LIMIT, fallback: 50 }),
		prefix: by === 'prefix' ? keyPrefix(context, { required: false }) : '',
		graceSeconds: by === 'stuck' ? graceSeconds(context) : 0,
		addIndexes: context.getNodeParameter('addIndexes', 0, true) as boolean,
	}));
	if (opened instanceof FailedStep) return opened.outputs;
	const { settings } = opened;
	const rows = await operatorStatement(context, opened, LIST_ACTIONS[by], async (queries) => {
		const { lease } = await queries.prepare({
			indexes: [LIST_INDEXES[by]],
			addIndexes: settings.addIndexes,
		});
		if (by === 'prefix')
			return await queries.lookUpPrefix(settings.prefix, settings.limit, settings.includeResponse);
		if (by === 'deadLetters')
			return await queries.lookUpDeadLetters(settings.limit, settings.includeResponse, {
				lease,
			});
		return await queries.lookUpStuck(
			settings.graceSeconds,
			settings.limit,
			settings.includeResponse,
			{ lease, answered: by === 'waitingForRedrive' },
		);
	});
	if (rows instanceof FailedStep) return rows.outputs;
	return [rows.map((row) => ({ json: keyJson(row), pairedItem: { item: 0 } }))];
}

export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const by = this.getNodeParameter('lookUpBy', 0, 'keys') as LookUpBy;
	return by === 'keys' ? await lookUpKeys(this) : await lookUpList(this, by);
}
