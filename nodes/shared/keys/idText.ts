import { KeyError } from './KeyError';
import { decodeRawBody, lookUpRawJson } from './rawJson';

/**
 * How an id value becomes the text in a key. Text is used as it is. A number is the delicate case:
 * n8n parsed the JSON body with JSON.parse, so a number is a double, and several texts the sender
 * wrote can give one double: `98765432101234567891` and `98765432101234567892` (beyond 2^53),
 * `1e21` and `1000000000000000000000`, `0.1` and `0.10000000000000001`. Two different events must
 * never share a key, so a number becomes text only in two ways:
 * - its exact text, read from the raw body at the path the id was read from; else
 * - String(n) for a safe integer other than -0 (|n| < 2^53): JSON serialisers write integers as plain
 *   digits, and each safe integer has one such text, so this keeps today's keys (`12345` → `evt:12345`).
 *   Without the raw body, a sender that wrote `1e3` or `1000.0` gets the key of `1000`: the raw body
 *   (on in the template) tells them apart.
 * Anything else (beyond 2^53, a fraction, -0) without its raw text is an item error: never a guess.
 */

const TURN_ON_RAW_BODY =
	'Turn on "Raw Body" in the Webhook node options so the exact digits are read from the request, or key on a text field.';
const KEEP_BODY_AS_RECEIVED =
	'Key on the body as the Webhook node received it (its Raw Body must match $json.body), or key on a text field.';
const USE_PLAIN_PATH =
	'Point the key at the field with a plain path such as {{ $json.body.id }} (Raw Body on) so its exact digits are read from the request, or key on a text field.';

/** An id as read from the item: undefined when absent, its text, or a JSON number still to be written as text. */
export type IdValue = string | number | undefined;

/** True when String(n) is the only plain-digit text of n, so the key needs no raw body. */
export function isPlainInteger(n: number): boolean {
	return Number.isSafeInteger(n) && !Object.is(n, -0);
}

function describeKind(value: unknown): string {
	if (Array.isArray(value)) return 'an array';
	if (typeof value === 'object') return 'an object';
	return `a ${typeof value}`;
}

/**
 * Checks what an id value is. Absent (undefined, null or '') gives undefined, so the caller can fall
 * back to the body hash. An object, array or boolean is refused: stringifying it would give many
 * events one key.
 */
export function idValue(value: unknown, what: string): IdValue {
	if (value === undefined || value === null || value === '') return undefined;
	if (typeof value === 'string') return value;
	if (typeof value === 'number') {
		if (!Number.isFinite(value)) {
			throw new KeyError(
				`The ${what} is ${String(value)}, which cannot identify an event`,
				'Use a finite number or a text id.',
				'invalid-key',
			);
		}
		return value;
	}
	// A BigInt (from a Code node) holds every digit.
	if (typeof value === 'bigint') return value.toString();
	throw new KeyError(
		`The ${what} is ${describeKind(value)}, not a text or number`,
		'Point the key at a single text or number field, for example {{ $json.body.id }}.',
		'invalid-key',
	);
}

function unfaithfulNumber(
	value: number,
	what: string,
	why: string,
	hint = TURN_ON_RAW_BODY,
): KeyError {
	return new KeyError(
		`The ${what} is the number ${String(value)} as n8n parsed it, which may not be the number the sender wrote (${why}), so it cannot be used as a key`,
		hint,
	);
}

function numberProblem(value: number): string {
	if (!Number.isInteger(value))
		return 'a number with a fraction or exponent can be written several ways';
	if (Object.is(value, -0)) return '-0 and 0 are one number';
	return 'integers beyond 2^53 lose digits when parsed';
}

/** An id's text where no raw body can help (headers, the namespace, Release's key). */
export function normalizeId(value: unknown, what: string): string | undefined {
	const id = idValue(value, what);
	if (typeof id !== 'number') return id;
	if (isPlainInteger(id)) return String(id);
	throw unfaithfulNumber(id, what, numberProblem(id));
}

/** Where a numeric id's exact text may be found. */
export interface NumberOrigin {
	/** The id's path inside the JSON body; undefined when the id did not come from a plain body path. */
	bodyPath: readonly string[] | undefined;
	/** The raw request bytes; undefined when the item has none. */
	rawBody: Uint8Array | undefined;
}

function pathText(path: readonly string[]): string {
	return path.length === 0 ? 'the top level' : path.join('.');
}

/** The sender's text of the number at `bodyPath`, or a sentence saying why it cannot be had. */
function rawNumberText(
	value: number,
	bodyPath: readonly string[],
	rawBody: Uint8Array,
): { text: string } | { problem: string } {
	const lookup = lookUpRawJson(decodeRawBody(rawBody), bodyPath);
	if ('invalid' in lookup) return { problem: `the raw body is not JSON (${lookup.invalid})` };
	const found = 'found' in lookup ? lookup.found : undefined;
	if (found?.kind !== 'number')
		return { problem: `the raw body has no number at ${pathText(bodyPath)}` };
	// The item's value must be what n8n parsed from that text; otherwise the body was changed after the Webhook node.
	if (Number(found.text) !== value) {
		return {
			problem: `the raw body has ${found.text} at ${pathText(bodyPath)}, not this number (was the body changed after the Webhook node?)`,
		};
	}
	return { text: found.text };
}

/** A numeric id's text: the raw body's exact text where there is one, else String(n) for a plain integer, else an item error. */
export function numberIdText(value: number, what: string, origin: NumberOrigin): string {
	let problem: string;
	let hint = TURN_ON_RAW_BODY;
	if (origin.bodyPath === undefined) {
		problem =
			'its text cannot be looked up in the raw body, because the id does not come from a plain {{ $json.body… }} path';
		hint = USE_PLAIN_PATH;
	} else if (origin.rawBody === undefined) {
		problem = 'the item has no raw body to read its exact text from';
	} else {
		const raw = rawNumberText(value, origin.bodyPath, origin.rawBody);
		if ('text' in raw) return raw.text;
		problem = raw.problem;
		hint = KEEP_BODY_AS_RECEIVED;
	}
	if (isPlainInteger(value)) return String(value);
	throw unfaithfulNumber(value, what, `${numberProblem(value)}, and ${problem}`, hint);
}
