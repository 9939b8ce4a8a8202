// One measured load: a variant's requests of one shape at one concurrency, in one round, with the
// CPU it cost; its answers recorded for the checks, its 409s resent once it is over.
import os from 'node:os';

import { record, resendInFlight } from './checks.mjs';
import { cpuSnapshot, threadCpu } from './cpu.mjs';
import { waitForIdle } from './idle.mjs';
import { loadIds, percentile, runLoad } from './load.mjs';
import { fmt } from './report.mjs';

/**
 * The duplicate shape's first copies, unmeasured: the same bytes (the same request numbers) the
 * measured load then sends again, as a sender retries a delivery it already made.
 */
async function sendFirstCopies(stack, run, { url, ids, c, seq, v }) {
	const { answers } = await runLoad(url, ids, c, seq, run.variants[v].headers);
	ids.forEach((id, i) => record(run, v, id, answers[i]));
	await waitForIdle(stack, run);
	await resendInFlight(stack, { [v]: url }, run);
}

/**
 * Sends the load (request numbers from `seq` on), waits until n8n saved its last execution, and
 * returns the sample and the load's window on the monotonic clock (for --profile). `label`: the name
 * its log line gives it (the A/B bench's names say which build).
 */
export async function measureLoad(
	stack,
	run,
	{ urls, postmasterPid, runTag, round, shape, concurrency: c, variant: v, seq, label = v },
) {
	const { config, variants, ledger } = run;
	const ids = loadIds(
		`${runTag}.${variants[v].tag}.r${round}.${shape}.c${c}`,
		shape,
		config.requests,
	);
	await variants[v].beforeLoad?.(stack);
	if (shape === 'duplicate') await sendFirstCopies(stack, run, { url: urls[v], ids, c, seq, v });
	const threadsBefore = config.threads ? threadCpu(stack.n8n.pid) : undefined;
	const cpuBefore = cpuSnapshot(stack, postmasterPid);
	const { answers, wallMs, window } = await runLoad(urls[v], ids, c, seq, variants[v].headers);
	const inFlightBefore = ledger.inFlight[v];
	ids.forEach((id, i) => record(run, v, id, answers[i]));
	await waitForIdle(stack, run);
	const cpuAfter = cpuSnapshot(stack, postmasterPid);
	const threadsAfter = config.threads ? threadCpu(stack.n8n.pid) : undefined;
	const inFlight = ledger.inFlight[v] - inFlightBefore;
	await resendInFlight(stack, urls, run);
	const latencies = answers.map((a) => a.ms);
	const sample = {
		round,
		shape,
		concurrency: c,
		variant: v,
		requests: ids.length,
		/** answered 409 in flight (lease mode; resent after the measurement) */
		inFlight,
		rps: ids.length / (wallMs / 1000),
		p50: percentile(latencies, 50),
		p99: percentile(latencies, 99),
		cpuMsPerRequest: {
			main: (cpuAfter.main - cpuBefore.main) / ids.length,
			runner: (cpuAfter.runner - cpuBefore.runner) / ids.length,
			postgres: (cpuAfter.postgres - cpuBefore.postgres) / ids.length,
			client: (cpuAfter.client - cpuBefore.client) / ids.length,
		},
		...(threadsAfter
			? {
					threadCpuMsPerRequest: perThreadGroup(
						threadsBefore,
						threadsAfter,
						cpuAfter.main - cpuBefore.main,
						ids.length,
					),
				}
			: {}),
		// CPU used on this machine by anything but this stack and this process, as a share of
		// all cores over the load: other sessions' work, which slows the load down.
		otherCpuShare:
			(cpuAfter.machine -
				cpuBefore.machine -
				['main', 'runner', 'postgres', 'client'].reduce(
					(sum, k) => sum + (cpuAfter[k] - cpuBefore[k]),
					0,
				)) /
			((cpuAfter.at - cpuBefore.at) * os.cpus().length),
	};
	process.stderr.write(
		`round ${round} ${shape.padEnd(8)} c=${String(c).padEnd(3)} ${label.padEnd(15)} ${fmt(sample.rps).padStart(6)} req/s  ` +
			`p50 ${fmt(sample.p50).padStart(6)} ms  p99 ${fmt(sample.p99).padStart(7)} ms  ` +
			`CPU/req main ${fmt(sample.cpuMsPerRequest.main)} runner ${fmt(sample.cpuMsPerRequest.runner)} pg ${fmt(sample.cpuMsPerRequest.postgres)} ms, ` +
			`others' CPU ${fmt(sample.otherCpuShare * 100, 0)}%${inFlight ? `, ${inFlight} × 409 in flight (resent)` : ''}\n`,
	);
	return {
		sample,
		window: { variant: v, shape, concurrency: c, round, requests: ids.length, window },
	};
}

/**
 * Each thread group's CPU over a load, per request (--threads), and what threads that ended during
 * the load used: the process's total counts them, /proc/<pid>/task no longer lists them.
 */
function perThreadGroup(before, after, processMs, requests) {
	const groups = Object.fromEntries(
		Object.entries(after).map(([key, ms]) => [key, (ms - (before[key] ?? 0)) / requests]),
	);
	const listed = Object.values(groups).reduce((sum, ms) => sum + ms, 0);
	return { ...groups, 'threads that ended': processMs / requests - listed };
}
