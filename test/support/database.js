// One fresh database per test file on the test server, so files run in parallel without sharing keys.
const { randomBytes } = require('node:crypto');
const { Client } = require('pg');

/** @typedef {(text: string, values?: unknown[]) => Promise<import('pg').QueryResult>} Query */

/**
 * The Idempotency Postgres credential's data for a postgres:// URL.
 * @param {string} url
 * @param {Partial<import('../../dist/nodes/shared/transport/connectionOptions').IdempotencyPostgresCredential>} [overrides]
 * @returns {import('../../dist/nodes/shared/transport/connectionOptions').IdempotencyPostgresCredential}
 */
function credentialFromUrl(url, overrides = {}) {
	const parsed = new URL(url);
	return {
		host: parsed.hostname,
		port: Number(parsed.port || 5432),
		database: decodeURIComponent(parsed.pathname.slice(1)) || 'postgres',
		user: decodeURIComponent(parsed.username) || process.env.USER || 'postgres',
		password: decodeURIComponent(parsed.password),
		ssl: 'disable',
		maxConnections: 10,
		...overrides,
	};
}

async function withClient(url, work) {
	const client = new Client({ connectionString: url });
	await client.connect();
	try {
		return await work(client);
	} finally {
		await client.end();
	}
}

async function createTestDatabase(serverUrl = process.env.IDEMPOTENCY_TEST_SERVER_URL) {
	if (!serverUrl)
		throw new Error(
			'IDEMPOTENCY_TEST_SERVER_URL is not set: run the tests through jest (globalSetup)',
		);
	const name = `idem_test_${randomBytes(6).toString('hex')}`;
	await withClient(serverUrl, async (admin) => await admin.query(`CREATE DATABASE ${name}`));
	const url = new URL(serverUrl);
	url.pathname = `/${name}`;
	const client = new Client({ connectionString: url.toString() });
	await client.connect();
	return {
		name,
		url: url.toString(),
		credential: (overrides) => credentialFromUrl(url.toString(), overrides),
		query: /** @type {Query} */ (async (text, values) => await client.query(text, values)),
		async drop() {
			await client.end();
			await withClient(
				serverUrl,
				async (admin) => await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
			);
		},
	};
}

/**
 * For a jest test file: a fresh database before its tests (then `setup`), and after them every pool
 * closed and the database dropped. Returns a handle usable from the tests.
 */
function useTestDatabase(setup) {
	// Required here, not at the top: the benchmarks use this file's other helpers outside Jest, where
	// @jest/globals refuses to load.
	const { beforeAll, afterAll } = require('@jest/globals');
	let db;
	beforeAll(async () => {
		db = await createTestDatabase();
		await setup?.(db);
	});
	afterAll(async () => {
		const { closeAllPools } = require('../../dist/nodes/shared/transport/poolCache');
		await closeAllPools();
		await db?.drop();
	});
	return {
		query: /** @type {Query} */ (async (text, values) => await db.query(text, values)),
		credential: (overrides) => db.credential(overrides),
		/** A connection of the test's own, for a transaction held open across steps; end() it. */
		connect: async () => {
			const client = new Client({ connectionString: db.url });
			await client.connect();
			return client;
		},
	};
}

module.exports = { createTestDatabase, credentialFromUrl, useTestDatabase, withClient };
