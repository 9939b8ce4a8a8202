// One execution per email (issue 63), end to end: the template workflows/email-trigger.json
// (Email Trigger (IMAP) → Reserve on the email, lease mode, Answer First → Exactly-Once SQL insert
// into business_log, Redrive Trigger) in a real n8n with the packed package (2.41.1, or 1.123.81
// with N8N_LINE=1), against a throw-away dovecot this suite starts (scripts/harness/dovecot.mjs),
// mail delivered by IMAP APPEND. Published beside it:
//   - a second copy of the template on the same mailbox (two published copies, as users get after
//     an update or a duplicated workflow: #28392). With Mark as Read, the second copy takes an email
//     only when its search runs before the first copy's flag, so an email reaches one or two triggers;
//   - two copies of the same trigger straight into an insert (n8n's Postgres node, no Reserve) on a
//     mailbox of their own, with Action Nothing so each copy takes each email: the duplicates users
//     report, reproduced without the package every time.
// Runs: (a) one email to the Reserve-less pair: two executions, two rows; (b) one email, then 20
// appended at once, to the template pair: one row each; (c) kill -9 of n8n while the business
// insert of one email is held open, two more emails appended while n8n is down: each email one row,
// the held one run again by the Redrive Trigger (the trigger never reads it again: it is \Seen).
// The published template copies differ from the file in a shorter lease and redrive (the file's
// 60 s lease + 30 s backoff would take 1.5 min). One stack for the file.
// Run with: npm run test:e2e:email (node --test test/e2e/email.e2e.mjs after npm run build).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';

import {
	ensureN8n,
	progress,
	startStack,
	waitFor,
	withStackLogs,
} from '../../scripts/harness/index.mjs';
import { imapClient, imapCredential, startDovecot } from '../../scripts/harness/dovecot.mjs';
import { importableCopy } from '../../scripts/harness/templates.mjs';
import { createWorkFolder, createTeardown } from '../../scripts/harness/teardown.mjs';

const RUN = randomUUID().slice(0, 8);
const TEMPLATE = 'workflows/email-trigger.json';
const TRIGGER = 'Email Trigger (IMAP)';
const IDS = {
	a: 'IdemEmailTplA0001',
	b: 'IdemEmailTplB0001',
	bare1: 'IdemEmailBare0001',
	bare2: 'IdemEmailBare0002',
};
const BARE_MAILBOX = 'Bare';
/** The published copies' lease and redrive timing (the file's are 60 s and 30 s). */
const LEASE_SECONDS = 10;

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;
/** @type {Awaited<ReturnType<typeof startDovecot>>} */
let dovecot;
/** @type {Awaited<ReturnType<typeof imapClient>>} */
let mail;
const teardown = createTeardown('email suite');
const suiteStartedAt = Date.now();
const results = [];

/** The template as published: its mailbox, a shorter lease and redrive for the crash run. */
function templateCopy(id) {
	const workflow = importableCopy(TEMPLATE, id);
	workflow.name = `${workflow.name} (${id})`;
	for (const node of workflow.nodes) {
		if (node.name === 'Idempotency Reserve')
			node.parameters = { ...node.parameters, leaseSeconds: LEASE_SECONDS };
		if (node.type === 'n8n-nodes-idempotency.idempotencyRedriveTrigger')
			node.parameters = {
				...node.parameters,
				checkEverySeconds: 5,
				leaseSeconds: LEASE_SECONDS,
				backoffSeconds: 0,
			};
		node.id = randomUUID();
	}
	return workflow;
}

