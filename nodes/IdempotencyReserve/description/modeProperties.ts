import type { INodeProperties } from 'n8n-workflow';

import {
	DEFAULT_LEASE_SECONDS,
	DEFAULT_MODE,
	MAX_LEASE_SECONDS,
	MODE_OPTIONS,
} from '../helpers/reserveSettings';

export const modeProperties: INodeProperties[] = [
	{
		displayName: 'Mode',
		name: 'mode',
		type: 'options',
		noDataExpression: true,
		default: DEFAULT_MODE,
		options: [...MODE_OPTIONS],
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
