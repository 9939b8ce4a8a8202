import {
	NodeConnectionTypes,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { webhookSigningSecretTest } from '../shared/credentialTests/signingSecretTest';
import {
	providerProperty,
	rawBodyProperty,
	schemeSettingProperties,
	verifySubtitle,
} from '../shared/parameters/signatureProperties';
import { execute } from './actions/verify.operation';

export class VerifyWebhookSignature implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Verify Webhook Signature',
		name: 'verifyWebhookSignature',
		icon: {
			light: 'file:verifyWebhookSignature.svg',
			dark: 'file:verifyWebhookSignature.dark.svg',
		},
		group: ['transform'],
		version: 1,
		subtitle: verifySubtitle,
		description:
			"Check a webhook's signature over the exact request bytes: signed deliveries go to valid, everything else to invalid",
		defaults: { name: 'Verify Webhook Signature' },
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main, NodeConnectionTypes.Main],
		outputNames: ['valid', 'invalid'],
		usableAsTool: true,
		credentials: [
			{ name: 'webhookSigningSecretApi', required: true, testedBy: 'webhookSigningSecretTest' },
		],
		properties: [providerProperty, ...schemeSettingProperties('provider'), rawBodyProperty],
	};

	methods = { credentialTest: { webhookSigningSecretTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await execute.call(this);
	}
}
