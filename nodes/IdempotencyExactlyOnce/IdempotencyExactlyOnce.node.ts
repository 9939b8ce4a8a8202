import {
	NodeConnectionTypes,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { idempotencyPostgresConnectionTest } from '../shared/credentialTests/connectionTest';
import { ownedKeyProperties } from '../shared/parameters/ownedKeyProperties';
import { schemaProperty, tableProperty } from '../shared/parameters/properties';
import { responseProperties } from '../shared/parameters/responseProperties';
import { execute } from './actions/exactlyOnce.operation';
import { finishProperties, statementProperties } from './description/statementProperties';

export class IdempotencyExactlyOnce implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Idempotency Exactly-Once SQL',
		name: 'idempotencyExactlyOnce',
		icon: {
			light: 'file:idempotencyExactlyOnce.svg',
			dark: 'file:idempotencyExactlyOnce.dark.svg',
		},
		group: ['transform'],
		version: 1,
		subtitle:
			'={{ ($parameter["finish"] === "recordStep" ? "SQL + step " + $parameter["step"] : "SQL + complete") + " in " + $parameter["table"] }}',
		description:
			'Run the business SQL and complete the idempotency key in one PostgreSQL transaction: the effect happens exactly once, even if n8n crashes or the lease is lost',
		defaults: { name: 'Business Step (exactly once)' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		usableAsTool: true,
		credentials: [
			{
				name: 'idempotencyPostgresApi',
				required: true,
				testedBy: 'idempotencyPostgresConnectionTest',
			},
		],
		properties: [
			...statementProperties,
			...finishProperties,
			...ownedKeyProperties({ action: 'complete' }),
			...responseProperties.map((property) => ({
				...property,
				displayOptions: {
					...property.displayOptions,
					show: { ...property.displayOptions?.show, finish: ['complete'] },
				},
			})),
			schemaProperty,
			tableProperty,
		],
	};

	methods = { credentialTest: { idempotencyPostgresConnectionTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await execute.call(this);
	}
}
