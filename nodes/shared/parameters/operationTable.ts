import {
	NodeOperationError,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeProperties,
} from 'n8n-workflow';

/** One operation of a node with several: its label, its parameters and its code. */
export interface OperationEntry {
	name: string;
	action: string;
	description: string;
	module: {
		description: INodeProperties[];
		execute: (this: IExecuteFunctions) => Promise<INodeExecutionData[][]>;
	};
}

/**
 * A node's operations, once (the layout of n8n's Postgres node): the Operation parameter, the
 * displayOptions of each operation's parameters and the router are all made from one table, so an
 * operation cannot be listed without its code or run without its parameters. The table's keys are
 * the stored values: never rename them.
 */
export function operationParameters(
	operations: Record<string, OperationEntry>,
	defaultOperation: string,
	shared: INodeProperties[] = [],
): INodeProperties[] {
	return [
		{
			displayName: 'Operation',
			name: 'operation',
			type: 'options',
			noDataExpression: true,
			default: defaultOperation,
			options: Object.entries(operations).map(([value, { name, action, description }]) => ({
				name,
				value,
				action,
				description,
			})),
		},
		...shared,
		// Each operation's parameters, shown only with it (a parameter's own conditions are kept).
		...Object.entries(operations).flatMap(([operation, { module }]) =>
			module.description.map((property) => ({
				...property,
				displayOptions: {
					...property.displayOptions,
					show: { ...property.displayOptions?.show, operation: [operation] },
				},
			})),
		),
	];
}

/** The node's execute: runs the chosen operation's code. */
export function operationRouter(operations: Record<string, OperationEntry>) {
	return async function route(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const operation = this.getNodeParameter('operation', 0) as string;
		const entry = operations[operation];
		if (entry === undefined)
			throw new NodeOperationError(this.getNode(), `Unknown operation "${String(operation)}"`);
		return await entry.module.execute.call(this);
	};
}
