const { describe, test, expect } = require('@jest/globals');
const {
	clientConfig,
	poolDigest,
	tlsOptions,
} = require('../../dist/nodes/shared/transport/connectionOptions');
const {
	describeConnectionError,
} = require('../../dist/nodes/shared/errors/describeConnectionError');

const credential = { host: 'db', port: 5432, database: 'app', user: 'n8n', password: 'p' };

test('TLS modes', () => {
	expect(tlsOptions({ ...credential, ssl: 'disable' })).toBe(false);
	expect(tlsOptions({ ...credential, ssl: 'require' })).toEqual({ rejectUnauthorized: true });
	expect(tlsOptions({ ...credential, ssl: 'require', ignoreTlsErrors: true })).toEqual({
		rejectUnauthorized: false,
	});
	// Verify Full never skips verification, whatever the (hidden) toggle says.
	expect(
		tlsOptions({ ...credential, ssl: 'verify-full', ignoreTlsErrors: true, caCertificate: 'PEM' }),
	).toEqual({
		rejectUnauthorized: true,
		ca: 'PEM',
	});
});

test('connections identify themselves and time out', () => {
	// @ts-expect-error -- n8n hands a number field over as text when an expression fills it
	const config = clientConfig({ ...credential, port: '6543' });
	expect(config).toMatchObject({
		port: 6543,
		application_name: 'n8n-nodes-idempotency',
		connectionTimeoutMillis: 10000,
	});
});

test('a changed password or pool size means another pool', () => {
	expect(poolDigest(credential)).toBe(poolDigest({ ...credential }));
	expect(poolDigest(credential)).not.toBe(poolDigest({ ...credential, password: 'q' }));
	expect(poolDigest(credential)).not.toBe(poolDigest({ ...credential, maxConnections: 3 }));
	expect(poolDigest(credential)).not.toBe(poolDigest({ ...credential, host: 'db2' }));
});

test('the pool key is a 256-bit digest that holds neither the password nor the other settings', () => {
	const secret = { ...credential, password: 'Sup3r-Secret-Passw0rd' };
	const digest = poolDigest(secret);
	// Lowercase hex only: no room for the password (or any other setting) in clear.
	expect(digest).toMatch(/^[0-9a-f]{64}$/);
	for (const part of ['Sup3r', 'Secret', 'Passw0rd']) expect(digest).not.toContain(part);
	// Not a plain hash of the settings either: a leaked digest cannot be checked against guesses.
	const { createHash } = require('node:crypto');
	const guess = JSON.stringify([
		'db',
		5432,
		'app',
		'n8n',
		'Sup3r-Secret-Passw0rd',
		'disable',
		'',
		false,
		10,
	]);
	expect(digest).not.toBe(createHash('sha256').update(guess).digest('hex'));
});

describe('describeConnectionError', () => {
	const target = { host: 'db', port: 5432, database: 'app', user: 'n8n' };
	test.each([
		[{ code: '28P01' }, /refused the password for user "n8n"/],
		[
			{ code: '28000', message: 'no pg_hba.conf entry for host "1.2.3.4", no encryption' },
			/pg_hba/,
		],
		[{ code: '3D000' }, /Database "app" does not exist/],
		[{ code: 'ECONNREFUSED' }, /Nothing is listening at db:5432/],
		[{ code: 'ENOTFOUND' }, /Host "db" could not be resolved/],
		[{ message: 'timeout expired' }, /in time/],
		[{ message: 'The server does not support SSL connections' }, /does not accept TLS/],
		[
			{ code: 'DEPTH_ZERO_SELF_SIGNED_CERT', message: 'self-signed certificate' },
			/could not be verified/,
		],
		[{ code: '57P01', message: 'terminating connection due to administrator command' }, /was lost/],
		// PgBouncer 1.18's own words, all with the protocol-violation code.
		[
			{ code: '08P01', message: 'SASL authentication failed' },
			/refused the password for user "n8n"/,
		],
		[
			{ code: '08P01', message: 'password authentication failed' },
			/refused the password for user "n8n"/,
		],
		[{ code: '08P01', message: 'database "app" does not exist' }, /Database "app" does not exist/],
		[
			{ code: '08P01', message: 'no more connections allowed (max_client_conn)' },
			/pooler at db:5432 refused a new connection/,
		],
		// PgBouncer while its PostgreSQL is down or being replaced (a failover).
		[
			{
				code: '08P01',
				message: 'server login has been failing, try again later (server_login_retry)',
			},
			/^The key store behind the pooler at db:5432 is unreachable or failing over \(the pooler says: server login has been failing/,
		],
		[{ code: '08P01', message: 'server conn crashed?' }, /unreachable or failing over/],
		[{ code: '08P01', message: 'database removed' }, /unreachable or failing over/],
		[{ code: '08P01', message: 'query_wait_timeout' }, /unreachable or failing over/],
	])('%p', (error, sentence) => {
		expect(describeConnectionError(error, target).message).toMatch(sentence);
	});

	test('a TLS-only server tells the user to turn TLS on', () => {
		const problem = describeConnectionError(
			{ code: '28000', message: 'no pg_hba.conf entry, no encryption' },
			target,
		);
		expect(problem.hint).toMatch(/SSL to Require/);
	});

	test('SQL errors are not connection problems', () => {
		expect(
			describeConnectionError({ code: '42P01', message: 'relation does not exist' }, target),
		).toBeUndefined();
	});
});

test('a pool that stayed full is told apart from a server that did not answer', () => {
	const target = { host: 'db', port: 5432, database: 'app', user: 'n8n', maxConnections: 4 };
	expect(
		describeConnectionError({ message: 'timeout exceeded when trying to connect' }, target).message,
	).toBe('All 4 pooled connections to db:5432 stayed busy for 10 s');
	expect(
		describeConnectionError({ message: 'Connection terminated due to connection timeout' }, target)
			.message,
	).toMatch(/Could not reach PostgreSQL at db:5432 in time/);
});
