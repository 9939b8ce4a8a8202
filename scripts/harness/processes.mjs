// Child processes the harness starts, and how it stops exactly those: by pid (each is started as
// the leader of its own process group, so helpers it forks, like n8n's task runner, go with it),
// SIGTERM (or the given signal) first, SIGKILL after a grace period. A process 'exit' hook and
// SIGINT/SIGTERM/SIGHUP handlers stop whatever is still running when the harness itself ends early.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';

import { progress, sleep, within } from './log.mjs';

/** @type {Set<TrackedProcess>} */
const running = new Set();
/** Async clean-ups (stop n8n, drop databases, remove temp dirs), run last-in first-out. */
const cleanups = [];
let hooksInstalled = false;
let shuttingDown = false;

/**
 * @typedef {object} TrackedProcess
 * @property {string} name
 * @property {number} pid
 * @property {import('node:child_process').ChildProcess} child
 * @property {string} logFile
 * @property {Promise<{code: number|null, signal: string|null, error?: Error}>} exited
 * @property {{code: number|null, signal: string|null, error?: Error} | undefined} exitStatus
 * @property {string} stopSignal
 * @property {string | undefined} lastResortSignal
 */

function groupAlive(pid) {
	try {
		process.kill(-pid, 0);
		return true;
	} catch {
		return false;
	}
}

function signalGroup(pid, signal) {
	try {
		process.kill(-pid, signal);
		return true;
	} catch {
		return false;
	}
}

/**
 * @typedef {object} SpawnOptions
 * @property {string} name   for log lines and errors
 * @property {string} cwd
 * @property {NodeJS.ProcessEnv} env   the whole environment (nothing is inherited)
 * @property {string} logFile   stdout and stderr are appended to it
 * @property {number} [uid]   run as this account (as root: PostgreSQL refuses to run as root)
 * @property {number} [gid]
 * @property {NodeJS.Signals} [stopSignal]   what stopTracked sends first (default SIGTERM)
 * @property {NodeJS.Signals} [lastResortSignal]   sent to the group before SIGKILL
 */

/**
 * Starts a command as its own process group, stdout and stderr appended to `logFile`.
 * @param {string} command
 * @param {string[]} args
 * @param {SpawnOptions} options
 * @returns {TrackedProcess}
 */
export function spawnTracked(
	command,
	args,
	{ name, cwd, env, logFile, uid, gid, stopSignal = 'SIGTERM', lastResortSignal },
) {
	installExitHooks();
	const fd = openSync(logFile, 'a');
	let child;
	try {
		child = spawn(command, args, {
			cwd,
			env,
			detached: true,
			stdio: ['ignore', fd, fd],
			...(uid !== undefined ? { uid, gid } : {}),
		});
	} finally {
		closeSync(fd);
	}
	/** @type {TrackedProcess} */
	const tracked = {
		name,
		pid: child.pid,
		child,
		logFile,
		exitStatus: undefined,
		stopSignal,
		lastResortSignal,
		exited: undefined,
	};
	tracked.exited = new Promise((resolve) => {
		child.once('exit', (code, signal) => {
			tracked.exitStatus = { code, signal };
			resolve(tracked.exitStatus);
		});
		child.once('error', (error) => {
			tracked.exitStatus = { code: null, signal: null, error };
			resolve(tracked.exitStatus);
		});
	});
	if (child.pid === undefined) throw new Error(`Could not start ${name} (${command})`);
	running.add(tracked);
	tracked.exited.then(() => running.delete(tracked));
	return tracked;
}

async function exitedWithin(tracked, ms) {
	if (tracked.exitStatus) return true;
	return await within(
		tracked.exited.then(() => true),
		ms,
		false,
	);
}

/**
 * Stops one tracked process: its stop signal, then (after `graceMs`) SIGKILL to its group. Also
 * makes sure nothing of its group outlives it (n8n's task runner is a child of n8n).
 */
