import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

/** A key the Redrive Trigger claimed, and the token its statements check. */
export interface RedriveClaim {
	key: string;
	token: string;
}

/** The trigger's node type without its package prefix, which differs between n8n's loaders. */
const REDRIVE_TRIGGER_TYPE_SUFFIX = '.idempotencyRedriveTrigger';

/** The claim an item carries (`idempotency.redrive`), as the Redrive Trigger's item has it. */
export function redriveClaimOf(json: IDataObject): RedriveClaim | undefined {
	const claim = json.idempotency as IDataObject | undefined;
	if (claim?.redrive !== true) return undefined;
	const { key, token } = claim;
	return typeof key === 'string' && typeof token === 'string' ? { key, token } : undefined;
}

/**
 * The claim of the Redrive Trigger that started this execution, read from the trigger's own output
 * rather than from the node's input: after a business step (a Postgres node, an HTTP request) the
 * item no longer carries it. Only a Redrive Trigger upstream of this node and run in this execution
 * counts, so an execution that another trigger started finds none. Read once per execution (the
 * claim is adopted then), and never in a run that Reserve started.
 */
export function redriveClaimOfTrigger(context: IExecuteFunctions): RedriveClaim | undefined {
	const triggers = context
		.getParentNodes(context.getNode().name)
		.filter((parent) => parent.type.endsWith(REDRIVE_TRIGGER_TYPE_SUFFIX) && !parent.disabled);
	if (triggers.length === 0) return undefined;
	const $ = context.getWorkflowDataProxy(0).$ as (name: string) => {
		isExecuted: boolean;
		first: () => { json: IDataObject } | undefined;
	};
	for (const trigger of triggers) {
		const output = $(trigger.name);
		if (!output.isExecuted) continue;
		const first = output.first();
		const claim = first === undefined ? undefined : redriveClaimOf(first.json);
		if (claim !== undefined) return claim;
	}
	return undefined;
}
