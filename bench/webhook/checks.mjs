// Bookkeeping for the checks: every answer, every business row, every execution. A run's state is
// `run` = { config, variants, ledger }, passed to whatever records or checks.
import { createHash } from 'node:crypto';
import http from 'node:http';

import { executionCounts, savesSuccess, waitForIdle } from './idle.mjs';
import { eventBody, post } from './load.mjs';

/** Everything the checks compare with n8n's and PostgreSQL's records, for every variant in `variantNames`. */
export function createLedger(variantNames) {
	const ledger = {
		/** variant → Map(businessKey → number of requests that carried it) */
		sent: Object.fromEntries(variantNames.map((v) => [v, new Map()])),
		/** variant → Map(businessKey → number of "processed" answers) */
		processed: Object.fromEntries(variantNames.map((v) => [v, new Map()])),
		/** variant → requests sent (every one must become one successful execution) */
		requests: Object.fromEntries(variantNames.map((v) => [v, 0])),
		/** variant → 409 in-flight answers (checked), each resent after its load like a sender's retry */
		inFlight: Object.fromEntries(variantNames.map((v) => [v, 0])),
		/** raceProne variant → events whose business step ran more than once (reported, not failed) */
		doubled: {},
		/** the ids answered 409 in the load that runs now: resent once the load is over (resendInFlight) */
		resend: [],
		failures: [],
		fail(message) {
			if (ledger.failures.length < 200) ledger.failures.push(message);
			else if (ledger.failures.length === 200) ledger.failures.push('… (more failures left out)');
		},
	};
	return ledger;
}

/**
 * Whether a 200 answer is this event's: it names the key, except the webhook template's "processed",
 * which Complete Key answers with a fixed body (no expression per execution); that event's key row
 * and business row are checked after the run.
 */
function answerNames(json, key) {
	return json.status === 'processed' && json.key === undefined ? true : json.key === key;
}

/** Checks one answer against what the variant must say, and records it. */
export function record(run, variantName, id, httpAnswer) {
	const { ledger } = run;
	const variant = run.variants[variantName];
	ledger.requests[variantName] += 1;
	const key = variant.businessKey?.(id) ?? `bare:${id}`;
	const answer = variant.answer ? variant.answer(httpAnswer, key) : httpAnswer;
	ledger.sent[variantName].set(key, (ledger.sent[variantName].get(key) ?? 0) + 1);
	if (answer.status === 409 && variant.inFlight409) {
		recordInFlight(ledger, variantName, id, key, answer);
		return;
	}
	if (answer.status !== 200) {
		ledger.fail(`${variantName} ${id}: HTTP ${answer.status} ${answer.text.slice(0, 200)}`);
		return;
	}
	let json;
	try {
		json = JSON.parse(answer.text);
	} catch {
		ledger.fail(
			`${variantName} ${id}: 200 without a JSON body (${JSON.stringify(answer.text.slice(0, 100))}): no Respond node ran?`,
		);
		return;
	}
	if (variantName === 'bare') {
		if (json.status !== 'ok' || json.id !== id)
			ledger.fail(`bare ${id}: answered ${answer.text.slice(0, 200)}`);
		return;
	}
	if (
		!answerNames(json, key) ||
		!['processed', 'duplicate'].includes(json.status) ||
		(!variant.dedupe && json.status !== 'processed')
	) {
		ledger.fail(`${variantName} ${id}: answered ${answer.text.slice(0, 200)}, expected key ${key}`);
		return;
	}
	if (json.status === 'processed')
		ledger.processed[variantName].set(key, (ledger.processed[variantName].get(key) ?? 0) + 1);
}

/**
 * Lease mode: a repeat that arrives while its original still runs is answered 409 with Retry-After
 * (the template's "In Flight?" branch). That is the right answer, not a failure: the original may
 * still fail, and a sender retries a 409 (Stripe, Shopify, Slack, Standard Webhooks retry any
 * non-2xx). It counts only when it is exactly that answer (409, status in_progress, this event's key,
 * a Retry-After header of at least 1 s that matches the body). The id is then resent once the load is
 * over and n8n is idle (resendInFlight), as the sender's retry, outside the measured window: the retry
 * must be answered 200 "duplicate" (the original completed), so a lost or doubled business row, a
 * 5xx or a wrong branch still fails the run. Any other 409, and any 409 from a variant without
 * inFlight409, is a failure.
 */
