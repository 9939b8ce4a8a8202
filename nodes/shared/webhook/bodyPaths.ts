/**
 * Paths into a parsed JSON body, and the body without the fields at them: what the replay guard
 * leaves out of its digest (fields renewed per attempt) and what Answer First leaves out of a stored
 * delivery (fields that carry a secret). Pure: the key planner bundles it.
 */

/** A path into the JSON body: property names; digits index arrays; `*` steps over every element. */
export type BodyPath = readonly string[];

/** A path step that matches every element of an array or property of an object (each event of a batch). */
export const EVERY_ELEMENT = '*';

/** The value without the fields at `paths` (a copy; the value itself is not changed). */
export function withoutPaths(value: unknown, paths: readonly BodyPath[]): unknown {
	if (paths.length === 0 || value === null || typeof value !== 'object') return value;
	const isArray = Array.isArray(value);
	const copy: Record<string, unknown> | unknown[] = isArray
		? [...(value as unknown[])]
		: { ...(value as Record<string, unknown>) };
	const matches = (step: string, name: string) => step === name || step === EVERY_ELEMENT;
	for (const name of Object.keys(copy)) {
		if (!isArray && paths.some((path) => path.length === 1 && matches(path[0], name))) {
			delete (copy as Record<string, unknown>)[name];
			continue;
		}
		const deeper = paths.filter((path) => path.length > 1 && matches(path[0], name));
		if (deeper.length > 0)
			(copy as Record<string, unknown>)[name] = withoutPaths(
				(copy as Record<string, unknown>)[name],
				deeper.map((path) => path.slice(1)),
			);
	}
	return copy;
}
