import { randomUUID } from 'crypto';
import {
	NodeOperationError,
	type IDataObject,
	type INodeExecutionData,
	type IRun,
	type ITriggerFunctions,
	type ITriggerResponse,
} from 'n8n-workflow';

import { redrivenJson } from '../../shared/delivery/storedDelivery';
import {
	DEFAULT_MAX_RUN_SECONDS,
	MAX_MAX_RUN_SECONDS,
} from '../../shared/reserveRules/reserveSettings';
import { KEY_STORE_CREDENTIAL_TYPE } from '../../shared/parameters/credentials';
import { isoTime } from '../../shared/run/isoTime';
import { tableRef } from '../../shared/store/identifiers';
import { KeyStore, type RedriveClaim } from '../../shared/store/KeyStore';
import type { IdempotencyPostgresCredential } from '../../shared/transport/connectionOptions';
import { poolFor } from '../../shared/transport/poolCache';

/** n8n's cron takes a seconds field: these divide a minute, so the checks are evenly spaced. */
export const CHECK_EVERY_SECONDS = [5, 10, 15, 20, 30, 60] as const;

export const REDRIVE_DEFAULTS = {
	checkEverySeconds: 10,
	leaseSeconds: 60,
	maxAttempts: 5,
	backoffSeconds: 30,
	batchSize: 10,
	maxRunSeconds: DEFAULT_MAX_RUN_SECONDS,
} as const;

interface RedriveSettings {
	checkEverySeconds: number;
	leaseSeconds: number;
	maxAttempts: number;
	backoffSeconds: number;
	batchSize: number;
	maxRunSeconds: number;
	/** Also claim keys whose stored delivery names no workflow (stored before deliveries named one). */
	claimUnscoped: boolean;
}

function wholeNumber(
	context: ITriggerFunctions,
	name: keyof typeof REDRIVE_DEFAULTS,
	label: string,
	[min, max]: [number, number],
): number {
	const value = Number(context.getNodeParameter(name, REDRIVE_DEFAULTS[name]));
	if (!Number.isInteger(value) || value < min || value > max)
		throw new NodeOperationError(
			context.getNode(),
			`${label} must be a whole number from ${min} to ${max}, not ${String(value)}`,
		);
	return value;
}

function settingsOf(context: ITriggerFunctions): RedriveSettings {
	const checkEverySeconds = Number(
		context.getNodeParameter('checkEverySeconds', REDRIVE_DEFAULTS.checkEverySeconds),
	);
	if (!(CHECK_EVERY_SECONDS as readonly number[]).includes(checkEverySeconds))
		throw new NodeOperationError(
			context.getNode(),
			`Check Every must be one of ${CHECK_EVERY_SECONDS.join(', ')} seconds`,
		);
	return {
		checkEverySeconds,
		leaseSeconds: wholeNumber(context, 'leaseSeconds', 'Lease', [1, 86400]),
		maxAttempts: wholeNumber(context, 'maxAttempts', 'Max Attempts', [1, 100]),
		backoffSeconds: wholeNumber(context, 'backoffSeconds', 'Backoff', [0, 3600]),
		batchSize: wholeNumber(context, 'batchSize', 'Events Per Check', [1, 1000]),
		maxRunSeconds: wholeNumber(context, 'maxRunSeconds', 'Max Run', [1, MAX_MAX_RUN_SECONDS]),
		claimUnscoped: context.getNodeParameter('claimUnscoped', false) as boolean,
	};
}

/** The item a claimed key runs as: its delivery as the Webhook handed it, and the claim, as Reserve's `new` item. */
export function redriveItem(claimed: RedriveClaim['claimed'][number]): INodeExecutionData {
	const idempotency: IDataObject = {
		key: claimed.key,
		isNew: true,
		token: claimed.token,
		leaseUntil: isoTime(claimed.leaseUntilMs),
		attempt: claimed.attempt,
		answerFirst: true,
		redrive: true,
	};
	return { json: { ...redrivenJson(claimed.delivery), idempotency } };
}

