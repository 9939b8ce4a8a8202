import {
	NodeOperationError,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
} from 'n8n-workflow';

import * as lookUp from './lookUp.operation';
import * as purge from './purge.operation';
import * as report from './report.operation';

/**
 * The node's operations, once: each one's label, its parameters and its code. The Operation
 * parameter, the displayOptions of every parameter and the router are all made from this table
 * (the Resource/Operation layout of n8n's Postgres node), so an operation cannot be listed without
 * its code or run without its parameters. Values are stored in workflows: never rename them.
 */
const OPERATIONS = {
	lookUp: {
		name: 'Look Up',
		action: 'Look up keys',
		description: 'What the table holds for keys, a prefix, or the stuck keys',
		module: lookUp,
	},
	purge: {
		name: 'Purge',
		action: 'Purge selected keys',
		description: 'Delete keys by list, prefix or age, optionally only of one state; dry run first',
		module: purge,
	},
	report: {
		name: 'Report',
		action: 'Report on the key table',
		description: 'Counts by state, stuck keys, oldest key, recent reservations, takeovers',
		module: report,
	},
} satisfies Record<
	string,
	{
		name: string;
		action: string;
		description: string;
		module: {
			description: INodeProperties[];
			execute: (this: IExecuteFunctions) => Promise<INodeExecutionData[][]>;
		};
	}
>;

export type Operation = keyof typeof OPERATIONS;

const operationProperty: INodeProperties = {
	displayName: 'Operation',
	name: 'operation',
	type: 'options',
	noDataExpression: true,
	default: 'lookUp',
	options: Object.entries(OPERATIONS).map(([value, { name, action, description }]) => ({
		name,
		value,
		action,
		description,
	})),
};

/**
 * The node's subtitle: the operation's name (from the table above) and the table. A purge says
 * whether it is a dry run, since the same node deletes or only counts depending on one switch.
 */
export const operationSubtitle = `={{ (${JSON.stringify(
	Object.fromEntries(Object.entries(OPERATIONS).map(([value, { name }]) => [value, name])),
)})[$parameter["operation"]] + ($parameter["operation"] === "purge" && $parameter["dryRun"] !== false ? " (dry run)" : "") + " in " + $parameter["table"] }}`;

/** Each operation's parameters, shown only with it (a parameter's own conditions are kept). */
export const operationProperties: INodeProperties[] = [
	operationProperty,
	...Object.entries(OPERATIONS).flatMap(([operation, { module }]) =>
		module.description.map((property) => ({
			...property,
			displayOptions: {
				...property.displayOptions,
				show: { ...property.displayOptions?.show, operation: [operation] },
			},
		})),
	),
];

export async function route(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const operation = this.getNodeParameter('operation', 0) as Operation;
	const entry = OPERATIONS[operation];
	if (entry === undefined)
		throw new NodeOperationError(this.getNode(), `Unknown operation "${String(operation)}"`);
	return await entry.module.execute.call(this);
}
