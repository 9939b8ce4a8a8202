import {
	operationParameters,
	operationRouter,
	type OperationEntry,
} from '../../shared/parameters/operationTable';
import * as dropDeadLetters from './dropDeadLetters.operation';
import * as lookUp from './lookUp.operation';
import * as purge from './purge.operation';
import * as report from './report.operation';
import * as retryDeadLetters from './retryDeadLetters.operation';

/** The node's operations, once (see operationTable.ts). Values are stored in workflows: never rename them. */
const OPERATIONS = {
	lookUp: {
		name: 'Look Up',
		action: 'Look up keys',
		description: 'What the table holds for keys, a prefix, the stuck keys or the dead letters',
		module: lookUp,
	},
	purge: {
		name: 'Purge',
		action: 'Purge selected keys',
		description: 'Delete keys by list, prefix or age, optionally only of one state; dry run first',
		module: purge,
	},
	report: {
		name: 'Report',
		action: 'Report on the key table',
		description:
			'Counts by state, stuck keys, dead letters, oldest key, recent reservations, takeovers',
		module: report,
	},
	retryDeadLetters: {
		name: 'Retry Dead Letters',
		action: 'Retry dead letters',
		description:
			'Run the given dead letters again: due at once with fresh attempts, for the Redrive Trigger',
		module: retryDeadLetters,
	},
	dropDeadLetters: {
		name: 'Drop Dead Letters',
		action: 'Drop dead letters',
		description: 'Delete the given keys if they are dead letters, and nothing else',
		module: dropDeadLetters,
	},
} satisfies Record<string, OperationEntry>;

export type Operation = keyof typeof OPERATIONS;

/**
 * The node's subtitle: the operation's name (from the table above) and the table. A purge says
 * whether it is a dry run, since the same node deletes or only counts depending on one switch.
 */
export const operationSubtitle = `={{ (${JSON.stringify(
	Object.fromEntries(Object.entries(OPERATIONS).map(([value, { name }]) => [value, name])),
)})[$parameter["operation"]] + ($parameter["operation"] === "purge" && $parameter["dryRun"] !== false ? " (dry run)" : "") + " in " + $parameter["table"] }}`;

export const operationProperties = operationParameters(OPERATIONS, 'lookUp');

export const route = operationRouter(OPERATIONS);
