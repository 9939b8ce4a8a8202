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

/** What the transaction does after the query: complete the key (the default), or record a step. */
export type Finish = 'complete' | 'recordStep';

export const finishProperties: INodeProperties[] = [
	{
		displayName: 'After the Query',
		name: 'finish',
		type: 'options',
		noDataExpression: true,
		default: 'complete',
		options: [
			{
				name: 'Complete the Key',
				value: 'complete',
				description:
					'The query is the business step: the key is completed in its transaction, so a duplicate is answered as one',
			},
			{
				name: 'Record as a Step',
				value: 'recordStep',
				description:
					'The query is one step of several (Idempotency Step): its rows are recorded under the event key in its transaction, and a retry of the event skips it with those rows. The key stays in progress for the next steps and Complete Key.',
			},
		],
	},
	{
		displayName: 'Step Name',
		name: 'step',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'insert order',
		description: "The step's name under the event key, different for each step of the workflow",
		displayOptions: { show: { finish: ['recordStep'] } },
	},
];
