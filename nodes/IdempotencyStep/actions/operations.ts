import {
	operationParameters,
	operationRouter,
	type OperationEntry,
} from '../../shared/parameters/operationTable';
import * as record from './record.operation';
import * as recordAndSkipNext from './recordAndSkipNext.operation';
import * as skipIfDone from './skipIfDone.operation';

/** The node's operations, once (see operationTable.ts). Values are stored in workflows: never rename them. */
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
	recordAndSkipNext: {
		name: 'Record Step and Skip Next If Done',
		action: 'Record a step and skip the next one if done',
		description:
			'Between two side effects, one node and one statement: record what the step produced, then run the next step (run output) or skip it with what it produced the first time (done output)',
		module: recordAndSkipNext,
	},
} satisfies Record<string, OperationEntry>;

/** The operations version 1 offers: its saved workflows see the node as it was. */
const VERSION_1_OPERATIONS: ReadonlyArray<keyof typeof OPERATIONS> = ['skipIfDone', 'record'];

export type Operation = keyof typeof OPERATIONS;

/**
 * The outputs by operation, as n8n's `outputs` expression: Skip If Done has `run` and `done`,
 * Record Step one output. Self-contained, as n8n evaluates it alone.
 */
export const stepOutputsExpression = `={{ $parameter["operation"] === "record" ? [{ type: "main" }] : [{ type: "main", displayName: "run" }, { type: "main", displayName: "done" }] }}`;

/** "skip if done: create customer", "record: create customer", "record: create customer, then: send receipt". */
export const stepSubtitle = `={{ $parameter["operation"] === "recordAndSkipNext" ? "record: " + $parameter["step"] + ", then: " + $parameter["nextStep"] : ($parameter["operation"] === "record" ? "record: " : "skip if done: ") + $parameter["step"] }}`;

const [operationProperty, ...otherProperties] = operationParameters(OPERATIONS, 'skipIfDone', [
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

/** The Operation parameter twice: version 1 with its two operations, version 2 with all three. */
export const operationProperties = [
	{
		...operationProperty,
		options: operationProperty.options?.filter((option) =>
			VERSION_1_OPERATIONS.includes((option as { value: string }).value as Operation),
		),
		displayOptions: { show: { '@version': [1] } },
	},
	{ ...operationProperty, displayOptions: { show: { '@version': [{ _cnd: { gte: 2 } }] } } },
	...otherProperties,
];

export const route = operationRouter(OPERATIONS);
