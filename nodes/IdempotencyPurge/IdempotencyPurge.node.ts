import {
	NodeConnectionTypes,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

import { idempotencyPostgresConnectionTest } from '../shared/credentialTests/connectionTest';
import {
	createTableProperty,
	schemaProperty,
	tableProperty,
} from '../shared/parameters/properties';
import { dropAnsweredEventsProperty } from '../shared/parameters/dropAnsweredEvents';
import { retentionUnitProperty } from '../shared/parameters/retention';
import { MAX_BATCH_SIZE } from '../shared/store/selectionPurge';
import { execute } from './actions/purge.operation';

export class IdempotencyPurge implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Idempotency Purge Keys',
		name: 'idempotencyPurge',
		icon: { light: 'file:idempotencyPurge.svg', dark: 'file:idempotencyPurge.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle:
			'={{ "older than " + $parameter["retentionAmount"] + " " + $parameter["retentionUnit"] + " from " + $parameter["table"] }}',
		description:
			'Delete idempotency keys older than a retention, in small batches. Run it from a Schedule Trigger.',
		defaults: { name: 'Purge Keys' },
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
			{
				displayName: 'Keep Keys For',
				name: 'retentionAmount',
				type: 'number',
				default: 30,
				typeOptions: { minValue: 0 },
				description:
					'Keys whose first_seen is older than this are deleted. Keep them longer than the provider can redeliver an event (Stripe retries for 3 days and allows manual resends for up to 30).',
			},
			retentionUnitProperty,
			{
				displayName: 'Only Namespace',
				name: 'namespace',
				type: 'string',
				default: '',
				description:
					'Only purge keys of this namespace (keys starting with "namespace:"). Leave empty to purge every key in the table.',
			},
			{
				displayName: 'Batch Size',
				name: 'batchSize',
				type: 'number',
				default: 1000,
				typeOptions: { minValue: 1, maxValue: MAX_BATCH_SIZE },
				description:
					'Rows deleted per statement. Small batches keep each lock short on a big table.',
			},
			dropAnsweredEventsProperty('counted in keptAnsweredEvents'),
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
