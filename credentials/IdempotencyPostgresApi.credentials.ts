import type { ICredentialType, INodeProperties } from 'n8n-workflow';

export class IdempotencyPostgresApi implements ICredentialType {
	name = 'idempotencyPostgresApi';

	displayName = 'Idempotency Postgres';

	icon = {
		light: 'file:idempotencyPostgres.svg',
		dark: 'file:idempotencyPostgres.dark.svg',
	} as const;

	documentationUrl =
		'https://github.com/n8n-nodes-idempotency/n8n-nodes-idempotency/blob/main/docs/production.md#the-credential';

	properties: INodeProperties[] = [
		{ displayName: 'Host', name: 'host', type: 'string', default: 'localhost', required: true },
		{ displayName: 'Port', name: 'port', type: 'number', default: 5432, required: true },
		{
			displayName: 'Database',
			name: 'database',
			type: 'string',
			default: 'postgres',
			required: true,
		},
		{ displayName: 'User', name: 'user', type: 'string', default: 'postgres', required: true },
		{
			displayName: 'Password',
			name: 'password',
			type: 'string',
			typeOptions: { password: true },
			default: '',
		},
		{
			displayName: 'SSL',
			name: 'ssl',
			type: 'options',
			default: 'disable',
			options: [
				{
					name: 'Disable',
					value: 'disable',
					description: 'Plain connection, for a database on the same host or private network',
				},
				{
					name: 'Require',
					value: 'require',
					description:
						'Encrypted; the certificate is checked unless Ignore Certificate Errors is on',
				},
				{
					name: 'Verify Full',
					value: 'verify-full',
					description: 'Encrypted; the certificate chain and host name are always checked',
				},
			],
		},
		{
			displayName: 'CA Certificate',
			name: 'caCertificate',
			type: 'string',
			typeOptions: { password: true, rows: 4 },
			default: '',
			description:
				'PEM certificate of the authority that signed the server certificate, when it is not a public one',
			displayOptions: { show: { ssl: ['require', 'verify-full'] } },
		},
		{
			displayName: 'Ignore Certificate Errors',
			name: 'ignoreTlsErrors',
			type: 'boolean',
			default: false,
			description:
				'Whether to connect even when the certificate cannot be verified (insecure: traffic can be intercepted)',
			displayOptions: { show: { ssl: ['require'] } },
		},
		{
			displayName: 'Max Pool Size',
			name: 'maxConnections',
			type: 'number',
			default: 10,
			typeOptions: { minValue: 1 },
			description:
				'Most connections n8n keeps open to this database for these nodes. Executions beyond it wait for a free one.',
		},
	];
}