/** The same trigger (same settings) straight into n8n's Postgres node: an email workflow without Reserve. */
function bareCopy(id) {
	const source = importableCopy(TEMPLATE, id);
	const trigger = { ...source.nodes.find((node) => node.name === TRIGGER), id: randomUUID() };
	// Action Nothing: each copy takes each email, whatever the other did. With Mark as Read, the
	// second copy gets it only when its search runs before the first copy's flag (#28392's "same
	// second"), a race this suite would reproduce only some of the time.
	trigger.parameters = {
		...trigger.parameters,
		mailbox: BARE_MAILBOX,
		postProcessAction: 'nothing',
	};
	const insert = {
		parameters: {
			operation: 'executeQuery',
			query: 'INSERT INTO business_log (event_key, event_type) VALUES ($1, $2)',
			options: {
				queryReplacement: "={{ [$json.metadata['message-id'], 'bare:' + $json.subject] }}",
			},
		},
		id: randomUUID(),
		name: 'Insert business_log',
		type: 'n8n-nodes-base.postgres',
		typeVersion: 2.6,
		position: [240, 300],
		credentials: { postgres: { name: 'Business Postgres' } },
	};
	return {
		...source,
		name: `Email workflow without Reserve (${id})`,
		nodes: [trigger, insert],
		connections: { [TRIGGER]: { main: [[{ node: insert.name, type: 'main', index: 0 }]] } },
	};
}

/** An email as a mail server stores it: CRLF lines, a Message-ID of its own. */
function email({ subject, messageId = `<${randomUUID()}@e2e.Example.COM>`, body = 'Hello' }) {
	return [
		'From: Customer <customer@example.com>',
		'To: support@example.com',
		`Subject: ${subject}`,
		`Date: ${new Date().toUTCString()}`,
		`Message-ID: ${messageId}`,
		'MIME-Version: 1.0',
		'Content-Type: text/plain; charset=utf-8',
		'',
		body,
		'',
	].join('\r\n');
}

before(
	async () => {
		await ensureN8n();
		const { workDir } = createWorkFolder('idem-email-', teardown);
		dovecot = await startDovecot({ dir: workDir });
		teardown.push(() => dovecot.stop());
		mail = await imapClient(dovecot);
		teardown.push(() => mail.close());
		await mail.createMailbox(BARE_MAILBOX);
		stack = await startStack({
			label: 'email',
			extraCredentials: [imapCredential(dovecot, 'ImapCredE2E000001', 'IMAP')],
			extraWorkflows: [
				{ workflow: templateCopy(IDS.a) },
				{ workflow: templateCopy(IDS.b) },
				{ workflow: bareCopy(IDS.bare1) },
				{ workflow: bareCopy(IDS.bare2) },
			],
		});
		// Each trigger logs in once its workflow is active: four IMAP sessions on the server.
		await waitFor(
			'four Email Trigger (IMAP) sessions logged in to dovecot',
			async () =>
				(dovecot.logText().match(/imap-login: Info: Login/g) ?? []).length >= 5 ? true : undefined,
			{ timeoutMs: 60_000, intervalMs: 500 },
		);
	},
	{ timeout: 10 * 60_000 },
);

after(
	async () => {
		try {
			await stack?.stop();
			await teardown.stop();
		} finally {
			for (const line of results) process.stderr.write(`[email] ${line}\n`);
			process.stderr.write(
				`[email] suite wall time ${((Date.now() - suiteStartedAt) / 1000).toFixed(1)} s\n`,
			);
		}
	},
	{ timeout: 120_000 },
);

const withLogs = (fn) =>
	withStackLogs(stack, async () => {
		try {
			return await fn();
		} catch (error) {
			process.stderr.write(`[email] dovecot log:\n${dovecot.logText().slice(-3000)}\n`);
			throw error;
		}
	});

/** business_log rows whose event_type starts with `prefix`, counted by event_type. */
async function rowsByType(prefix) {
	const { rows } = await stack.keysDb.query(
		`SELECT event_type, count(*)::int AS n, min(event_key) AS key FROM business_log
		 WHERE event_type LIKE $1 GROUP BY event_type ORDER BY event_type`,
		[`${prefix}%`],
	);
	return rows;
}

/** Waits until `count` distinct event types with `prefix` are in business_log and the rows stopped changing. */
async function settledRows(prefix, count, { timeoutMs = 90_000, quietMs = 4000 } = {}) {
	let last = '';
	let since = Date.now();
	return await waitFor(
		() => `${count} kinds of rows "${prefix}…" in business_log, settled (last seen ${last})`,
		async () => {
			const rows = await rowsByType(prefix);
			const seen = JSON.stringify(rows);
			if (seen !== last) {
				last = seen;
				since = Date.now();
				return undefined;
			}
			return rows.length >= count && Date.now() - since >= quietMs ? rows : undefined;
		},
		{ timeoutMs, intervalMs: 500 },
	);
}

