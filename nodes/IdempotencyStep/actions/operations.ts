import {
	NodeOperationError,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
} from 'n8n-workflow';

import * as record from './record.operation';
import * as skipIfDone from './skipIfDone.operation';

/**
 * The node's two operations, once (as in the Keys node): the Operation parameter, each operation's
 * parameters and the router are made from this table. Values are stored in workflows: never rename them.
 */
const OPERATIONS = {
	skipIfDone: {
		name: 'Skip If Done',
		action: 'Skip a step this event already did',
		description:
			'Before a side effect: run it (run output), or skip it with what it produced the first time (done output)',
		module: skipIfDone,
	},
	record: {
		name: 'Record Step',
		action: 'Record what a step did',
		description:
			'After the side effect: record its output under the event key, so a retry of the event skips it',
		module: record,
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

/**
 * The outputs by operation, as n8n's `outputs` expression: Skip If Done has `run` and `done`,
 * Record Step one output. Self-contained, as n8n evaluates it alone.
 */
export const stepOutputsExpression = `={{ $parameter["operation"] === "record" ? [{ type: "main" }] : [{ type: "main", displayName: "run" }, { type: "main", displayName: "done" }] }}`;

/** "skip if done: create customer", "record: create customer". */
export const stepSubtitle = `={{ ($parameter["operation"] === "record" ? "record: " : "skip if done: ") + $parameter["step"] }}`;

export const operationProperties: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		default: 'skipIfDone',
		options: Object.entries(OPERATIONS).map(([value, { name, action, description }]) => ({
			name,
			value,
			action,
			description,
		})),
	},
	{
		displayName: 'Step Name',
		name: 'step',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'create customer',
		description:
			"The step's name under the event key: the same in its Skip If Done and its Record Step, different for each step of the workflow",
	},
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
