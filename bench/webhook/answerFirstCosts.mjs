// --answer-first-costs (issue 60, item 6): in the same run as the interleaved rounds, what answering
// first costs beside the execution itself.
//   1. The cost ratios per event, stack CPU per request (n8n main + task runner + PostgreSQL), round
//      by round: answerFirst against the webhook template (package), against its floor
//      (floorAnswerFirst: the same fixed 200 then the same business step, nothing else) and against
//      itself with Keep the Lease While Running off (answerFirstNoKeeper: what keeping a lease costs
//      an execution shorter than a third of its lease, which sends no renewal).
//   2. An idle Redrive Trigger's statements per minute: once the load is over, every statement the
//      keys database ran for IDLE seconds, counted by pg_stat_statements (the embedded server is
//      started with it preloaded), divided by the Redrive Triggers published (one per answer-first
//      variant, all on this database; nothing else runs there when idle). Not by table: PostgreSQL
//      18 groups statements by the relation's alias, and every trigger's claim says `t`.
//   3. One lease renewal's CPU: the keeper's own statement (renewLeasesSql from the build) for 1, 10
//      and 100 kept keys, sent RENEWALS times through node-postgres on one connection as the keeper
//      sends it; this process's CPU (the client's side) and the backend's (/proc) per statement,
//      set against one answer-first execution's CPU, and per minute at the template's lease.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

import { sleep } from '../../scripts/harness/index.mjs';
import { fmt } from './report.mjs';

const require = createRequire(import.meta.url);
const { formatInterval, median, medianInterval } = require('../support.js');

/** The answer-first variants' key tables (variants.mjs), each with its own Redrive Trigger. */
const TRIGGER_TABLES = {
	answerFirst: 'processed_events_af',
	answerFirstNoKeeper: 'processed_events_afnk',
	answerLast: 'processed_events_al',
	answerFirstLean: 'processed_events_afln',
};
/** The template's lease (workflows/answer-first.json): the keeper renews every third of it. */
const TEMPLATE_LEASE_SECONDS = 60;
const COST_PAIRS = [
	['answerFirst', 'package', 1.1],
	['answerFirst', 'floorAnswerFirst', undefined],
	['answerFirst', 'answerFirstNoKeeper', 1.01],
	// A lever (variants.mjs answerFirstTemplate): what the template would cost without its notes.
	['answerFirstLean', 'package', 1.1],
];

const n8nCpu = (sample) => sample.cpuMsPerRequest.main + sample.cpuMsPerRequest.runner;
const stackCpu = (sample) => n8nCpu(sample) + sample.cpuMsPerRequest.postgres;