/** An execution in one line: status, the nodes it ran, its error. */
const describe = (execution) =>
	`${execution.status}: ${execution.nodesRun.join(' → ')}${execution.error ? ` (${execution.error}: ${execution.errorDescription ?? ''})` : ''}`;

/** The finished executions of a workflow since `since` whose trigger item's subject starts with `prefix`. */
async function executionsFor(workflowId, prefix, since) {
	const all = await stack.executions.list({ workflowId });
	return all.filter(
		(execution) =>
			Date.parse(execution.startedAt) >= since - 1000 &&
			typeof execution.trigger?.subject === 'string' &&
			execution.trigger.subject.startsWith(prefix),
	);
}

test('(a) without Reserve: two published copies of one Email Trigger give two executions and two rows for one email', async () => {
	await withLogs(async () => {
		const subject = `bare:a-${RUN}`;
		const started = Date.now();
		await mail.append(email({ subject: `a-${RUN}` }), BARE_MAILBOX);
		const rows = await settledRows(subject, 1);
		const executions = [
			...(await executionsFor(IDS.bare1, `a-${RUN}`, started)),
			...(await executionsFor(IDS.bare2, `a-${RUN}`, started)),
		];
		results.push(
			`(a) without Reserve, one email, two published copies: ${rows[0].n} rows, ${executions.length} executions`,
		);
		assert.equal(rows[0].n, 2, 'each copy of the trigger ran the insert for the same email');
		assert.equal(executions.length, 2);
	});
});

test('(b) the template, two published copies on one mailbox: one row per email, for one email and for 20 at once', async () => {
	await withLogs(async () => {
		const one = `b1-${RUN}`;
		const started = Date.now();
		await mail.append(email({ subject: one }));
		const [row] = await settledRows(one, 1);
		assert.equal(row.n, 1, 'one business row for the email');
		assert.match(row.key, /^imap-INBOX:email:<[0-9a-f-]+@e2e\.Example\.COM>$/);
		const onOne = [
			...(await executionsFor(IDS.a, one, started)),
			...(await executionsFor(IDS.b, one, started)),
		];
		const routes = onOne.map((execution) => execution.nodesRun.at(-1));
		results.push(
			`(b) one email, two template copies: 1 row; executions ended at ${routes.join(', ')}`,
		);
		// With Mark as Read (the template's Action), the second copy takes the email only when its
		// search runs before the first copy's flag: both copies ran it, or one did; the step ran once.
		assert.ok(onOne.length >= 1 && onOne.length <= 2, `${onOne.length} executions`);
		const stepRuns = onOne.filter((execution) =>
			execution.nodesRun.includes('Business Step (insert business_log)'),
		);
		assert.equal(stepRuns.length, 1);

		const burst = `b20-${RUN}-`;
		const burstStarted = Date.now();
		await Promise.all(
			Array.from({ length: 20 }, (_, i) =>
				mail.append(email({ subject: `${burst}${String(i).padStart(2, '0')}` })),
			),
		);
		const rows = await settledRows(burst, 20);
		const executions = [
			...(await executionsFor(IDS.a, burst, burstStarted)),
			...(await executionsFor(IDS.b, burst, burstStarted)),
		];
		results.push(
			`(b) 20 emails at once, two template copies: ${rows.length} emails with rows, ${rows.reduce((sum, r) => sum + r.n, 0)} rows, in ${executions.length} executions (a trigger emits up to 20 emails per execution)`,
		);
		assert.equal(rows.length, 20);
		assert.deepEqual(
			rows.map((r) => r.n),
			Array(20).fill(1),
			'exactly one row per email',
		);
		const failed = executions.filter((execution) => execution.status !== 'success');
		assert.deepEqual(failed.map(describe), [], 'every execution succeeded');
	});
});

