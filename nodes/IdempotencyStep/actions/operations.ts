import {
	operationParameters,
	operationRouter,
	type OperationEntry,
} from '../../shared/parameters/operationTable';
import * as record from './record.operation';
import * as skipIfDone from './skipIfDone.operation';

/** The node's two operations, once (see operationTable.ts). Values are stored in workflows: never rename them. */
const OPERATIONS = {
	skipIfDone: {
		name: 'Skip If Done',
		action: 'Skip a step this event already did',
		description:
			'Before a side effect: run it (run output), or skip it with what it produced the first time (done output)',
		module: skipIfDone,
	},
	record: {
		name: 'Record Step',
		action: 'Record what a step did',
		description:
			'After the side effect: record its output under the event key, so a retry of the event skips it',
		module: record,
	},
} satisfies Record<string, OperationEntry>;

export type Operation = keyof typeof OPERATIONS;

/**
 * The outputs by operation, as n8n's `outputs` expression: Skip If Done has `run` and `done`,
 * Record Step one output. Self-contained, as n8n evaluates it alone.
 */
export const stepOutputsExpression = `={{ $parameter["operation"] === "record" ? [{ type: "main" }] : [{ type: "main", displayName: "run" }, { type: "main", displayName: "done" }] }}`;

/** "skip if done: create customer", "record: create customer". */
export const stepSubtitle = `={{ ($parameter["operation"] === "record" ? "record: " : "skip if done: ") + $parameter["step"] }}`;

export const operationProperties = operationParameters(OPERATIONS, 'skipIfDone', [
	{
		displayName: 'Step Name',
		name: 'step',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'create customer',
		description:
			"The step's name under the event key: the same in its Skip If Done and its Record Step, different for each step of the workflow",
	},
]);

export const route = operationRouter(OPERATIONS);
