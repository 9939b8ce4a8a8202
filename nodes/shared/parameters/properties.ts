import type { INodeProperties } from 'n8n-workflow';

import { MAX_MAX_RUN_SECONDS } from '../reserveRules/reserveSettings';

export const schemaProperty: INodeProperties = {
	displayName: 'Schema',
	name: 'schema',
	type: 'string',
	default: 'public',
	required: true,
	description: 'Schema of the key table. Letters, digits and _ only.',
};

export const tableProperty: INodeProperties = {
	displayName: 'Table',
	name: 'table',
	type: 'string',
	default: 'processed_events',
	required: true,
	description:
		'Table that remembers reserved keys (columns key text primary key, first_seen timestamptz). Letters, digits and _ only.',
};

export const namespaceProperty: INodeProperties = {
	displayName: 'Namespace',
	name: 'namespace',
	type: 'string',
	default: '',
	placeholder: 'orders-workflow',
	description:
		'Prepended to every key as "namespace:". Leave empty to match keys written by the hand-built pattern; set it when two workflows consume the same events and each must process them once.',
};

export const createTableProperty: INodeProperties = {
	displayName: 'Create Table If Missing',
	name: 'createTable',
	type: 'boolean',
	default: true,
	description:
		'Whether to create the table and its first_seen index on first use. Turn off when the database user may not run CREATE.',
};

/**
 * Max Run: the ceiling on a kept lease's renewals (store/leaseKeeper.ts), for Reserve and the
 * Redrive Trigger alike; each node says what it keeps. The default is DEFAULT_MAX_RUN_SECONDS
 * (reserveRules/reserveSettings.ts), written out for n8n's lint.
 */
export const maxRunProperty: INodeProperties = {
	displayName: 'Max Run (Seconds)',
	name: 'maxRunSeconds',
	type: 'number',
	default: 3600,
	typeOptions: { minValue: 1, maxValue: MAX_MAX_RUN_SECONDS },
};
