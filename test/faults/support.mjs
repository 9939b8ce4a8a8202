// Shared by the fault suite's files (this file is not a test: the suite runs test/faults/*.e2e.mjs).
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { sleep } from '../../scripts/harness/index.mjs';
import { runLoad, tally } from '../../scripts/harness/load.mjs';

export const REPO_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const FAULTS_DOC = path.join(REPO_DIR, 'docs', 'faults.md');

/**
 * What the templates do when Idempotency Reserve itself fails (the database, a lock, a privilege):
 * Reserve 2.2 answers 500 problem+json with a generic detail itself (Answer Problems), then fails the
 * execution with its own message (docs/errors.md#what-the-sender-is-told): nothing runs after it.
 */
export const RESERVE_FAILURE_NODES = ['Webhook', 'Idempotency Reserve'];

/** The sender's side of a Reserve failure: 500 problem+json that names nothing internal. */
export function assertInternalProblem(response, what = '') {
	assert.equal(response.status, 500, `${what}: ${response.text}`);
	assert.match(response.headers['content-type'] ?? '', /^application\/problem\+json/, what);
	assert.deepEqual(
		[response.json?.type, response.json?.status],
		['about:blank', 500],
		`${what}: ${response.text}`,
	);
}

/** Runs a check; on failure prints the tail of n8n's logs (main, workers), where the cause usually is. */
export { withStackLogs as withLogs } from '../../scripts/harness/log.mjs';

/**
 * Prints a run's numbers on stderr ([faults] lines) and, when FAULTS_REPORT names a file, appends
 * them there as one JSON line, which is where the numbers in docs/faults.md come from.
 */
export function report(title, numbers) {
	process.stderr.write(`[faults] ${title}: ${JSON.stringify(numbers)}\n`);
	if (process.env.FAULTS_REPORT) {
		appendFileSync(
			process.env.FAULTS_REPORT,
			`${JSON.stringify({ title, at: new Date().toISOString(), ...numbers })}\n`,
		);
	}
}

/**
 * The rows of the markdown table between `<!-- faults:NAME:start -->` and `<!-- faults:NAME:end -->`
 * in docs/faults.md, as arrays of trimmed cells (header and separator rows left out).
 */
function docTable(name) {
	const text = readFileSync(FAULTS_DOC, 'utf8');
	const start = text.indexOf(`<!-- faults:${name}:start -->`);
	const end = text.indexOf(`<!-- faults:${name}:end -->`);
	if (start < 0 || end < start) throw new Error(`docs/faults.md has no faults:${name} block`);
	const lines = text
		.slice(start, end)
		.split('\n')
		.filter((line) => line.trim().startsWith('|'));
	return lines.slice(2).map(splitRow);
}

function splitRow(line) {
	// Cells are separated by | not preceded by a backslash (an escaped \| stays in the cell).
	const cells = line
		.trim()
		.replace(/^\|/, '')
		.replace(/\|$/, '')
		.split(/(?<!\\)\|/);
	return cells.map((text) => text.trim().replace(/\\\|/g, '|'));
}

/** A markdown cell for an observed value: pipes escaped, newlines folded. */
export function cell(text) {
	return String(text)
		.replace(/\s*\n\s*/g, ' ')
		.replace(/\|/g, '\\|');
}

/**
 * Asserts that the observed rows (arrays of cells, first cell the row id) equal the doc's table,
 * row by row, and says which row to update when they do not.
 */
export function assertMatchesDoc(name, observedRows) {
	const documented = docTable(name);
	const byId = new Map(documented.map((row) => [row[0], row]));
	const problems = [];
	for (const row of observedRows) {
		const doc = byId.get(row[0]);
		const observed = row.map((c) => c.replace(/\\\|/g, '|'));
		if (!doc) problems.push(`row ${row[0]} is not in docs/faults.md:\n| ${row.join(' | ')} |`);
		else if (JSON.stringify(doc) !== JSON.stringify(observed)) {
			problems.push(
				`row ${row[0]} differs.\n  docs/faults.md: | ${doc.join(' | ')} |\n  observed:       | ${row.join(' | ')} |`,
			);
		}
	}
	const observedIds = new Set(observedRows.map((row) => row[0]));
	for (const row of documented)
		if (!observedIds.has(row[0]))
			problems.push(`row ${row[0]} of docs/faults.md was not observed by the suite`);
	assert.equal(
		problems.length,
		0,
		`docs/faults.md (${name}) does not match what the suite observed:\n${problems.join('\n')}`,
	);
}

/** Node names as the matrix shows them. */
function shortNode(name) {
	return (
		{
			'Idempotency Reserve': 'Reserve',
			'Business Step (insert business_log)': 'Business Step',
		}[name] ?? name
	);
}

