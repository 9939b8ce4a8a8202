import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

/** `={{ $json.body.id }}`, `={{ $json["x-id"] }}`, `={{ $json.items[0].id }}`: a plain read of the item's json. */
const JSON_PATH_EXPRESSION =
	/^=\{\{\s*\$json((?:\.[A-Za-z_$][\w$]*|\[\s*(?:"[^"\\]*"|'[^'\\]*'|\d+)\s*\])+)\s*\}\}$/;
const PATH_SEGMENT = /\.([A-Za-z_$][\w$]*)|\[\s*(?:"([^"\\]*)"|'([^'\\]*)'|(\d+))\s*\]/g;

/** The property names of a `$json` path expression, or undefined for any other expression. */
export function jsonPathOf(expression: string): string[] | undefined {
	const match = JSON_PATH_EXPRESSION.exec(expression);
	if (match === null) return undefined;
	return [...match[1].matchAll(PATH_SEGMENT)].map(
		(segment) => segment[1] ?? segment[2] ?? segment[3] ?? segment[4],
	);
}

/**
 * The path inside `$json.body` that a parameter reads when it is a plain path such as
 * `={{ $json.body.data.id }}` (→ ["data", "id"]); undefined for a literal or any other expression.
 * It tells where a numeric id's exact text is in the raw body.
 */
export function bodyPathOfParameter(
	context: IExecuteFunctions,
	name: string,
): string[] | undefined {
	const raw = context.getNode().parameters[name];
	const path = typeof raw === 'string' ? jsonPathOf(raw) : undefined;
	return path?.[0] === 'body' ? path.slice(1) : undefined;
}

/** Returned where only n8n's evaluator knows the answer (a property of a string, an inherited one). */
export const NEEDS_EVALUATION: unique symbol = Symbol('needs n8n evaluation');

/** Follows own properties of objects; undefined or null on the way gives undefined, as in n8n. */
export function readJsonPath(json: IDataObject, path: readonly string[]): unknown {
	let value: unknown = json;
	for (const name of path) {
		if (value === undefined || value === null) return undefined;
		if (typeof value !== 'object') return NEEDS_EVALUATION;
		if (!Object.prototype.hasOwnProperty.call(value, name)) {
			return name in (value as object) ? NEEDS_EVALUATION : undefined;
		}
		value = (value as Record<string, unknown>)[name];
	}
	return value;
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
	const raw = context.getNode().parameters[name];
	if (typeof raw === 'string' && !raw.startsWith('=')) return () => raw;
	const path = typeof raw === 'string' ? jsonPathOf(raw) : undefined;
	const evaluate = (itemIndex: number) => context.getNodeParameter(name, itemIndex, undefined);
	if (path === undefined) return (_item, itemIndex) => evaluate(itemIndex);
	return (item, itemIndex) => {
		const value = readJsonPath(item.json, path);
		return value === NEEDS_EVALUATION ? evaluate(itemIndex) : value;
	};
}
