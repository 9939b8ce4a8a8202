import {
	NodeConnectionTypes,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { idempotencyPostgresConnectionTest } from '../shared/n8n/connectionTest';
import {
	namespaceProperty,
	schemaProperty,
	tableProperty,
	createTableProperty,
} from '../shared/n8n/properties';
import { fingerprintProperties } from './fingerprintProperties';
import { keyProperties, keySourceSubtitle } from './keyProperties';
import { modeProperties } from './modeProperties';
import { reserveItems } from './reserveItems';

export class IdempotencyReserve implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Idempotency Reserve',
		name: 'idempotencyReserve',
		icon: { light: 'file:idempotencyReserve.svg', dark: 'file:idempotencyReserve.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle: keySourceSubtitle,
		description:
			'Reserve a webhook event key once in PostgreSQL: new events go to true, retries and duplicates to false',
		defaults: { name: 'Idempotency Reserve' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main, NodeConnectionTypes.Main],
		outputNames: ['true', 'false'],
		usableAsTool: true,
		credentials: [
			{
				name: 'idempotencyPostgresApi',
				required: true,
				testedBy: 'idempotencyPostgresConnectionTest',
			},
		],
		properties: [
			...modeProperties,
			...keyProperties,
			...fingerprintProperties,
			namespaceProperty,
			schemaProperty,
			tableProperty,
			createTableProperty,
		],
	};

	methods = { credentialTest: { idempotencyPostgresConnectionTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await reserveItems.call(this);
	}
}
