import {
	NodeConnectionTypes,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { idempotencyPostgresConnectionTest } from '../shared/credentialTests/connectionTest';
import { dropAnsweredEventsProperty } from '../shared/parameters/dropAnsweredEvents';
import { ownedKeyProperties } from '../shared/parameters/ownedKeyProperties';
import {
	createTableProperty,
	schemaProperty,
	tableProperty,
} from '../shared/parameters/properties';
import { execute } from './actions/release.operation';

export class IdempotencyRelease implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Idempotency Release Key',
		name: 'idempotencyRelease',
		icon: { light: 'file:idempotencyRelease.svg', dark: 'file:idempotencyRelease.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle: '={{ "release in " + $parameter["table"] }}',
		description:
			"Release a reserved idempotency key after a failed business step, so the provider's retry runs again",
		defaults: { name: 'Release Key' },
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
			...ownedKeyProperties({ action: 'release' }),
			dropAnsweredEventsProperty(
				"the item says released: false, reason answered_event; this execution's own answered key is reopened for the Redrive Trigger instead",
			),
			schemaProperty,
			tableProperty,
			createTableProperty,
		],
	};

	methods = { credentialTest: { idempotencyPostgresConnectionTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await execute.call(this);
	}
}
