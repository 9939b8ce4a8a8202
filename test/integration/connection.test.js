// Failures on the way to PostgreSQL: a clear error, the process alive, and recovery once it is back.
// This file runs its own PostgreSQL (password auth), so it can be stopped and started.
const { test, expect, beforeAll, afterAll } = require('@jest/globals');
const {
	idempotencyPostgresConnectionTest,
} = require('../../dist/nodes/shared/credentialTests/connectionTest');
const { closeAllPools, poolFor } = require('../../dist/nodes/shared/transport/poolCache');
const { credentialFromUrl } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { freePort, startEmbeddedPostgres } = require('../support/postgres');
const { webhookItem } = require('../support/webhookItems');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');

let server;
let credentials;

beforeAll(async () => {
	server = await startEmbeddedPostgres();
	credentials = credentialFromUrl(server.url);
}, 120_000);

afterAll(async () => {
	await closeAllPools();
	await server?.stop();
});

const reserve = async (id, credential = credentials) =>
	await runWorkflow(reserveWorkflow, [webhookItem({ body: { id } })], { credentials: credential });

const connectionTest = async (credential) =>
	await idempotencyPostgresConnectionTest.call({}, { data: credential });

test('the credential test connects and runs SELECT 1', async () => {
	expect(await connectionTest(credentials)).toEqual({
		status: 'OK',
		message: 'Connection successful',
	});
});

test('wrong password: one clear sentence, in the credential test and in the node', async () => {
	const wrong = { ...credentials, password: 'wrong-password' };
	const result = await connectionTest(wrong);
	expect(result.status).toBe('Error');
	expect(result.message).toMatch(/refused the password for user "postgres"/);

	const run = await reserve('evt_wrong_password', wrong);
	expect(run.status).toBe('error');
	expect(run.error.name).toBe('NodeApiError');
	expect(run.error.message).toMatch(/refused the password/);
	// Nothing was reserved: with the right password the same event is new.
	const retry = await reserve('evt_wrong_password');
	expect(retry.output('Idempotency Reserve', 0)).toHaveLength(1);
});

test('unknown database: one clear sentence', async () => {
	const result = await connectionTest({ ...credentials, database: 'no_such_database' });
	expect(result.message).toMatch(/Database "no_such_database" does not exist/);
});

test('nothing listening: the node fails clearly and the next execution still works', async () => {
	const unreachable = { ...credentials, port: await freePort() };
	expect((await connectionTest(unreachable)).message).toMatch(/connection refused/);
	const run = await reserve('evt_unreachable', unreachable);
	expect(run.status).toBe('error');
	expect(run.error.message).toMatch(/Nothing is listening at 127\.0\.0\.1:\d+/);

	const next = await reserve('evt_after_unreachable');
	expect(next.output('Idempotency Reserve', 0)).toHaveLength(1);
});

test('TLS asked of a server without TLS: one clear sentence', async () => {
	const result = await connectionTest({ ...credentials, ssl: 'require' });
	expect(result.message).toMatch(/does not accept TLS connections/);
});

test('PostgreSQL stopped and started between two executions: the second one works', async () => {
	const before = await reserve('evt_before_restart');
	expect(before.output('Idempotency Reserve', 0)).toHaveLength(1);

	await server.stopServer();
	const during = await reserve('evt_during_outage');
	expect(during.status).toBe('error');
	expect(during.error.name).toBe('NodeApiError');
	// The idle connection the server dropped was reported to the pool's error listener, not thrown.
	expect(poolFor(credentials).lastIdleError).toBeDefined();
	await server.startServer();

	const after = await reserve('evt_after_restart');
	expect(after.status).toBe('success');
	expect(after.output('Idempotency Reserve', 0)).toHaveLength(1);
	// The delivery that failed during the outage is new when the provider retries it.
	const retried = await reserve('evt_during_outage');
	expect(retried.output('Idempotency Reserve', 0)).toHaveLength(1);
	const repeat = await reserve('evt_before_restart');
	expect(repeat.output('Idempotency Reserve', 1)).toHaveLength(1);
}, 120_000);