function recordInFlight(ledger, variantName, id, key, answer) {
	let json;
	try {
		json = JSON.parse(answer.text);
	} catch {
		json = {};
	}
	const seconds = Number(answer.retryAfter);
	if (
		json.status !== 'in_progress' ||
		json.key !== key ||
		!Number.isInteger(seconds) ||
		seconds < 1 ||
		json.retryAfterSeconds !== seconds
	) {
		ledger.fail(
			`${variantName} ${id}: 409 ${answer.text.slice(0, 200)} (Retry-After ${answer.retryAfter}), expected in_progress for ${key} with a matching Retry-After`,
		);
		return;
	}
	ledger.inFlight[variantName] += 1;
	ledger.resend.push({ variantName, id });
}

/**
 * Resends the ids answered 409 in the last load, one after another, as a sender's retry (without
 * waiting the Retry-After: n8n is idle, every original has finished). Each must now be answered
 * 200 "duplicate"; the answers go through record() like any other (a second 409 is resent again,
 * at most 3 times). Runs after the load's CPU was read: not part of any measurement.
 */
export async function resendInFlight(stack, urls, run) {
	const { ledger } = run;
	for (let attempt = 1; ledger.resend.length && attempt <= 3; attempt++) {
		const batch = ledger.resend.splice(0);
		const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
		for (const { variantName, id } of batch) {
			const variant = run.variants[variantName];
			const key = variant.businessKey?.(id) ?? `bare:${id}`;
			const httpAnswer = await post(urls[variantName], eventBody(id, 0), agent, {
				headers: variant.headers?.(id) ?? {},
			});
			record(run, variantName, id, httpAnswer);
			const answer = variant.answer ? variant.answer(httpAnswer, key) : httpAnswer;
			let json = {};
			try {
				json = JSON.parse(answer.text);
			} catch {
				// record() reported it
			}
			if (answer.status === 200 && json.status !== 'duplicate')
				ledger.fail(
					`${variantName} ${id}: the retry of a 409 was answered ${answer.text.slice(0, 200)}, expected duplicate`,
				);
		}
		agent.destroy();
		await waitForIdle(stack, run);
	}
	for (const { variantName, id } of ledger.resend.splice(0))
		ledger.fail(`${variantName} ${id}: still 409 after 3 retries on an idle n8n`);
}

/** Smoke: a body without id, twice, to each deduplicating variant: the key is sha256 of the raw bytes. */
export async function checkBodyWithoutId(run, urls, runTag) {
	const { config, variants, ledger } = run;
	const keyedByBody = (name) => variants[name].dedupe && variants[name].keyedByBody !== false;
	for (const v of config.variants.filter(keyedByBody)) {
		const bytes = Buffer.from(JSON.stringify({ type: 'no.id', note: `${runTag} ${v}` }));
		const key = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
		const agent = new http.Agent({ keepAlive: false });
		const statuses = [];
		for (let i = 0; i < 2; i++) {
			const answer = await post(urls[v], bytes, agent);
			ledger.requests[v] += 1;
			ledger.sent[v].set(key, (ledger.sent[v].get(key) ?? 0) + 1);
			let json;
			try {
				json = JSON.parse(answer.text);
			} catch {
				json = {};
			}
			statuses.push(`${answer.status} ${json.status}`);
			if (answer.status !== 200 || !answerNames(json, key))
				ledger.fail(
					`${v} body without id: answered ${answer.status} ${answer.text.slice(0, 200)}, expected key ${key}`,
				);
			if (json.status === 'processed')
				ledger.processed[v].set(key, (ledger.processed[v].get(key) ?? 0) + 1);
		}
		if (statuses.join(',') !== '200 processed,200 duplicate')
			ledger.fail(`${v} body without id, sent twice: ${statuses.join(', ')}`);
		agent.destroy();
	}
}

/**
 * After all loads: business rows, key rows and executions against what was sent and answered.
 * Fills executionDataBytes: variant → average bytes n8n saved per execution: { data, workflowSnapshot },
 * and keyBytes: variant → what its key table holds per key: { row (the average row), onDisk (table,
 * TOAST and indexes ÷ keys) }, which is where answer first's stored delivery shows.
 */