/**
 * Every few seconds (n8n's scheduler: one check at a time, and in multi-main only the leader runs
 * it), claims the due keys of this workflow in one statement and starts one execution per key on
 * `redrive`, so one failing event does not hold back the others; keys out of attempts go to
 * `dead letter`, together. A check that fails (the database away) is logged and the next one tries
 * again. Only keys whose stored delivery this workflow made are claimed: two workflows on one table
 * never run each other's events. Each claimed key's lease is kept (leaseKeeper.ts) until n8n says
 * its execution finished, or Max Run: a slow redriven step is never claimed again beside itself.
 */
export async function startRedrive(context: ITriggerFunctions): Promise<ITriggerResponse> {
	const settings = settingsOf(context);
	const credential = (await context.getCredentials(
		KEY_STORE_CREDENTIAL_TYPE,
	)) as unknown as IdempotencyPostgresCredential;
	const ref = tableRef(
		context.getNodeParameter('schema', 'public') as string,
		context.getNodeParameter('table', 'processed_events') as string,
	);
	const credentialId = context.getNode().credentials?.[KEY_STORE_CREDENTIAL_TYPE]?.id;
	const store = new KeyStore(poolFor(credential, { credentialId, logger: context.logger }), ref);
	const workflowId = String(context.getWorkflow().id ?? '');

	// n8n's experimental engine 2.0 (a workflow setting) refuses a trigger that waits for its
	// execution to finish: there, the claimed key keeps the trigger's lease only, as before.
	const workflowSettings = context.getWorkflowSettings?.() as { engineType?: string } | undefined;
	const toldWhenDone = workflowSettings?.engineType !== 'v2';

	/** Starts the claimed key's execution and keeps its lease until n8n says that execution is done. */
	const run = (claimed: RedriveClaim['claimed'][number]) => {
		if (!toldWhenDone) return context.emit([[redriveItem(claimed)], []]);
		const done = context.helpers.createDeferredPromise<IRun>();
		store.keepLeases([{ key: claimed.key, token: claimed.token }], {
			leaseSeconds: settings.leaseSeconds,
			maxRunSeconds: settings.maxRunSeconds,
			until: done.promise,
			logger: context.logger,
		});
		context.emit([[redriveItem(claimed)], []], undefined, done);
	};

	const check = async (): Promise<number> => {
		// The columns Reserve's Answer First adds, added here too if this runs first; the table is Reserve's to create.
		const claim = await store.withPreparedTable(
			{ create: false, addColumns: true, lease: true, delivery: true },
			async () =>
				await store.claimRedrives({
					token: randomUUID(),
					leaseSeconds: settings.leaseSeconds,
					maxAttempts: settings.maxAttempts,
					limit: settings.batchSize,
					backoffSeconds: settings.backoffSeconds,
					workflowId,
					claimUnscoped: settings.claimUnscoped,
				}),
		);
		for (const claimed of claim.claimed) run(claimed);
		if (claim.deadLetters.length > 0)
			context.emit([
				[],
				// The table as a person writes it (plain identifiers, so unambiguous), not SQL-quoted.
				claim.deadLetters.map(({ key, attempts }) => ({
					json: { key, attempts, status: 'dead_letter', table: `${ref.schema}.${ref.table}` },
				})),
			]);
		return claim.claimed.length + claim.deadLetters.length;
	};

	let running = false;
	context.helpers.registerCron(
		{ expression: `*/${settings.checkEverySeconds} * * * * *` as never },
		() => {
			if (running) return;
			running = true;
			check()
				.catch((error: Error & { code?: string }) => {
					// No key table yet: Reserve creates it with the first delivery; nothing to redrive.
					if (error.code === '42P01') return;
					context.logger.warn(
						`Idempotency Redrive Trigger: the check of ${ref.qualified} failed, the next one tries again: ${error.message}`,
					);
				})
				.finally(() => {
					running = false;
				});
		},
	);
	// "Test step" in the editor: one check now; with nothing due the editor keeps waiting.
	return { manualTriggerFunction: async () => void (await check()) };
}