test('(c) kill -9 of n8n mid business step: the email completed once by the Redrive Trigger, emails sent while n8n was down processed once', async () => {
	await withLogs(async () => {
		const db = stack.keysDb;
		const held = `c-kill-${RUN}`;
		await db.query(`CREATE TABLE e2e_hold (holding boolean NOT NULL);
			INSERT INTO e2e_hold VALUES (true);
			CREATE FUNCTION e2e_hold_insert() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF NEW.event_type LIKE 'c-kill-%' AND (SELECT holding FROM e2e_hold) THEN PERFORM pg_sleep(15); END IF;
				RETURN NEW;
			END $$;
			CREATE TRIGGER e2e_hold AFTER INSERT ON business_log FOR EACH ROW EXECUTE FUNCTION e2e_hold_insert();`);
		try {
			await mail.append(email({ subject: held }));
			await waitFor(
				'the business insert of the held email sleeping in its AFTER INSERT trigger',
				async () => {
					const { rows } = await db.query(
						`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%business_log%'`,
					);
					return rows[0].n >= 1 ? true : undefined;
				},
				{ timeoutMs: 60_000, intervalMs: 250 },
			);
			// The sleeping statement goes on sleeping (its transaction dies with n8n's connection); the
			// redriven run inserts at once.
			await db.query('UPDATE e2e_hold SET holding = false');
			const killedAt = Date.now();
			const crashed = stack.n8n;
			const restarting = stack.crashAndRestartN8n();
			await crashed.process.exited;
			const down = [`c-down-${RUN}-1`, `c-down-${RUN}-2`];
			for (const subject of down) await mail.append(email({ subject }));
			await restarting;
			const restartedAt = Date.now();
			const heldRows = await settledRows(held, 1, { timeoutMs: 120_000 });
			const downRows = await settledRows(`c-down-${RUN}-`, 2, { timeoutMs: 120_000 });
			const redriven = (await stack.executions.list({ workflowId: IDS.a }))
				.concat(await stack.executions.list({ workflowId: IDS.b }))
				.filter(
					(execution) =>
						Date.parse(execution.startedAt) >= killedAt &&
						execution.trigger?.subject === held &&
						execution.nodesRun[0] === 'Redrive Unfinished Emails' &&
						execution.nodesRun.includes('Business Step (insert business_log)'),
				);
			// The trigger itself never offered the held email again: it is \Seen and behind the mark.
			const reread = (await stack.executions.list({ workflowId: IDS.a }))
				.concat(await stack.executions.list({ workflowId: IDS.b }))
				.filter(
					(execution) =>
						Date.parse(execution.startedAt) >= killedAt &&
						execution.trigger?.subject === held &&
						execution.nodesRun[0] === TRIGGER,
				);
			results.push(
				`(c) kill -9 with the insert held: n8n back in ${((restartedAt - killedAt) / 1000).toFixed(0)} s; held email ${heldRows[0].n} row (${redriven.length} redriven run(s), ${((Date.now() - killedAt) / 1000).toFixed(0)} s after the kill); the 2 emails sent while n8n was down: ${downRows.map((r) => r.n).join(' + ')} rows`,
			);
			assert.equal(heldRows[0].n, 1, 'the held email: one row');
			assert.deepEqual(
				downRows.map((r) => r.n),
				[1, 1],
				'the emails sent while n8n was down: one row each',
			);
			assert.deepEqual(
				reread.map(describe),
				[],
				'no trigger execution of the held email after the kill',
			);
			assert.deepEqual(
				redriven.map(describe),
				[redriven.map(describe).find((line) => line.startsWith('success'))],
				'the held email was run again by the Redrive Trigger, once',
			);
			progress(`[email] ${results.at(-1)}`);
		} finally {
			await db.query(
				'DROP TRIGGER IF EXISTS e2e_hold ON business_log; DROP FUNCTION IF EXISTS e2e_hold_insert(); DROP TABLE IF EXISTS e2e_hold',
			);
		}
	});
});
