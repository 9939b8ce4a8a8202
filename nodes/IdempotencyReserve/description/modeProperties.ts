import type { INodeProperties } from 'n8n-workflow';

import { maxRunProperty } from '../../shared/parameters/properties';

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
			'How long a reservation keeps retries away after the last sign of life of its execution. With Keep the Lease While Running on, it is renewed while the execution runs, so it only bounds how long a crashed execution holds its event; off, make it longer than the slowest run from Reserve to Complete Key.',
		displayOptions: { show: { mode: ['lease'] } },
	},
	{
		displayName: 'Keep the Lease While Running',
		name: 'keepLease',
		type: 'boolean',
		// DEFAULT_KEEP_LEASE, written out for n8n's lint
		default: true,
		description:
			'Whether to renew the lease while this execution runs, however long its steps take, so neither a retry nor the Redrive Trigger takes the key from a live execution. It stops at Complete Key, Release Key, the end of the execution and Max Run; a crashed n8n renews nothing, and its key is taken over once the lease ends. Off: the lease ends Lease seconds after Reserve.',
		displayOptions: { show: { mode: ['lease'] } },
	},
	{
		...maxRunProperty,
		description:
			"The longest an execution keeps its lease by renewing it (or the workflow's timeout, when that comes first). After it the lease ends as if the execution had died: a hung step does not hold its event forever.",
		displayOptions: { show: { mode: ['lease'], keepLease: [true] } },
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
