import type { INodeProperties } from 'n8n-workflow';

import { DEFAULT_LEASE_SECONDS, DEFAULT_MODE, MAX_LEASE_SECONDS } from './reserveSettings';

export const modeProperties: INodeProperties[] = [
	{
		displayName: 'Mode',
		name: 'mode',
		type: 'options',
		noDataExpression: true,
		default: DEFAULT_MODE,
		options: [
			{
				name: 'Reserve With a Lease (Recommended)',
				value: 'lease',
				description:
					'Exactly once: a reservation whose execution dies (crash, killed worker) is taken over by a retry once its lease ends. Add Idempotency Complete Key after the business step.',
			},
			{
				name: 'Simple (At Most Once)',
				value: 'simple',
				description:
					'The hand-built pattern: a reserved key stays reserved. If n8n dies before the business step, retries are answered as duplicates. Works on a two-column table.',
			},
		],
	},
	{
		displayName: 'Lease (Seconds)',
		name: 'leaseSeconds',
		type: 'number',
		default: DEFAULT_LEASE_SECONDS,
		typeOptions: { minValue: 1, maxValue: MAX_LEASE_SECONDS },
		description:
			'How long an unfinished reservation keeps retries away. Make it longer than the slowest run from Reserve to Complete Key: if it ends first, a retry runs the business step again.',
		displayOptions: { show: { mode: ['lease'] } },
	},
];
