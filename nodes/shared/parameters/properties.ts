import type { INodeProperties } from 'n8n-workflow';

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