/** CPU ms (user + system) of one process, from /proc. */
function processCpuMs(pid) {
	const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
	const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
	return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/**
 * 1. Per concurrency: `of`'s CPU per request ÷ `against`'s, per round, median and interval; of the
 * whole stack (n8n + PostgreSQL: the cost per event the target is about) and of n8n alone (what the
 * other rows of BENCHMARKS.md compare).
 */
export function costRatios(config, samples) {
	const rows = [];
	for (const c of config.concurrency) {
		for (const [of, against, target] of COST_PAIRS) {
			if (!config.variants.includes(of) || !config.variants.includes(against)) continue;
			const perRound = [];
			const n8nPerRound = [];
			for (const shape of config.shapes)
				for (let round = 1; round <= config.rounds; round++) {
					const pick = (v) =>
						samples.find(
							(s) =>
								s.shape === shape && s.concurrency === c && s.variant === v && s.round === round,
						);
					const [mine, other] = [pick(of), pick(against)];
					if (mine && other) {
						perRound.push(stackCpu(mine) / stackCpu(other));
						n8nPerRound.push(n8nCpu(mine) / n8nCpu(other));
					}
				}
			if (!perRound.length) continue;
			const interval = medianInterval(perRound);
			rows.push({
				concurrency: c,
				ratio: `${of}/${against}`,
				median: median(perRound),
				interval,
				perRound,
				n8nMedian: median(n8nPerRound),
				n8nInterval: medianInterval(n8nPerRound),
				target,
				met: target === undefined ? undefined : interval.high <= target,
			});
		}
	}
	return rows;
}

/** 2. Statements the keys database ran in `seconds` with no load (pg_stat_statements), per trigger. */
async function idleStatements(stack, seconds, triggers) {
	const { rows: preload } = await stack.keysDb.query(`SHOW shared_preload_libraries`);
	if (!String(preload[0].shared_preload_libraries).includes('pg_stat_statements'))
		return { measured: false, why: 'pg_stat_statements is not loaded (a DATABASE_URL server?)' };
	await stack.keysDb.query(`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`);
	await stack.keysDb.query(`SELECT pg_stat_statements_reset()`);
	const startedAt = Date.now();
	await sleep(seconds * 1000);
	const minutes = (Date.now() - startedAt) / 60_000;
	const { rows } = await stack.keysDb.query(
		`SELECT s.query, s.calls::int AS calls, s.total_exec_time AS ms
		 FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
		 WHERE d.datname = current_database() AND s.query NOT ILIKE '%pg_stat_statements%'
		 ORDER BY s.calls DESC`,
	);
	const calls = rows.reduce((sum, row) => sum + row.calls, 0);
	const serverMs = rows.reduce((sum, row) => sum + row.ms, 0);
	return {
		measured: true,
		seconds: (Date.now() - startedAt) / 1000,
		triggers,
		statementsPerMinute: calls / minutes,
		perTriggerPerMinute: calls / minutes / triggers,
		serverMsPerTriggerPerMinute: serverMs / minutes / triggers,
		statementsSeen: rows.map((row) => ({
			calls: row.calls,
			query: row.query.replace(/\s+/g, ' ').slice(0, 70),
		})),
	};
}

/** 3. CPU per renewal statement for `keyCount` kept keys, `renewals` times on one connection. */
async function renewalCost(client, backendPid, sql, table, keyCount, renewals) {
	const keys = Array.from({ length: keyCount }, (_, i) => `keeper-bench:${keyCount}:${i}`);
	const tokens = keys.map((_, i) => `token-${i}`);
	await client.query(
		`INSERT INTO ${table} (key, status, owner_token, lease_until)
		 SELECT k, 'in_progress', t, now() + interval '1 hour' FROM unnest($1::text[], $2::text[]) AS u(k, t)`,
		[keys, tokens],
	);
	const values = [keys, tokens, keys.map(() => TEMPLATE_LEASE_SECONDS)];
	const renew = async () => {
		const { rows } = await client.query({ text: sql, values, rowMode: 'array' });
		if (rows.some(([, state]) => state !== 'renewed'))
			throw new Error(`the renewal did not renew: ${JSON.stringify(rows.slice(0, 3))}`);
	};
	for (let i = 0; i < 20; i++) await renew(); // warm: the statement's plan, the JIT
	const client0 = process.cpuUsage();
	const server0 = processCpuMs(backendPid);
	const wall0 = performance.now();
	for (let i = 0; i < renewals; i++) await renew();
	const wallMs = performance.now() - wall0;
	const clientUsage = process.cpuUsage(client0);
	const serverMs = processCpuMs(backendPid) - server0;
	await client.query(`DELETE FROM ${table} WHERE key = ANY($1)`, [keys]);
	const clientMs = (clientUsage.user + clientUsage.system) / 1000;
	return {
		keys: keyCount,
		renewals,
		clientMsPerRenewal: clientMs / renewals,
		serverMsPerRenewal: serverMs / renewals,
		wallMsPerRenewal: wallMs / renewals,
	};
}

async function keeperCost(stack, renewals) {
	const { renewLeasesSql } = require('../../dist/nodes/shared/store/sql/leases.js');
	const { tableRef } = require('../../dist/nodes/shared/store/identifiers.js');
	const ref = tableRef('public', TRIGGER_TABLES.answerFirst);
	const client = await stack.keysDb.connect();
	try {
		const { rows } = await client.query(`SELECT pg_backend_pid() AS pid`);
		const results = [];
		for (const keyCount of [1, 10, 100])
			results.push(
				await renewalCost(
					client,
					rows[0].pid,
					renewLeasesSql(ref),
					ref.qualified,
					keyCount,
					renewals,
				),
			);
		return results;
	} finally {
		client.release();
	}
}

/** Runs 2 and 3 (the stack idle), computes 1, and returns the figures and the lines to print. */
export async function measureAnswerFirstCosts(stack, config, samples) {
	const ratios = costRatios(config, samples);
	const triggers = config.variants.filter((v) => v in TRIGGER_TABLES).length;
	const idle = await idleStatements(stack, config.idleSeconds, triggers);
	const keeper = await keeperCost(stack, config.renewals);
	const executions = samples
		.filter((s) => s.variant === 'answerFirst')
		.map((s) => ({ concurrency: s.concurrency, cpu: stackCpu(s) }));
	const executionMs = median(executions.map((e) => e.cpu));
	const renewalsPerMinute = 60 / (TEMPLATE_LEASE_SECONDS / 3);
	const out = ['\nanswer first, what it costs (--answer-first-costs):\n'];
	out.push(
		'| cost per event | conc. | stack CPU/req (n8n + PostgreSQL): median of rounds | interval of the median | per round | n8n CPU/req: median | interval | target (stack) |',
		'| --- | ---: | ---: | --- | --- | ---: | --- | --- |',
	);
	for (const r of ratios)
		out.push(
			`| ${r.ratio} | ${r.concurrency} | **${fmt(r.median, 3)}** | ${formatInterval(r.interval, 3)} | ${r.perRound.map((x) => fmt(x, 2)).join(', ')} | ${fmt(r.n8nMedian, 3)} | ${formatInterval(r.n8nInterval, 3)} | ${r.target === undefined ? '' : `≤ ${r.target}: ${r.met ? 'met' : 'not shown'}`} |`,
		);
	out.push(
		`\none answer-first execution: ${fmt(executionMs, 2)} ms of stack CPU (median of its loads)`,
	);
	out.push(
		'\n| keeper renewal | keys | client CPU ms | PostgreSQL CPU ms | wall ms | CPU as % of one execution | per minute at a 60 s lease (3 renewals), % of one execution |',
		'| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
	);
	for (const k of keeper) {
		const cpu = k.clientMsPerRenewal + k.serverMsPerRenewal;
		out.push(
			`| ${k.renewals} statements | ${k.keys} | ${fmt(k.clientMsPerRenewal, 3)} | ${fmt(k.serverMsPerRenewal, 3)} | ${fmt(k.wallMsPerRenewal, 3)} | ${fmt((100 * cpu) / executionMs, 2)} % | ${fmt((100 * cpu * renewalsPerMinute) / executionMs, 2)} % |`,
		);
	}
	if (idle.measured) {
		out.push(
			`\nidle for ${fmt(idle.seconds, 0)} s after the load, ${triggers} Redrive Trigger(s) published (Check Every 10 s): ${fmt(idle.statementsPerMinute, 1)} statements a minute on the keys database (pg_stat_statements), ${fmt(idle.perTriggerPerMinute, 1)} per trigger (${fmt(idle.serverMsPerTriggerPerMinute, 2)} ms of PostgreSQL execution a minute each): ${idle.statementsSeen.map((s) => `${s.calls} × ${s.query}…`).join(' | ')}`,
		);
	} else out.push(`\nidle statements: not measured: ${idle.why}`);
	return { ratios, idle, keeper, executionMs, out };
}