export async function stopTracked(tracked, { graceMs = 20_000 } = {}) {
	const { pid, name } = tracked;
	if (!tracked.exitStatus) {
		try {
			process.kill(pid, tracked.stopSignal);
		} catch {
			// already gone
		}
		if (!(await exitedWithin(tracked, graceMs))) {
			progress(
				`${name} (pid ${pid}) did not stop within ${graceMs} ms: ${tracked.lastResortSignal ?? 'SIGKILL'}`,
			);
			if (tracked.lastResortSignal) {
				signalGroup(pid, tracked.lastResortSignal);
				await exitedWithin(tracked, 5_000);
			}
			signalGroup(pid, 'SIGKILL');
			await exitedWithin(tracked, 5_000);
		}
	}
	// The group id stays reserved while any member lives, so this only ever reaches our processes.
	for (let attempt = 0; attempt < 20 && groupAlive(pid); attempt++) {
		signalGroup(pid, attempt < 10 ? 'SIGTERM' : 'SIGKILL');
		await sleep(250);
	}
	running.delete(tracked);
}

/**
 * Runs a command to completion (bounded), returns its exit status.
 * @param {string} command
 * @param {string[]} args
 * @param {SpawnOptions & { timeoutMs?: number }} options
 */
export async function runTracked(
	command,
	args,
	{ name, cwd, env, logFile, timeoutMs = 300_000, uid, gid },
) {
	const tracked = spawnTracked(command, args, { name, cwd, env, logFile, uid, gid });
	const finished = await exitedWithin(tracked, timeoutMs);
	if (!finished) {
		await stopTracked(tracked, { graceMs: 5_000 });
		throw new Error(`${name} did not finish within ${timeoutMs} ms (log: ${logFile})`);
	}
	return tracked.exitStatus;
}

export function tailOf(file, lines = 60) {
	try {
		const text = readFileSync(file, 'utf8');
		return text.split('\n').slice(-lines).join('\n');
	} catch {
		return '';
	}
}

/** Registers an async clean-up; returns a function that unregisters it. */
export function onCleanup(fn) {
	installExitHooks();
	cleanups.push(fn);
	return () => {
		const index = cleanups.indexOf(fn);
		if (index >= 0) cleanups.splice(index, 1);
	};
}

/** Runs every registered clean-up (last registered first), each at most `timeoutMs`. */
export async function runCleanups({ timeoutMs = 60_000 } = {}) {
	while (cleanups.length > 0) {
		const fn = cleanups.pop();
		try {
			await within(fn(), timeoutMs);
		} catch (error) {
			progress(`clean-up failed: ${error?.message ?? error}`);
		}
	}
}

/** True once a signal started the harness's shutdown. */
export function isShuttingDown() {
	return shuttingDown;
}

function killAllNow() {
	for (const tracked of running) {
		if (tracked.lastResortSignal) signalGroup(tracked.pid, tracked.lastResortSignal);
		signalGroup(tracked.pid, 'SIGKILL');
	}
}

/** Synchronous clean-ups (removing temp folders) for when the process exits before stop() ran. */
const exitCleanups = new Set();

export function onExitSync(fn) {
	installExitHooks();
	exitCleanups.add(fn);
	return () => exitCleanups.delete(fn);
}

function runExitCleanups() {
	for (const fn of exitCleanups) {
		try {
			fn();
		} catch {
			// best effort
		}
	}
	exitCleanups.clear();
}

function installExitHooks() {
	if (hooksInstalled) return;
	hooksInstalled = true;
	// Last resort: the event loop is gone, only synchronous kills are possible here.
	process.on('exit', () => {
		killAllNow();
		runExitCleanups();
	});
	let firstSignal;
	for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
		process.on(signal, () => {
			// Ctrl-C in a terminal reaches every process of the foreground group, and a test runner may
			// forward it as SIGTERM too: only the same signal again means "stop waiting, kill now".
			if (shuttingDown) {
				if (signal !== firstSignal) return;
				killAllNow();
				runExitCleanups();
				process.exit(130);
			}
			shuttingDown = true;
			firstSignal = signal;
			progress(`${signal}: stopping what the harness started (press Ctrl-C again to kill at once)`);
			runCleanups({ timeoutMs: 30_000 })
				.catch(() => undefined)
				.finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
		});
	}
}
