/**
 * The request's headers as n8n's Webhook node hands them to the next node (`$json.headers`),
 * following Node.js's header handling, which n8n inherits.
 */

/**
 * Node.js (and so n8n) drops a repeated header of these and keeps the first; every other header sent
 * twice is joined with ", " (set-cookie becomes an array). https://nodejs.org/api/http.html#messageheaders
 */
const DISCARD_DUPLICATES = new Set([
	'age',
	'authorization',
	'content-length',
	'content-type',
	'etag',
	'expires',
	'from',
	'host',
	'if-modified-since',
	'if-unmodified-since',
	'last-modified',
	'location',
	'max-forwards',
	'proxy-authorization',
	'referer',
	'retry-after',
	'server',
	'user-agent',
]);

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export interface ParsedHeaders {
	headers: Record<string, string | string[]>;
	/** Lines that are not `Name: value`: n8n would never see them. */
	ignored: string[];
}

/** `Name: value` lines as `$json.headers`: names lower-cased, values trimmed, repeats as Node.js merges them. */
export function parseHeaders(text: string): ParsedHeaders {
	const headers: Record<string, string | string[]> = {};
	const ignored: string[] = [];
	for (const line of text.split(/\r?\n/)) {
		if (line.trim() === '') continue;
		const colon = line.indexOf(':');
		const name = colon > 0 ? line.slice(0, colon).trim().toLowerCase() : '';
		if (!HEADER_NAME.test(name)) {
			ignored.push(line);
			continue;
		}
		const value = line.slice(colon + 1).trim();
		const previous = headers[name];
		if (previous === undefined) headers[name] = name === 'set-cookie' ? [value] : value;
		else if (Array.isArray(previous)) previous.push(value);
		else if (!DISCARD_DUPLICATES.has(name)) headers[name] = `${previous}, ${value}`;
	}
	return { headers, ignored };
}
