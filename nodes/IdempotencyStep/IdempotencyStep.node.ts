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
import {
	operationProperties,
	route,
	stepOutputsExpression,
	stepSubtitle,
} from './actions/operations';

export class IdempotencyStep implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Idempotency Step',
		name: 'idempotencyStep',
		icon: { light: 'file:idempotencyStep.svg', dark: 'file:idempotencyStep.dark.svg' },
		group: ['transform'],
		version: [1, 2],
		defaultVersion: 2,
		subtitle: stepSubtitle,
		description:
			"Resume, don't redo: skip a step of a workflow that this event already did (with what it produced then), and record each step after it ran",
		defaults: { name: 'Idempotency Step' },
		inputs: [NodeConnectionTypes.Main],
		outputs: stepOutputsExpression,
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
			...ownedKeyProperties({ action: 'step' }),
			schemaProperty,
			tableProperty,
		],
	};

	methods = { credentialTest: { idempotencyPostgresConnectionTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await route.call(this);
	}
}
