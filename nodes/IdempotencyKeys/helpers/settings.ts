import { NodeOperationError, type IExecuteFunctions, type INodeProperties } from 'n8n-workflow';

import { assertStorableKey } from '../../shared/keys/composeKey';
import { normalizeId } from '../../shared/keys/idText';
import { KeyError } from '../../shared/keys/KeyError';
import { retentionInterval, retentionUnitProperty } from '../../shared/parameters/retention';

/** Parameters and checks more than one operation uses. Values are stored in workflows: never rename them. */

export const MAX_LIST_LIMIT = 10_000;
export const MAX_COUNT_LIMIT = 10_000_000;

export const retentionProperties: INodeProperties[] = [
	{
		displayName: 'Older Than',
		name: 'retentionAmount',
		type: 'number',
		default: 30,
		typeOptions: { minValue: 0 },
		description: 'Keys whose first_seen is older than this',
	},
	retentionUnitProperty,
];

export function graceProperty(): INodeProperties {
	return {
		displayName: 'Grace (Seconds)',
		name: 'graceSeconds',
		type: 'number',
		default: 60,
		typeOptions: { minValue: 0 },
		description:
			'An in-progress key counts as stuck once its lease ended this long ago and no retry took it over. A little grace leaves time for a retry that is on its way.',
	};
}

export function countLimitProperty(): INodeProperties {
	return {
		displayName: 'Count Up To',
		name: 'countLimit',
		type: 'number',
		default: 100_000,
		typeOptions: { minValue: 1, maxValue: MAX_COUNT_LIMIT },
		description:
			'Each count stops here and then reads "at least" (listed in capped), so counting never reads more than this many index entries',
	};
}

export const keysProperty: INodeProperties = {
	displayName: 'Keys',
	name: 'keys',
	type: 'string',
	default: '',
	required: true,
	placeholder: 'evt:evt_1NqXxB2eZvKYlo2C',
	description:
		'The key as stored (with its prefix, e.g. evt:… or sha256:…, and namespace). Several: one per line, or an expression giving a list.',
};

export const keyPrefixProperty: INodeProperties = {
	displayName: 'Key Prefix',
	name: 'keyPrefix',
	type: 'string',
	default: '',
	placeholder: 'orders-workflow:',
	description:
		'Keys starting with this text. For a namespace, its name followed by ":" (Reserve writes namespace:key).',
};

export function wholeNumber(
	context: IExecuteFunctions,
	name: string,
	label: string,
	{ min, max, fallback }: { min: number; max: number; fallback: number },
): number {
	const value = Number(context.getNodeParameter(name, 0, fallback));
	if (!Number.isInteger(value) || value < min || value > max) {
		throw new NodeOperationError(
			context.getNode(),
			`${label} must be a whole number from ${min} to ${max}, not ${String(value)}`,
		);
	}
	return value;
}

export function graceSeconds(context: IExecuteFunctions): number {
	const value = Number(context.getNodeParameter('graceSeconds', 0, 60));
	if (!Number.isFinite(value) || value < 0) {
		throw new NodeOperationError(
			context.getNode(),
			`Grace must be a number of seconds, 0 or more, not ${String(value)}`,
		);
	}
	return value;
}

/** A PostgreSQL interval such as `30 days`, from the Older Than parameters. */
export function retentionOf(context: IExecuteFunctions): string {
	return retentionInterval(context, { label: 'Older Than' });
}

export function keyPrefix(context: IExecuteFunctions, { required }: { required: boolean }): string {
	const prefix = normalizeId(context.getNodeParameter('keyPrefix', 0, ''), 'key prefix') ?? '';
	if (prefix === '' && required) {
		throw new KeyError(
			'The key prefix is empty, which would select every key',
			'Give a prefix such as "orders-workflow:", or purge by age to clear the whole table.',
		);
	}
	if (prefix !== '') assertStorableKey(prefix);
	return prefix;
}

/**
 * The keys one Keys value names: a list (an expression), or text with one key per line. Numbers
 * become their text, as Reserve's do; an empty value names none.
 */
export function keysOf(value: unknown): string[] {
	const parts = Array.isArray(value)
		? value
		: typeof value === 'string'
			? value.split(/\r?\n/).map((line) => line.trim())
			: [value];
	const keys: string[] = [];
	for (const part of parts) {
		const key = normalizeId(part, 'key');
		if (key === undefined || key === '') continue;
		assertStorableKey(key);
		keys.push(key);
	}
	return keys;
}
