import type { INodePropertyOptions, INodeProperties } from 'n8n-workflow';

import { KEY_SOURCES } from '../../shared/keys/keySourceTable';
import {
	DEFAULT_WAIT_IN_FLIGHT_SECONDS,
	MAX_WAIT_IN_FLIGHT_SECONDS,
} from '../../shared/reserveRules/reserveSettings';

/** The Key Source list, made from the one table of sources; n8n lists options sorted by name. */
function keySourceOptions(): INodePropertyOptions[] {
	return KEY_SOURCES.map(({ name, value, description }) => ({ name, value, description })).sort(
		(a, b) => a.name.localeCompare(b.name),
	);
}

/**
 * The node's subtitle: the source's subtitle from the table ("Event ID or body hash"). The table name
 * is left out: n8n's canvas cuts subtitles at about 28 characters, and the table is in the settings.
 */
const SUBTITLES = Object.fromEntries(KEY_SOURCES.map(({ value, subtitle }) => [value, subtitle]));
export const keySourceSubtitle = `={{ ${JSON.stringify(SUBTITLES)}[$parameter["keySource"]] }}`;

export const keyProperties: INodeProperties[] = [
	{
		displayName: 'Key Source',
		name: 'keySource',
		type: 'options',
		noDataExpression: true,
		default: 'eventIdOrBodyHash',
		options: keySourceOptions(),
	},
	{
		displayName: 'Event ID',
		name: 'eventId',
		type: 'string',
		default: '={{ $json.body.id }}',
		description:
			'The ID that stays the same across retries of one event. When empty, the raw body is hashed instead.',
		displayOptions: { show: { keySource: ['eventIdOrBodyHash'] } },
	},
	{
		displayName: 'Custom Key',
		name: 'customKey',
		type: 'string',
		default: '',
		required: true,
		placeholder: '={{ $json.body.order_id }}',
		description: 'The whole key (text or number, at most 1,000 bytes)',
		displayOptions: { show: { keySource: ['custom'] } },
	},
	{
		displayName: 'Raw Body Property',
		name: 'rawBodyProperty',
		type: 'string',
		default: 'data',
		description:
			'Binary property holding the exact request bytes (Webhook node option "Raw Body"). It is hashed for the body hash, and a numeric ID is read from it digit for digit. Without it, the body is hashed as text (a text body) or as its JSON serialisation.',
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [
			{
				displayName: 'Look Up First Seen Time',
				name: 'firstSeen',
				type: 'boolean',
				default: true,
				description:
					'Whether to add firstSeenAt (when the key was first reserved) to duplicates. It costs an index lookup per duplicate: turn it off for executions with thousands of items.',
			},
			{
				displayName: 'Replay Guard',
				name: 'replayGuard',
				type: 'boolean',
				// DEFAULT_REPLAY_GUARD: n8n's lint wants the literal here (test/unit/reserveSettings.test.js holds them equal).
				default: true,
				description:
					"Whether to key on the signed content (less what the sender renews on each attempt) when the Key Source's ID header is not covered by the signature (GitHub, Shopify, Linear, Twilio): a captured delivery resent under a new ID, and the sender's own retry, are then duplicates. Turn it off only for a sender that sends identical content as different events; then anyone holding one signed delivery can replay it as new under fresh IDs.",
			},
			{
				displayName: 'Wait While In Flight (Seconds)',
				name: 'waitInFlightSeconds',
				type: 'number',
				default: DEFAULT_WAIT_IN_FLIGHT_SECONDS,
				typeOptions: { minValue: 0, maxValue: MAX_WAIT_IN_FLIGHT_SECONDS },
				description:
					'Lease mode, for queue consumers: how long to wait for a key another execution holds before answering in flight. Meanwhile it turns into a duplicate when that execution completes, or new when its lease ends. 0 answers at once (webhooks).',
				displayOptions: { show: { '/mode': ['lease'] } },
			},
		],
	},
];
