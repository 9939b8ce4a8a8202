import type { INodeProperties } from 'n8n-workflow';

import {
	DEFAULT_LEASE_SECONDS,
	DEFAULT_MODE,
	MAX_LEASE_SECONDS,
	MODE_OPTIONS,
} from '../../shared/reserveRules/reserveSettings';

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
	{
		displayName: 'Answer First (Store the Delivery)',
		name: 'answerFirst',
		type: 'boolean',
		default: false,
		description:
			"Whether to store each new key's delivery (its body, query and a few headers, at most 256 KiB) with the key, so the workflow can answer the sender right after Reserve and still never lose the event: if the execution dies before Complete Key, Idempotency Redrive Trigger runs the stored delivery again once the lease ends. Costs the delivery's size per key until it is purged. A delivery over 256 KiB is not stored: its item says answerFirst: false, to be answered last.",
		displayOptions: { show: { mode: ['lease'] } },
	},
	{
		displayName: 'Also Store Headers',
		name: 'storedHeaders',
		type: 'string',
		default: '',
		placeholder: 'x-github-event, x-shopify-topic',
		description:
			"Header names, separated by commas, to store besides Content-Type, the Key Source preset's ID headers and the headers the signature covers: the headers your business steps read. Never a secret: no Authorization, Cookie, signature or token header of any sender (naming one is refused), no shared secret or token in the body (Graph's clientState, Slack's token), no credential in the query (token, key, sig…).",
		displayOptions: { show: { mode: ['lease'], answerFirst: [true] } },
	},
];
