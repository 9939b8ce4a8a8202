import { normalizeId } from './idText';
import { KeyError } from './KeyError';

/**
 * A preset's header as one id. What Node.js (and so n8n's Webhook node) makes of a request's headers:
 * names are lower-cased; a header sent twice is joined into one value with ", " (an array for a few
 * standard headers; items built by hand may have arrays too); surrounding spaces are dropped.
 * The rules, so that a key is never two ids joined together:
 * - surrounding spaces are not part of the value (HTTP says so), here too for items built by hand;
 * - a value with a comma is several values: the ids the presets read (UUIDs, `msg_…`) have no
 *   comma, so a comma means the header came more than once. Copies of one id (a proxy repeating the
 *   header) count as that id; two different ids are an item error;
 * - an empty value (or only commas and spaces) is no value: the next header of the preset, else the
 *   body hash, as for an empty event id.
 */

/** The value of `name` (lower case) in the item's headers, matching names in any case. */
export function readHeader(headers: unknown, name: string): unknown {
	if (headers === null || typeof headers !== 'object') return undefined;
	const record = headers as Record<string, unknown>;
	if (Object.prototype.hasOwnProperty.call(record, name)) return record[name];
	// Express lower-cases header names, but items built by hand or by other triggers may not.
	const match = Object.keys(record).find((key) => key.toLowerCase() === name);
	return match === undefined ? undefined : record[match];
}

function headerParts(value: unknown, what: string): string[] {
	if (Array.isArray(value)) return value.flatMap((part) => headerParts(part, what));
	const text = normalizeId(value, what);
	return text === undefined ? [] : text.split(',');
}

/** The one id a header carries, undefined when it has none; an item error when it carries several. */
export function headerIdText(value: unknown, displayName: string): string | undefined {
	const what = `${displayName} header`;
	const ids = [
		...new Set(
			headerParts(value, what)
				.map((part) => part.trim())
				.filter((part) => part !== ''),
		),
	];
	if (ids.length <= 1) return ids[0];
	throw new KeyError(
		`The ${what} has ${ids.length} different values (${ids.map((id) => JSON.stringify(id)).join(', ')}): it was sent more than once, and the key must be one event's id`,
		'Make the sender (or the proxy in front of n8n) send the header once, or key on a field of the body with Custom or Event ID.',
		'invalid-key',
	);
}
