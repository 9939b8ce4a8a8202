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
import { execute } from './actions/complete.operation';

export class IdempotencyComplete implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Idempotency Complete Key',
		name: 'idempotencyComplete',
		icon: { light: 'file:idempotencyComplete.svg', dark: 'file:idempotencyComplete.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle: '={{ "complete in " + $parameter["table"] }}',
		description:
			'Mark a leased idempotency key completed after the business step, so retries are answered as duplicates, and answer the webhook once it is. Fails when the lease was lost.',
		defaults: { name: 'Complete Key' },
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
			...ownedKeyProperties({ action: 'complete' }),
			...responseProperties,
			schemaProperty,
			tableProperty,
		],
	};

	methods = { credentialTest: { idempotencyPostgresConnectionTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await execute.call(this);
	}
}
