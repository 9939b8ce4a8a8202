/**
 * Plain `$json` path expressions, read without n8n's evaluator: what a node parameter such as
 * `={{ $json.body.id }}` points at, and its value in an item's json. Pure, so the key planner bundles
 * the same reading (n8n/itemParameter.ts uses it for the nodes).
 */

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

/** Returned where only n8n's evaluator knows the answer (a property of a string, an inherited one). */
export const NEEDS_EVALUATION: unique symbol = Symbol('needs n8n evaluation');

/** Follows own properties of objects; undefined or null on the way gives undefined, as in n8n. */
export function readJsonPath(json: object, path: readonly string[]): unknown {
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
