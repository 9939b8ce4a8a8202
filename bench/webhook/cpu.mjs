// CPU of n8n's main process, its task runner and PostgreSQL, from /proc (Linux; zero elsewhere).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

const CLOCK_TICKS = 100; // USER_HZ on Linux

/** The fields of a /proc stat line after the name, which may hold spaces and parentheses: fields[0] is field 3. */
function statFields(stat) {
	return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

function processTable() {
	const table = [];
	let entries = [];
	try {
		entries = readdirSync('/proc');
	} catch {
		return table;
	}
	for (const entry of entries) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			const fields = statFields(readFileSync(`/proc/${entry}/stat`, 'utf8'));
			// fields[0] is field 3 (state): ppid is field 4, pgrp 5, utime 14, stime 15
			table.push({
				pid: Number(entry),
				ppid: Number(fields[1]),
				pgrp: Number(fields[2]),
				cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS,
				// cutime + cstime: children that exited and were waited for (PostgreSQL backends that ended)
				reapedChildrenCpuMs: ((Number(fields[13]) + Number(fields[14])) * 1000) / CLOCK_TICKS,
			});
		} catch {
			// gone meanwhile
		}
	}
	return table;
}

/**
 * CPU of one process by thread, user and system apart: the main thread on its own, the others
 * summed by name (digits dropped; a thread that never named itself keeps its creator's name, so
 * "MainThread" other than the main one is such a thread, isolated-vm's for one). V8's profiler
 * samples only the main isolate's JavaScript; n8n 2.41.1 evaluates expressions in isolated-vm
 * isolates it does not see. This split says how much the profile cannot see, and on which thread a
 * difference between two variants is.
 */
export function threadCpu(pid) {
	const threads = {};
	let tids = [];
	try {
		tids = readdirSync(`/proc/${pid}/task`);
	} catch {
		return threads;
	}
	for (const tid of tids) {
		try {
			const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
			const name =
				tid === String(pid)
					? 'main thread'
					: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/[\d-]+$/, '');
			const fields = statFields(stat);
			for (const [kind, field] of [
				['user', 11],
				['system', 12],
			]) {
				const key = `${name} ${kind}`;
				threads[key] = (threads[key] ?? 0) + (Number(fields[field]) * 1000) / CLOCK_TICKS;
			}
		} catch {
			// the thread ended meanwhile
		}
	}
	return threads;
}

export function cpuSnapshot(stack, postmasterPid) {
	const table = processTable();
	const n8nPid = stack.n8n.pid;
	let main = 0;
	let runner = 0;
	let postgres = 0;
	for (const p of table) {
		if (p.pid === n8nPid) main += p.cpuMs;
		else if (p.pgrp === n8nPid) runner += p.cpuMs;
		// PostgreSQL's backends make themselves group leaders: they are found as the postmaster's children.
		else if (postmasterPid && p.pid === postmasterPid) postgres += p.cpuMs + p.reapedChildrenCpuMs;
		else if (postmasterPid && p.ppid === postmasterPid) postgres += p.cpuMs;
	}
	return {
		main,
		runner,
		postgres,
		machine: machineBusyMs(),
		client: clientCpuMs(),
		at: performance.now(),
	};
}

/** Busy CPU of the whole machine (all cores), ms, from /proc/stat. */
function machineBusyMs() {
	try {
		const fields = readFileSync('/proc/stat', 'utf8')
			.split('\n')[0]
			.trim()
			.split(/\s+/)
			.slice(1)
			.map(Number);
		// user nice system idle iowait irq softirq steal …: busy = all but idle and iowait
		const busy = fields.slice(0, 8).reduce((sum, v) => sum + v, 0) - fields[3] - fields[4];
		return (busy * 1000) / CLOCK_TICKS;
	} catch {
		return 0;
	}
}

function clientCpuMs() {
	const { user, system } = process.cpuUsage();
	return (user + system) / 1000;
}

export function postmasterPidOf(stack) {
	const file = path.join(stack.workDir, 'postgres', 'data', 'postmaster.pid');
	if (stack.server.kind !== 'embedded' || !existsSync(file)) return undefined;
	return Number(readFileSync(file, 'utf8').split('\n')[0]);
}
