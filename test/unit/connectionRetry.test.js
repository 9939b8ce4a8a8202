// Which failures Complete Key, Release Key and the exactly-once step retry (a lost or refused
// connection) and which they never do (anything the statement itself was answered with), and the
// bound on the retries. The errors are shaped as node-postgres and PostgreSQL report them; the real
// outages are in test/integration/keyStoreOutage.test.js.
// `jest` by another name: Jest's module wrapper already declares the name.
const { afterEach, beforeEach, describe, expect, jest: jestApi, test } = require('@jest/globals');
const {
	CONNECTION_RETRY_MS,
	failedBeforeSending,
	isConnectionLoss,
	retryOnConnectionLoss,
	sessionEnded,
} = require('../../dist/nodes/shared/transport/connectionRetry');

describe('isConnectionLoss', () => {
	test.each([
		[{ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:5432' }],
		[{ code: 'ECONNRESET', message: 'read ECONNRESET' }],
		[{ code: 'EPIPE', message: 'write EPIPE' }],
		[{ code: 'ETIMEDOUT', message: 'connect ETIMEDOUT' }],
		[{ message: 'Connection terminated unexpectedly' }],
		[{ message: 'Connection terminated due to connection timeout' }],
		[{ message: 'Client has encountered a connection error and is not queryable' }],
		[{ code: '08006', severity: 'FATAL', message: 'connection failure' }],
		[
			{
				code: '08P01',
				severity: 'ERROR',
				message: 'server login has been failing, try again later (server_login_retry)',
			},
		],
		[{ code: '08P01', severity: 'FATAL', message: 'server conn crashed?' }],
		[
			{
				code: '57P01',
				severity: 'FATAL',
				message: 'terminating connection due to administrator command',
			},
		],
		[
			{
				code: '57P02',
				severity: 'FATAL',
				message: 'terminating connection because of crash of another server process',
			},
		],
		[{ code: '57P03', severity: 'FATAL', message: 'the database system is starting up' }],
	])('retried: %p', (error) => {
		expect(isConnectionLoss(error)).toBe(true);
	});

	test.each([
		[
			{
				code: '23505',
				severity: 'ERROR',
				message: 'duplicate key value violates unique constraint',
			},
		],
		[{ code: '42501', severity: 'ERROR', message: 'permission denied for table processed_events' }],
		[{ code: '55P03', severity: 'ERROR', message: 'canceling statement due to lock timeout' }],
		[
			{
				code: '25006',
				severity: 'ERROR',
				message: 'cannot execute UPDATE in a read-only transaction',
			},
		],
		[{ code: '57014', severity: 'ERROR', message: 'canceling statement due to statement timeout' }],
		[
			{
				code: '28P01',
				severity: 'FATAL',
				message: 'password authentication failed for user "n8n"',
			},
		],
		[{ code: '08P01', severity: 'ERROR', message: 'password authentication failed' }],
		[{ code: '08P01', severity: 'ERROR', message: 'database "app" does not exist' }],
		[
			{
				code: '08P01',
				severity: 'ERROR',
				message: 'no more connections allowed (max_client_conn)',
			},
		],
		[{ message: 'timeout exceeded when trying to connect' }],
		[new Error('The key "evt:1" was taken over by another execution')],
	])('not retried: %p', (error) => {
		expect(isConnectionLoss(error)).toBe(false);
	});
});

test("sessionEnded: the user's SQL answered with class 08 on a live connection (dblink) is not an outage", () => {
	expect(
		sessionEnded({ code: '08001', severity: 'ERROR', message: 'could not establish connection' }),
	).toBe(false);
	expect(sessionEnded({ message: 'Connection terminated unexpectedly' })).toBe(true);
	expect(
		sessionEnded({ code: '57P01', severity: 'FATAL', message: 'terminating connection' }),
	).toBe(true);
});

describe('retryOnConnectionLoss', () => {
	const refused = () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });

	// Jest's clock, not the wall's: on a loaded machine a real wait overruns (or a timer fires a
	// millisecond before Date.now says it should), and the attempts counted against the bound change.
	beforeEach(() => {
		jestApi.useFakeTimers();
	});
	afterEach(() => {
		jestApi.useRealTimers();
	});

	/** Runs the retry to its end on the fake clock; the outcome, and when each attempt began. */
	async function settle(attempt, ...options) {
		const started = Date.now();
		const startedAt = [];
		const outcome = retryOnConnectionLoss(
			async () => {
				startedAt.push(Date.now() - started);
				return await attempt();
			},
			...options,
		).catch((error) => error);
		await jestApi.runAllTimersAsync();
		return { result: await outcome, startedAt, elapsed: Date.now() - started };
	}

	test('the bound is a few seconds, shorter than a sender waits', () => {
		expect(CONNECTION_RETRY_MS).toBe(5_000);
	});

	test('retries a refused connection until it answers', async () => {
		let calls = 0;
		const { result, startedAt } = await settle(async () => {
			calls += 1;
			if (calls < 3) throw refused();
			return 'done';
		}, 2_000);
		expect(result).toBe('done');
		expect(calls).toBe(3);
		expect(startedAt).toEqual([0, 150, 450]);
	});

	test('gives up once the bound has passed, with the attempts and the time on the error', async () => {
		const { result: failure, ...timing } = await settle(async () => {
			throw refused();
		}, 800);
		expect(failure.code).toBe('ECONNREFUSED');
		// Waits of 150, 300, then what is left of 800 ms: four attempts, the last at the bound.
		expect(timing.startedAt).toEqual([0, 150, 450, 800]);
		expect(failure.connectionRetry).toEqual({ attempts: 4, elapsedMs: 800 });
		expect(timing.elapsed).toBe(800);
	});

	test('a statement error is thrown at once, after one attempt', async () => {
		let calls = 0;
		const lockTimeout = Object.assign(new Error('canceling statement due to lock timeout'), {
			code: '55P03',
			severity: 'ERROR',
		});
		const failure = await retryOnConnectionLoss(async () => {
			calls += 1;
			throw lockTimeout;
		}).catch((error) => error);
		expect(failure).toBe(lockTimeout);
		expect(calls).toBe(1);
		expect(failure.connectionRetry).toBeUndefined();
	});
});

test('a statement that must not run twice (Release Key without a token) retries only what never reached the server', async () => {
	expect(failedBeforeSending({ code: 'ECONNREFUSED' })).toBe(true);
	expect(failedBeforeSending({ code: '57P03', severity: 'FATAL' })).toBe(true);
	expect(failedBeforeSending({ message: 'Connection terminated due to connection timeout' })).toBe(
		true,
	);
	expect(failedBeforeSending({ message: 'Connection terminated unexpectedly' })).toBe(false);
	expect(failedBeforeSending({ code: 'ECONNRESET' })).toBe(false);
	expect(failedBeforeSending({ code: '57P01', severity: 'FATAL' })).toBe(false);

	let calls = 0;
	const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
	const failure = await retryOnConnectionLoss(
		async () => {
			calls += 1;
			throw reset;
		},
		2_000,
		true,
	).catch((error) => error);
	expect(failure).toBe(reset);
	expect(calls).toBe(1);
});