export function nodesCell(execution) {
	if (!execution) return 'no execution recorded';
	return `${execution.nodesRun.map(shortNode).join(' → ')} (${execution.status})`;
}

/** GET /healthz of the main: n8n is up and answering. */
export async function healthz(stack) {
	try {
		const response = await fetch(`${stack.baseUrl}/healthz`, {
			signal: AbortSignal.timeout(5_000),
		});
		await response.arrayBuffer();
		return response.status;
	} catch {
		return 0;
	}
}

/** 2xx: the sender stops retrying. */
export function isOk(result) {
	return result.status >= 200 && result.status < 300;
}

/**
 * Resends like a webhook provider: every delivery whose last answer was not 2xx goes out again
 * (the same body, signed anew by the harness), no earlier than its Retry-After (409 in flight) or
 * `backoffSeconds` after that answer (5xx, no answer), until every one is answered 2xx or
 * `deadlineMs` has passed. Bounded in time and in rounds. Returns every resend's result, the
 * rounds (when and what came back), and the deliveries still not answered 2xx at the deadline.
 * @param {{ webhookUrl: string }} stack
 * @param {import('../../scripts/harness/load.mjs').DeliveryResult[]} failed
 */
export async function resendLikeProvider(
	stack,
	failed,
	{
		concurrency = 16,
		backoffSeconds = 5,
		deadlineMs = 300_000,
		maxRounds = 40,
		timeoutMs = 120_000,
	} = {},
) {
	const started = Date.now();
	const deadline = started + deadlineMs;
	const dueAt = (result) => {
		const retryAfter = Number(result.headers?.['retry-after']);
		const waitSeconds =
			result.status === 409 && Number.isFinite(retryAfter) && retryAfter >= 0
				? retryAfter
				: backoffSeconds;
		return result.sentAt + result.ms + waitSeconds * 1000;
	};
	let pending = failed.map((result) => ({ delivery: result.delivery, dueAt: dueAt(result) }));
	const results = [];
	const rounds = [];
	for (let round = 1; round <= maxRounds && pending.length > 0; round++) {
		const next = Math.min(...pending.map((p) => p.dueAt));
		if (next >= deadline) break;
		await sleep(Math.max(0, next - Date.now()));
		const due = pending.filter((p) => p.dueAt <= Date.now());
		pending = pending.filter((p) => p.dueAt > Date.now());
		const again = await runLoad(
			stack.webhookUrl,
			due.map(({ delivery }) => [{ ...delivery }]),
			{ concurrency, timeoutMs, deadlineMs: Math.max(1_000, deadline - Date.now()) },
		);
		results.push(...again.results);
		rounds.push({
			atSeconds: Math.round((Date.now() - started) / 1000),
			answers: tally(
				again.results.map((r) =>
					r.json?.status ? `${r.status} ${r.json.status}` : String(r.status),
				),
			),
		});
		for (const r of again.results)
			if (!isOk(r)) pending.push({ delivery: r.delivery, dueAt: dueAt(r) });
		for (const delivery of again.notSent) pending.push({ delivery, dueAt: Date.now() });
	}
	return {
		results,
		rounds,
		unanswered: pending.map((p) => p.delivery),
		seconds: (Date.now() - started) / 1000,
	};
}

/**
 * The slow-step table and its AFTER INSERT trigger on business_log: an event_key listed in
 * slow_business_step sleeps that many seconds, its row in the table but uncommitted meanwhile.
 * While it sleeps, its session's application_name is `slow step <event_key>` (set for the
 * transaction only), so slowStepsSleeping tells whose step sleeps when templates share a database.
 */
export async function installSlowSteps(db) {
	await db.query(`CREATE TABLE slow_business_step (event_key text PRIMARY KEY, seconds float8)`);
	await db.query(`CREATE FUNCTION sleep_when_slow() RETURNS trigger LANGUAGE plpgsql AS $$
		DECLARE pause float8;
		BEGIN
			SELECT s.seconds INTO pause FROM slow_business_step s WHERE s.event_key = NEW.event_key;
			IF pause IS NOT NULL THEN
				PERFORM set_config('application_name', 'slow step ' || NEW.event_key, true);
				PERFORM pg_sleep(pause);
			END IF;
			RETURN NEW;
		END $$`);
	await db.query(
		`CREATE TRIGGER sleep_when_slow AFTER INSERT ON business_log FOR EACH ROW EXECUTE FUNCTION sleep_when_slow()`,
	);
}

/** How many of these events' slow business steps (installSlowSteps) sleep right now on `db`. */
export async function slowStepsSleeping(db, eventKeys) {
	const { rows } = await db.query(
		`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND application_name = ANY($1)`,
		[eventKeys.map((key) => `slow step ${key}`)],
	);
	return rows[0].n;
}
