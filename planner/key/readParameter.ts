/**
 * A node parameter read as the node reads it per item, as far as the page can without n8n's
 * expression engine; where only that engine could tell, BeyondPage says so instead of guessing.
 */
import { jsonPathOf, NEEDS_EVALUATION, readJsonPath } from '../../nodes/shared/keys/jsonPath';

/** Beyond the page: only n8n's expression engine knows the answer. */
export class BeyondPage extends Error {}

/** A parameter as the node reads it per item (nodes/shared/parameters/itemParameter.ts): fixed text, or a plain `$json` path. */
export function readParameter(
	stored: string,
	json: Record<string, unknown>,
	label: string,
): unknown {
	if (!stored.startsWith('=')) return stored;
	const path = jsonPathOf(stored);
	if (path === undefined) {
		throw new BeyondPage(
			`The ${label} expression ${stored.slice(1)} is evaluated by n8n's expression engine, which this page does not run: it reads only plain paths such as {{ $json.body.id }}, {{ $json.body.data.object.id }} or {{ $json.headers["x-event-id"] }}, and fixed text.`,
		);
	}
	const value = readJsonPath(json as never, path);
	if (value === NEEDS_EVALUATION) {
		throw new BeyondPage(
			`The ${label} expression ${stored.slice(1)} reads a property of a text or number (or an inherited one); n8n's expression engine decides what that gives, which this page does not run.`,
		);
	}
	return value;
}

/** Where the bodyPath of a parameter points inside $json.body (nodes/shared/parameters/itemParameter.ts, bodyPathOfParameter). */
export function bodyPathOf(stored: string): string[] | undefined {
	const path = stored.startsWith('=') ? jsonPathOf(stored) : undefined;
	return path?.[0] === 'body' ? path.slice(1) : undefined;
}
