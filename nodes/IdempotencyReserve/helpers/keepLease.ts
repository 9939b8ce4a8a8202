import { NodeOperationError, type IExecuteFunctions } from 'n8n-workflow';

import { nodeParameter } from '../../shared/parameters/nodeParameter';
import {
	DEFAULT_KEEP_LEASE,
	DEFAULT_MAX_RUN_SECONDS,
	MAX_MAX_RUN_SECONDS,
} from '../../shared/reserveRules/reserveSettings';
import { executionEnd, secondsUntilTimeout } from '../../shared/run/executionLifetime';
import type { KeyStore } from '../../shared/store/KeyStore';

/**
 * Keep the Lease While Running: the ceiling on renewals in seconds, or undefined when the lease is
 * not kept (the setting off). A Max Run out of range is the node's error, naming the setting.
 */
export function maxRunSecondsOf(context: IExecuteFunctions): number | undefined {
	if (!(nodeParameter(context, 'keepLease', DEFAULT_KEEP_LEASE) as boolean)) return undefined;
	const seconds = Number(nodeParameter(context, 'maxRunSeconds', DEFAULT_MAX_RUN_SECONDS));
	if (!Number.isFinite(seconds) || seconds < 1 || seconds > MAX_MAX_RUN_SECONDS) {
		throw new NodeOperationError(
			context.getNode(),
			`Max Run must be from 1 to ${MAX_MAX_RUN_SECONDS} seconds, not ${String(seconds)}`,
			{
				description:
					'Set it above the slowest run you expect from Reserve to Complete Key (an hour is the default), or turn Keep the Lease While Running off.',
			},
		);
	}
	return seconds;
}

/**
 * Renews the leases of the keys this run reserved while the execution lives, at most Max Run (or
 * until the workflow's timeout). Where n8n does not say when an execution ends, nothing is kept:
 * a lease that outlived a failed execution would hold its event back from the retry.
 */
export function keepReservedLeases(
	context: IExecuteFunctions,
	store: KeyStore,
	{
		keys,
		token,
		leaseSeconds,
		maxRunSeconds,
	}: { keys: readonly string[]; token: string; leaseSeconds: number; maxRunSeconds: number },
): void {
	if (keys.length === 0) return;
	const until = executionEnd(context);
	if (until === undefined) return;
	const timeout = secondsUntilTimeout(context);
	store.keepLeases(
		keys.map((key) => ({ key, token })),
		{
			leaseSeconds,
			maxRunSeconds: timeout === undefined ? maxRunSeconds : Math.min(maxRunSeconds, timeout),
			until,
			logger: context.logger,
		},
	);
}
