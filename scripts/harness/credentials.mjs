// The credentials a stack imports into n8n (plain data in the import file; n8n encrypts it with
// N8N_ENCRYPTION_KEY): the package's Idempotency Postgres and Webhook Signing Secret, and n8n's own
// Postgres for the template's business step, both Postgres ones on the keys database.
import { writeFileSync } from 'node:fs';
import path from 'node:path';

import { E2E_STRIPE_SECRET } from './http.mjs';
import { runN8nCli } from './n8n.mjs';

/** n8n's own Postgres credential type's fields for a database. */
function postgresData(fields) {
	return {
		...fields,
		ssl: 'disable',
		allowUnauthorizedCerts: false,
		maxConnections: 20,
		sshTunnel: false,
	};
}

/**
 * The credentials of the planner's built-in-nodes workflow (planner/builtIn/builtIn.ts, BUILT_IN_CREDENTIALS),
 * all of n8n's own types: the key table's Postgres, the business step's, and a Crypto credential
 * whose HMAC secret is the stack's Stripe signing secret.
 */
function builtInCredentials(keys, business, line) {
	const all = [
		{
			id: 'BiKeyPgCredE2E001',
			name: 'Idempotency Postgres (built-in)',
			type: 'postgres',
			data: postgresData(keys),
		},
		{
			id: 'BizPgCredE2E00001',
			name: 'Business Postgres',
			type: 'postgres',
			data: postgresData(business),
		},
		{
			id: 'BiCryptoCredE2E01',
			name: 'Webhook Signing Secret (Crypto)',
			type: 'crypto',
			data: { hmacSecret: E2E_STRIPE_SECRET },
		},
	];
	// n8n 1.x has no Crypto credential type (its Crypto v1 takes the secret as a node parameter).
	return line === 1 ? all.filter(({ type }) => type !== 'crypto') : all;
}

/**
 * `keys`: { host, port, database, user, password } of the keys database (or the pooler before it);
 * `business`: the same for the Business Postgres credential when it is not the keys database.
 * `builtIn`: the built-in-nodes workflow's credentials instead (no package types: it is not installed).
 * `extra`: more credentials as n8n's import file holds them ({ id, name, type, data }), e.g. RabbitMQ.
 */
export async function importStackCredentials(
	ctx,
	workDir,
	keys,
	business = keys,
	{ builtIn = false, extra = [] } = {},
) {
	const credentialsFile = path.join(workDir, 'credentials.json');
	const own = builtIn
		? builtInCredentials(keys, business)
		: [
				{
					id: 'IdemPgCredE2E0001',
					name: 'Idempotency Postgres',
					type: 'idempotencyPostgresApi',
					data: { ...keys, ssl: 'disable', maxConnections: 10 },
				},
				{
					// The templates' Reserve verifies Stripe signatures with it; sendEvent signs with it.
					id: 'WhSigCredE2E00001',
					name: 'Webhook Signing Secret',
					type: 'webhookSigningSecretApi',
					data: { secret: E2E_STRIPE_SECRET, previousSecret: '' },
				},
				{
					id: 'BizPgCredE2E00001',
					name: 'Business Postgres',
					type: 'postgres',
					data: postgresData(business),
				},
			];
	const credentials = [...own, ...extra];
	writeFileSync(credentialsFile, JSON.stringify(credentials, null, 2), { mode: 0o600 });
	await runN8nCli(ctx, ['import:credentials', `--input=${credentialsFile}`], {
		label: 'import-credentials',
	});
}
