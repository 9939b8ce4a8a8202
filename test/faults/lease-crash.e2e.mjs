// n8n killed (kill -9) while a slow business step runs, then started again: the sender's retries get
// 409 with Retry-After while the dead execution's lease runs, and once it has ended the next retry
// takes the key over and processes the event, once. Nobody deletes a key by hand. The published
// template is the file's, with a shorter lease so the test does not wait five minutes.
//
// The business step is made slow by a trigger on business_log that sleeps for one marked event, and
// the keys database has client_connection_check_interval set, so PostgreSQL cancels the statement
// of a client that died (as a server should be set up where a dead client's half-done work must not
// commit; without it the insert would finish and the takeover would run the step a second time:
// see the README on making the business step idempotent).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { BUSINESS_STEP, startStack, waitFor } from '../../scripts/harness/index.mjs';
import { report, withLogs } from './support.mjs';

const LEASE_SECONDS = 75;
const SLOW_EVENT = { id: 'evt_crash', type: 'slow.business.step' };
const KEY = 'evt:evt_crash';

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;

before(
	async () => {
		stack = await startStack({
			label: 'lease-crash',
			templateParameters: { 'Idempotency Reserve': { leaseSeconds: LEASE_SECONDS } },
		});
		const db = stack.keysDb;
		await db.query(
			`ALTER DATABASE "${stack.keysDatabase}" SET client_connection_check_interval = '200ms'`,
		);
		await db.query(`CREATE TABLE slow_business_step (event_type text PRIMARY KEY)`);
		await db.query(`INSERT INTO slow_business_step VALUES ('${SLOW_EVENT.type}')`);
		await db.query(`CREATE FUNCTION sleep_when_slow() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF EXISTS (SELECT 1 FROM slow_business_step s WHERE s.event_type = NEW.event_type) THEN
					PERFORM pg_sleep(60);
				END IF;
				RETURN NEW;
			END $$`);
		await db.query(
			`CREATE TRIGGER sleep_when_slow BEFORE INSERT ON business_log FOR EACH ROW EXECUTE FUNCTION sleep_when_slow()`,
		);
	},
	{ timeout: 60 * 60_000 },
);

after(async () => await stack?.stop(), { timeout: 120_000 });

/** Is an INSERT into business_log running in the keys database (the slow business step)? */
async function businessInsertRunning() {
	const { rows } = await stack.keysDb.query(
		`SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND query ILIKE 'INSERT INTO business_log%' AND state = 'active'`,
		[stack.keysDatabase],
	);
	return rows.length > 0;
}

async function keyRow() {
	const { rows } = await stack.keysDb.query(
		`SELECT status, attempts, extract(epoch FROM lease_until - now())::float8 AS lease_left FROM processed_events WHERE key = $1`,
		[KEY],
	);
	return rows[0];
}

test(
	'kill -9 during a slow business step: 409 while the lease runs, then processed once, no manual step',
	{ timeout: 600_000 },
	() =>
		withLogs(stack, async () => {
			// The first delivery: reserved, then stuck in the business step. Its answer never comes.
			const first = stack.send(SLOW_EVENT, { timeoutMs: 300_000 }).catch((error) => ({ error }));
			await waitFor('the slow business step to be running', businessInsertRunning, {
				timeoutMs: 60_000,
				intervalMs: 100,
			});
			assert.equal((await keyRow()).status, 'in_progress');

			const crashedAt = Date.now();
			await stack.crashAndRestartN8n();
			const restartSeconds = (Date.now() - crashedAt) / 1000;
			/** @type {{ error?: Error, status?: number }} */
			const lostAnswer = await first;
			assert.ok(
				lostAnswer.error || lostAnswer.status >= 500,
				'the crashed execution never answered 2xx',
			);
			// The dead client's insert was cancelled: nothing of the business step committed.
			await waitFor(
				"PostgreSQL to cancel the dead execution's insert",
				async () => !(await businessInsertRunning()),
				{
					timeoutMs: 30_000,
					intervalMs: 200,
				},
			);
			assert.equal((await stack.businessRows(KEY)).length, 0);
			await stack.keysDb.query(`DELETE FROM slow_business_step`);

			// The provider retries while the lease still runs: 409, come back later.
			const leaseLeft = (await keyRow()).lease_left;
			assert.ok(
				leaseLeft > 5,
				`n8n took ${restartSeconds.toFixed(0)} s to restart; the lease (${LEASE_SECONDS} s) has ${leaseLeft} s left`,
			);
			const early = await stack.deliver(SLOW_EVENT);
			assert.equal(early.response.status, 409, early.response.text);
			assert.equal(early.response.json.status, 'in_progress');
			const retryAfter = Number(early.response.headers['retry-after']);
			assert.ok(retryAfter >= 1 && retryAfter <= LEASE_SECONDS, `Retry-After ${retryAfter}`);
			assert.equal(early.branch, 'in flight');

			// It comes back when told to: the lease has ended, the key is taken over, the event processed.
			await new Promise((resolve) => setTimeout(resolve, (retryAfter + 1) * 1000));
			const retried = await stack.deliver(SLOW_EVENT);
			assert.deepEqual(
				[retried.response.status, retried.response.json?.status],
				[200, 'processed'],
				retried.response.text,
			);
			assert.ok(retried.execution.nodesRun.includes(BUSINESS_STEP));
			const row = await keyRow();
			assert.deepEqual([row.status, row.attempts], ['completed', 2]);

			// Later retries are plain duplicates; the business step ran once in all.
			const late = await stack.deliver(SLOW_EVENT);
			assert.deepEqual([late.response.status, late.response.json?.status], [200, 'duplicate']);
			assert.equal((await stack.businessRows(KEY)).length, 1);

			report('lease crash', {
				leaseSeconds: LEASE_SECONDS,
				restartSeconds: Math.round(restartSeconds),
				answerWhileLeased: `${early.response.status} Retry-After ${retryAfter}`,
				afterLease: `${retried.response.status} ${retried.response.json?.status} (attempt ${row.attempts})`,
				businessRows: 1,
				manualSteps: 0,
			});
		}),
);
