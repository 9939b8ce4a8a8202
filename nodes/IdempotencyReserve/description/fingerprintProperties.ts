import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import {
	DEFAULT_FINGERPRINT_EXPRESSION,
	DEFAULT_ON_MISMATCH,
	defaultFingerprint,
	FINGERPRINT_OPTIONS,
	RESERVE_MODES,
	type ReserveMode,
} from '../../shared/reserveRules/reserveSettings';

export type {
	FingerprintSource,
	MismatchHandling,
} from '../../shared/reserveRules/reserveSettings';

const FINGERPRINT_DESCRIPTION =
	'Recorded with each new key. A duplicate whose fingerprint differs is a key reused for another request: it is flagged (idempotency.mismatch) and never routed as new';

const FAIL_THE_ITEM = {
	name: 'Fail the Item',
	value: 'error',
	description: "An item error, which follows the node's On Error setting",
};

const MISMATCH_OPTIONS_V1 = [
	{
		name: 'Flag the Duplicate',
		value: 'flag',
		description:
			'To the false output with idempotency.mismatch = true and short prefixes of both fingerprints (answer 422)',
	},
	FAIL_THE_ITEM,
];

/** One parameter per version: version 2 can also give a mismatch its own output. */
function onMismatchProperty(options: INodePropertyOptions[]): INodeProperties {
	return {
		displayName: 'On Mismatch',
		name: 'onMismatch',
		type: 'options',
		noDataExpression: true,
		default: DEFAULT_ON_MISMATCH,
		options,
	};
}

/** What the description adds in a mode: simple mode runs on a table that may lack the column. */
const FINGERPRINT_MODE_NOTE: Record<ReserveMode, string> = {
	lease: '',
	simple:
		' Needs a fingerprint column, which the hand-built two-column table lacks (added where this user may)',
};

/**
 * One parameter, two defaults (reserveSettings.ts, defaultFingerprint): n8n gives a parameter one
 * default, so there is one copy per mode, each shown in its mode only.
 */
const fingerprintByMode: INodeProperties[] = RESERVE_MODES.map((mode) => ({
	displayName: 'Fingerprint',
	name: 'fingerprint',
	type: 'options',
	noDataExpression: true,
	default: defaultFingerprint(mode),
	options: [...FINGERPRINT_OPTIONS],
	description: `${FINGERPRINT_DESCRIPTION}${FINGERPRINT_MODE_NOTE[mode]}`,
	displayOptions: { show: { mode: [mode] } },
}));

export const fingerprintProperties: INodeProperties[] = [
	...fingerprintByMode,
	{
		displayName: 'Fingerprint Fields',
		name: 'fingerprintExpression',
		type: 'string',
		default: DEFAULT_FINGERPRINT_EXPRESSION,
		description:
			'What defines the request; its JSON (object keys sorted) is hashed. Text is hashed as it is.',
		displayOptions: { show: { fingerprint: ['expression'] } },
	},
	{
		...onMismatchProperty(MISMATCH_OPTIONS_V1),
		displayOptions: { hide: { fingerprint: ['none'] }, show: { '@version': [1] } },
	},
	{
		...onMismatchProperty([
			{
				name: 'Flag the Duplicate',
				value: 'flag',
				description:
					'To the duplicate output with idempotency.mismatch = true and short prefixes of both fingerprints',
			},
			{
				name: 'Send to Reused Key Output',
				value: 'output',
				description:
					'To an output of its own, reused key, with the same fields: answer it 422 without an IF node',
			},
			FAIL_THE_ITEM,
		]),
		displayOptions: {
			hide: { fingerprint: ['none'] },
			show: { '@version': [{ _cnd: { gte: 2 } }] },
		},
	},
];
