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
} from '../shared/parameters/schemeProperties';
import { execute } from './actions/verify.operation';

/** Version 1.1: Tolerance defaults to 0, the provider's own (1 keeps 300 for saved nodes). */
const TOLERANCE_FROM_PROVIDER_SINCE = 1.1;

export class VerifyWebhookSignature implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Verify Webhook Signature',
		name: 'verifyWebhookSignature',
		icon: {
			light: 'file:verifyWebhookSignature.svg',
			dark: 'file:verifyWebhookSignature.dark.svg',
		},
		group: ['transform'],
		version: [1, 1.1],
		defaultVersion: 1.1,
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
		properties: [
			providerProperty,
			...schemeSettingProperties('provider', TOLERANCE_FROM_PROVIDER_SINCE),
			rawBodyProperty,
		],
	};

	methods = { credentialTest: { webhookSigningSecretTest } };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await execute.call(this);
	}
}
