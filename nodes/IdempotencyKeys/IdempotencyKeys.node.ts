import {
	NodeConnectionTypes,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { idempotencyPostgresConnectionTest } from '../shared/credentialTests/connectionTest';
import { schemaProperty, tableProperty } from '../shared/parameters/properties';
import { operationProperties, operationSubtitle, route } from './actions/operations';

export class IdempotencyKeys implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Idempotency Keys',
		name: 'idempotencyKeys',
		icon: { light: 'file:idempotencyKeys.svg', dark: 'file:idempotencyKeys.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle: operationSubtitle,
		description:
			'See and steer what the idempotency key table holds: look up keys, report stuck keys and counts, retry or drop dead letters, purge selected keys',
		defaults: { name: 'Idempotency Keys' },
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
			...operationProperties,
			schemaProperty,
			tableProperty,
			{
				displayName: 'Add Indexes If Missing',
				name: 'addIndexes',
				type: 'boolean',
				default: true,
				description:
					'Whether to add, where the database user may, the small indexes that keep look-ups, the report and purges from reading the whole table (see docs/operations.md for their cost). Off, they run without.',
			},
		],
	};

	methods = { credentialTest: { idempotencyPostgresConnectionTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await route.call(this);
	}
}
