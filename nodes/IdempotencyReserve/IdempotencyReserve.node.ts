import {
	NodeConnectionTypes,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { idempotencyPostgresConnectionTest } from '../shared/credentialTests/connectionTest';
import { webhookSigningSecretTest } from '../shared/credentialTests/signingSecretTest';
import {
	namespaceProperty,
	schemaProperty,
	tableProperty,
	createTableProperty,
} from '../shared/parameters/properties';
import { execute } from './actions/reserve.operation';
import { answerProperties } from './description/answerProperties';
import { fingerprintProperties } from './description/fingerprintProperties';
import { keyProperties, keySourceSubtitle } from './description/keyProperties';
import { modeProperties } from './description/modeProperties';
import { SIGNED, signatureProperties } from './description/signatureProperties';
import { reserveOutputsExpression } from '../shared/reserveRules/reserveOutputs';

export class IdempotencyReserve implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Idempotency Reserve',
		name: 'idempotencyReserve',
		icon: { light: 'file:idempotencyReserve.svg', dark: 'file:idempotencyReserve.dark.svg' },
		group: ['transform'],
		version: [1, 2, 2.1, 2.2, 2.3],
		defaultVersion: 2.3,
		subtitle: keySourceSubtitle,
		description:
			'Reserve a webhook event key once in PostgreSQL: a new event goes on to the business step, a retry is told apart as a duplicate or in flight',
		defaults: { name: 'Idempotency Reserve' },
		inputs: [NodeConnectionTypes.Main],
		outputs: reserveOutputsExpression,
		usableAsTool: true,
		credentials: [
			{
				name: 'idempotencyPostgresApi',
				required: true,
				testedBy: 'idempotencyPostgresConnectionTest',
			},
			{
				name: 'webhookSigningSecretApi',
				required: true,
				testedBy: 'webhookSigningSecretTest',
				displayOptions: { show: { signature: SIGNED } },
			},
		],
		properties: [
			...modeProperties,
			...signatureProperties,
			...keyProperties,
			...fingerprintProperties,
			...answerProperties,
			namespaceProperty,
			schemaProperty,
			tableProperty,
			createTableProperty,
		],
	};

	methods = { credentialTest: { idempotencyPostgresConnectionTest, webhookSigningSecretTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await execute.call(this);
	}
}