export async function checkRecords(stack, run, executionDataBytes, keyBytes = {}) {
	const { config, variants, ledger } = run;
	const { rows } = await stack.keysDb.query(
		`SELECT event_key, count(*)::int AS n FROM business_log GROUP BY event_key`,
	);
	const business = new Map(rows.map((r) => [r.event_key, r.n]));
	const claimed = new Set();
	for (const v of config.variants) {
		const variant = variants[v];
		if (!variant.businessKey) continue;
		let problems = 0;
		for (const [key, sentCount] of ledger.sent[v]) {
			claimed.add(key);
			const expected = variant.dedupe ? 1 : sentCount;
			const got = business.get(key) ?? 0;
			if (got !== expected && variant.raceProne && got > expected) {
				ledger.doubled[v] = (ledger.doubled[v] ?? 0) + 1;
				continue;
			}
			if (got !== expected) {
				problems += 1;
				ledger.fail(
					`${v}: ${got} business rows for ${key}, expected ${expected} (${sentCount} requests)`,
				);
			}
			if (variant.dedupe) {
				const processed = ledger.processed[v].get(key) ?? 0;
				if (processed !== 1)
					ledger.fail(`${v}: ${key} was answered "processed" ${processed} times, expected once`);
			}
		}
		const expectedRows = [...ledger.sent[v]].reduce(
			(sum, [, n]) => sum + (variant.dedupe ? 1 : n),
			0,
		);
		process.stderr.write(
			`check ${v}: ${ledger.requests[v]} requests, ${ledger.sent[v].size} distinct events, ${expectedRows} business rows expected, ${problems} keys wrong` +
				`${variant.raceProne ? `, ${ledger.doubled[v] ?? 0} events processed more than once (race-prone: counted, not failed)` : ''}\n`,
		);
		if (variant.keyTable) {
			const { rows: keyRows } = await stack.keysDb.query(
				`SELECT count(*)::int AS n FROM ${variant.keyTable}`,
			);
			const { rows: sizeRows } = await stack.keysDb.query(
				`SELECT avg(pg_column_size(t.*))::int AS row,
				        (pg_total_relation_size('${variant.keyTable}') / greatest(count(*), 1))::int AS "onDisk"
				 FROM ${variant.keyTable} t`,
			);
			keyBytes[v] = sizeRows[0];
			const expectedKeys = ledger.sent[v].size + (variant.prefilledKeys ?? 0);
			if (keyRows[0].n !== expectedKeys)
				ledger.fail(`${v}: ${keyRows[0].n} rows in ${variant.keyTable}, expected ${expectedKeys}`);
		}
	}
	for (const [key, n] of business)
		if (!claimed.has(key))
			ledger.fail(`business_log has ${n} rows for ${key}, which no request carried`);

	// What n8n saved per execution: execution_data.data (flatted JSON, each node's output) and
	// beside it a snapshot of the whole workflow (every node with its parameters, defaults filled
	// in), which n8n writes with every execution, whichever nodes ran.
	const { rows: sizes } = await stack.n8nDb.query(
		`SELECT e."workflowId" AS workflow, avg(octet_length(d.data))::int AS bytes,
		        avg(octet_length(d."workflowData"::text))::int AS "workflowBytes", count(*)::int AS n
		 FROM execution_entity e JOIN execution_data d ON d."executionId" = e.id GROUP BY 1`,
	);
	for (const v of config.variants) {
		const row = sizes.find((r) => r.workflow === variants[v].workflowId);
		if (row) executionDataBytes[v] = { data: row.bytes, workflowSnapshot: row.workflowBytes };
	}

	const counts = await executionCounts(stack);
	for (const v of config.variants) {
		const mine = counts.filter((r) => r.workflow === variants[v].workflowId);
		const bad = mine.filter((r) => r.status !== 'success');
		for (const r of bad) ledger.fail(`${v}: ${r.n} executions with status ${r.status}`);
		const total = mine.reduce((sum, r) => sum + r.n, 0);
		if (savesSuccess(config) && total !== ledger.requests[v])
			ledger.fail(`${v}: n8n recorded ${total} executions for ${ledger.requests[v]} requests`);
	}
}
