import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { jsonPathOf, NEEDS_EVALUATION, readJsonPath } from '../keys/jsonPath';
import { nodeOfRun } from './runNode';

/**
 * The path inside `$json.body` that a parameter reads when it is a plain path such as
 * `={{ $json.body.data.id }}` (→ ["data", "id"]); undefined for a literal or any other expression.
 * It tells where a numeric id's exact text is in the raw body.
 */
export function bodyPathOfParameter(
	context: IExecuteFunctions,
	name: string,
): string[] | undefined {
	const raw = nodeOfRun(context).parameters[name];
	const path = typeof raw === 'string' ? jsonPathOf(raw) : undefined;
	return path?.[0] === 'body' ? path.slice(1) : undefined;
}

/**
 * Reads a per-item parameter. A literal and a plain `$json` path through objects are read directly:
 * they mean the same as n8n's evaluation (a missing step gives undefined there too) at a fraction of
 * the cost, which matters for executions with thousands of items. Everything else goes through n8n.
 */
export function itemParameterReader(
	context: IExecuteFunctions,
	name: string,
): (item: INodeExecutionData, itemIndex: number) => unknown {
	const raw = nodeOfRun(context).parameters[name];
	if (typeof raw === 'string' && !raw.startsWith('=')) return () => raw;
	const path = typeof raw === 'string' ? jsonPathOf(raw) : undefined;
	const evaluate = (itemIndex: number) => context.getNodeParameter(name, itemIndex, undefined);
	if (path === undefined) return (_item, itemIndex) => evaluate(itemIndex);
	return (item, itemIndex) => {
		const value = readJsonPath(item.json, path);
		return value === NEEDS_EVALUATION ? evaluate(itemIndex) : value;
	};
}
