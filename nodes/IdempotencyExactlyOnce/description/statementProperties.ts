import type { INodeProperties } from 'n8n-workflow';

/** The user's SQL and its parameters, read like n8n's own Postgres node's Execute Query. */
export const statementProperties: INodeProperties[] = [
	{
		displayName:
			'The query runs in the database of the Idempotency Postgres credential, in the same transaction that completes the key: its effect and the completion commit together or not at all.',
		name: 'transactionNotice',
		type: 'notice',
		default: '',
	},
	{
		displayName: 'Query',
		name: 'query',
		type: 'string',
		default: '',
		required: true,
		noDataExpression: true,
		placeholder: 'e.g. INSERT INTO business_log (event_key, event_type) VALUES ($1, $2)',
		description:
			'The business statement, run once per item, with $1, $2, … for the Query Parameters. Its rows are the output. Several statements separated by ; are allowed only without parameters; no BEGIN, COMMIT or ROLLBACK (this step owns the transaction).',
		typeOptions: { editor: 'sqlEditor', sqlDialect: 'PostgreSQL', rows: 5 },
		hint: 'Pass values as Query Parameters, never inside the query text, so a value cannot change the SQL',
	},
	{
		displayName: 'Query Parameters',
		name: 'queryParameters',
		type: 'string',
		default: '',
		placeholder: 'e.g. {{ [$json.idempotency.key, $json.body.type] }}',
		description:
			'The values of $1, $2, …: an expression that gives an array, or a comma-separated list whose entries are text or one {{ expression }} each (as in the Postgres node)',
	},
];
