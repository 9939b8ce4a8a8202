import type { IExecuteFunctions } from 'n8n-workflow';

/**
 * How long this execution lives, for the lease keeper (store/leaseKeeper.ts): a promise that settles
 * when it ends, and when n8n would stop it anyway (the workflow's timeout).
 *
 * n8n tells a node only of a cancellation (its cancel signal); the end of an execution that
 * succeeds or fails is told to the execution's lifecycle hooks, which n8n-core hands every node
 * context as `additionalData.hooks` (n8n 1.8x on, 2.x alike). Its `workflowExecuteAfter` runs on
 * every way out: success, failure, cancellation, timeout, and a Wait that parks the execution.
 */

interface LifecycleHooks {
	addHandler(hook: 'workflowExecuteAfter', handler: () => void): void;
}

interface ExecutionData {
	hooks?: Partial<LifecycleHooks>;
	/** When n8n stops the execution (ms since 1970), where the workflow sets a timeout. */
	executionTimeoutTimestamp?: number;
}

function executionDataOf(context: IExecuteFunctions): ExecutionData | undefined {
	return (context as unknown as { additionalData?: ExecutionData }).additionalData;
}

/** One handler per execution, however many nodes keep leases in it. */
const ends = new WeakMap<object, Promise<void>>();

/**
 * Settles when this execution ends (or is cancelled); undefined where n8n gives no way to know,
 * and then no lease may outlive its own length.
 */
export function executionEnd(context: IExecuteFunctions): Promise<void> | undefined {
	const hooks = executionDataOf(context)?.hooks;
	if (hooks === undefined || typeof hooks.addHandler !== 'function') return undefined;
	const known = ends.get(hooks);
	if (known !== undefined) return known;
	const end = new Promise<void>((resolve) => {
		hooks.addHandler?.('workflowExecuteAfter', () => resolve());
		context
			.getExecutionCancelSignal?.()
			?.addEventListener('abort', () => resolve(), { once: true });
	});
	ends.set(hooks, end);
	return end;
}

/** Seconds until the workflow's own timeout stops this execution; undefined without one. */
export function secondsUntilTimeout(context: IExecuteFunctions): number | undefined {
	const at = executionDataOf(context)?.executionTimeoutTimestamp;
	return typeof at === 'number' && Number.isFinite(at)
		? Math.max(0, (at - Date.now()) / 1000)
		: undefined;
}
