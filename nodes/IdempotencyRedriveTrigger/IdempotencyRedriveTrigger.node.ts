import {
	NodeConnectionTypes,
	type INodeType,
	type INodeTypeDescription,
	type ITriggerFunctions,
	type ITriggerResponse,
} from 'n8n-workflow';

import { idempotencyPostgresConnectionTest } from '../shared/credentialTests/connectionTest';
import { maxRunProperty, schemaProperty, tableProperty } from '../shared/parameters/properties';
import { CHECK_EVERY_SECONDS, startRedrive } from './actions/redrive.trigger';

export class IdempotencyRedriveTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Idempotency Redrive Trigger',
		name: 'idempotencyRedriveTrigger',
		icon: {
			light: 'file:idempotencyRedriveTrigger.svg',
			dark: 'file:idempotencyRedriveTrigger.dark.svg',
		},
		group: ['trigger'],
		version: 1,
		subtitle: '={{ "every " + $parameter["checkEverySeconds"] + " s, " + $parameter["table"] }}',
		description:
			'Runs again the events whose execution died after the sender was answered first (Reserve with Answer First), once their lease ends; gives up after a number of attempts (dead letter).',
		defaults: { name: 'Redrive Unfinished Keys' },
		inputs: [],
		outputs: [NodeConnectionTypes.Main, NodeConnectionTypes.Main],
		outputNames: ['redrive', 'dead letter'],
		credentials: [
			{
				name: 'idempotencyPostgresApi',
				required: true,
				testedBy: 'idempotencyPostgresConnectionTest',
			},
		],
		properties: [
			{
				displayName: 'Check Every',
				name: 'checkEverySeconds',
				type: 'options',
				default: 10,
				options: CHECK_EVERY_SECONDS.map((seconds) => ({
					name: `${seconds} Seconds`,
					value: seconds,
				})),
				description:
					'How often to look for keys whose lease ended unfinished. An event waits at most its lease, the backoff and this long after a crash before it runs again.',
			},
			{
				displayName: 'Lease (Seconds)',
				name: 'leaseSeconds',
				type: 'number',
				default: 60,
				typeOptions: { minValue: 1, maxValue: 86400 },
				description:
					"How long a redriven run holds its key: as Reserve's lease, longer than the slowest run to Complete Key",
			},
			{
				displayName: 'Max Attempts',
				name: 'maxAttempts',
				type: 'number',
				default: 5,
				typeOptions: { minValue: 1, maxValue: 100 },
				description:
					'Runs of one event (the first included) before it becomes a dead letter: sent to the dead letter output, kept in the key table until retried or dropped from Idempotency Keys',
			},
			{
				displayName: 'Backoff (Seconds)',
				name: 'backoffSeconds',
				type: 'number',
				default: 30,
				typeOptions: { minValue: 0, maxValue: 3600 },
				description:
					'Wait after a lease ended before the next run: this long after the first, doubled for each attempt after it, at most an hour',
			},
			{
				displayName: 'Events Per Check',
				name: 'batchSize',
				type: 'number',
				default: 10,
				typeOptions: { minValue: 1, maxValue: 1000 },
				description: 'At most this many events are started per check, each in its own execution',
			},
			{
				...maxRunProperty,
				description:
					'The lease of a redriven run is renewed until n8n says the run finished, at most this long: a hung run does not hold its event forever',
			},
			{
				displayName: 'Also Run Keys Stored Without a Workflow',
				name: 'claimUnscoped',
				type: 'boolean',
				default: false,
				description:
					"Whether to also run keys stored by an earlier version of the package, whose delivery does not say which workflow stored it. Turn it on only where one workflow answers first on this table: another workflow's event would run through this workflow's steps.",
			},
			schemaProperty,
			tableProperty,
		],
	};

	methods = { credentialTest: { idempotencyPostgresConnectionTest } };

	async trigger(this: ITriggerFunctions): Promise<ITriggerResponse> {
		return await startRedrive(this);
	}
}
