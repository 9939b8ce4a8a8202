import { NodeOperationError, type IExecuteFunctions, type INodeProperties } from 'n8n-workflow';

/**
 * Retention as Purge Keys and the Idempotency Keys node take it: an amount and a unit, read as one
 * PostgreSQL interval. One rule for both, so "older than 30 days" means the same in each.
 * Values are stored in workflows: never rename them.
 */
const RETENTION_UNITS = ['minutes', 'hours', 'days'] as const;

export const retentionUnitProperty: INodeProperties = {
	displayName: 'Unit',
	name: 'retentionUnit',
	type: 'options',
	default: 'days',
	options: [
		{ name: 'Days', value: 'days' },
		{ name: 'Hours', value: 'hours' },
		{ name: 'Minutes', value: 'minutes' },
	],
};

/**
 * The `retentionAmount` and `retentionUnit` parameters as an interval such as `30 days`; a bad
 * value throws a NodeOperationError naming the amount's field (`label`), with `hint` if given.
 */
export function retentionInterval(
	context: IExecuteFunctions,
	{ label, hint }: { label: string; hint?: string },
): string {
	const amount = Number(context.getNodeParameter('retentionAmount', 0, 30));
	const unit = context.getNodeParameter('retentionUnit', 0, 'days') as string;
	if (!Number.isFinite(amount) || amount < 0) {
		throw new NodeOperationError(
			context.getNode(),
			`${label} must be a number of 0 or more, not ${String(amount)}`,
			hint === undefined ? {} : { description: hint },
		);
	}
	if (!(RETENTION_UNITS as readonly string[]).includes(unit))
		throw new NodeOperationError(context.getNode(), `Unknown retention unit "${unit}"`);
	return `${amount} ${unit}`;
}
