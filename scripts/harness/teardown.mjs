// What every stack does first: a list of clean-up steps undone in reverse exactly once, also on a
// signal or an early exit, and a throw-away work folder that the clean-up removes.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { progress } from './log.mjs';
import { onCleanup, onExitSync } from './processes.mjs';

/**
 * Clean-up steps run last-in first-out by stop(), once; a step that fails is logged and the rest
 * still run. Registered with processes.mjs so Ctrl-C or a test runner's kill still stops n8n.
 * @param {string} [stoppedMessage] logged when stop() has run every step.
 */
export function createTeardown(stoppedMessage) {
	/** @type {Array<() => unknown>} */
	const steps = [];
	let stopped = false;
	const stop = async () => {
		if (stopped) return;
		stopped = true;
		for (const step of steps.reverse()) {
			try {
				await step();
			} catch (error) {
				progress(`stop: ${error?.message ?? error}`);
			}
		}
		if (stoppedMessage) progress(stoppedMessage);
	};
	const unregister = onCleanup(stop);
	steps.push(unregister);
	return {
		/** @param {() => unknown} step */
		push: (step) => void steps.push(step),
		stop,
	};
}

/**
 * A fresh folder under the OS temp folder with n8n's user folder and a logs folder in it, removed by
 * the teardown (or by the exit hook if the process ends first); N8N_E2E_KEEP=1 keeps it for a look.
 * @param {string} prefix
 * @param {Teardown} teardown
 */
export function createWorkFolder(prefix, teardown) {
	const workDir = mkdtempSync(path.join(tmpdir(), prefix));
	const keep = process.env.N8N_E2E_KEEP === '1';
	const remove = () => rmSync(workDir, { recursive: true, force: true });
	const unregisterExitRemoval = keep ? () => undefined : onExitSync(remove);
	teardown.push(() => {
		unregisterExitRemoval();
		if (keep) progress(`N8N_E2E_KEEP=1: leaving ${workDir}`);
		else remove();
	});
	const userFolder = path.join(workDir, 'n8n-user');
	const logDir = path.join(workDir, 'logs');
	mkdirSync(userFolder, { recursive: true });
	mkdirSync(logDir, { recursive: true });
	progress(`work folder ${workDir}`);
	return { workDir, userFolder, logDir };
}

/** @typedef {ReturnType<typeof createTeardown>} Teardown */
