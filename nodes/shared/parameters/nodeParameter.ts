import type { IExecuteFunctions } from 'n8n-workflow';

import { nodeOfRun } from './runNode';

type ParameterValue = ReturnType<IExecuteFunctions['getNodeParameter']>;

/** The value at a dotted path ("options.replayGuard") of the node's parameters, or undefined. */
function valueAt(parameters: object, name: string): unknown {
	let value: unknown = parameters;
	for (const step of name.split('.')) {
		if (value === null || typeof value !== 'object') return undefined;
		value = (value as Record<string, unknown>)[step];
	}
	return value;
}

/**
 * A parameter as getNodeParameter gives it, read from the node itself where that is the same: a
 * literal number, boolean or text (n8n's Workflow has filled in every default), or the fallback for
 * one left unset. n8n's getNodeParameter finds the parameter's description and checks its display
 * conditions on every call to validate the value, which changes nothing for this package's
 * parameters (none has a validateType); a delivery's run reads about twenty. An expression, a list,
 * a collection, or an unset one without fallback go through n8n as before.
 */
export function nodeParameter(
	context: IExecuteFunctions,
	name: string,
	fallback?: string | number | boolean,
	itemIndex = 0,
): ParameterValue {
	const value = valueAt(nodeOfRun(context).parameters, name);
	if (typeof value === 'number' || typeof value === 'boolean') return value;
	if (typeof value === 'string' && !value.startsWith('=')) return value;
	if (value === undefined && fallback !== undefined) return fallback;
	return context.getNodeParameter(name, itemIndex, fallback);
}
