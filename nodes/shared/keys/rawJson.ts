/**
 * Reads one value of a JSON document as the sender wrote it. n8n parses a webhook's JSON body with
 * JSON.parse, which rounds numbers to the nearest double: `98765432101234567891` arrives as
 * 98765432101234570000, and `1e21` and `1000000000000000000000` arrive as the same number. The raw
 * body still has the sender's text; this finds it for one path, following JSON.parse's rules so the
 * value found is the one n8n put in `$json.body`:
 * - the last of duplicate member names wins;
 * - member names are compared after unescaping (`"\u0069d"` is `id`);
 * - an array step is a canonical index (`0`, `12`; not `01`), as in JavaScript;
 * - whitespace is space, tab, CR and LF; one leading byte order mark is dropped, as n8n does
 *   before parsing.
 * The whole document is checked against the JSON grammar: text that JSON.parse would refuse
 * gives RawJsonError, never a guess. Nesting depth is not limited (no recursion per level).
 * Pure: no Node or n8n API, so the same code runs in a browser.
 */

export type RawJsonValue =
	| { kind: 'number'; text: string }
	| { kind: 'string'; value: string }
	| { kind: 'literal'; text: 'true' | 'false' | 'null' }
	| { kind: 'object' }
	| { kind: 'array' };

export class RawJsonError extends Error {
	constructor(message: string) {
		super(message);
		this.name = 'RawJsonError';
	}
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const BOM = 0xfeff;

const SIMPLE_ESCAPES: Record<string, string> = {
	'"': '"',
	'\\': '\\',
	'/': '/',
	b: '\b',
	f: '\f',
	n: '\n',
	r: '\r',
	t: '\t',
};
const HEX4 = /^[0-9a-fA-F]{4}$/;
const ARRAY_INDEX = /^(?:0|[1-9]\d*)$/;

function fail(what: string, at: number): never {
	throw new RawJsonError(`${what} at character ${at}`);
}

function skipSpace(text: string, at: number): number {
	let i = at;
	for (; i < text.length; i++) {
		const c = text.charCodeAt(i);
		if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
	}
	return i;
}

function isDigit(c: number): boolean {
	return c >= ZERO && c <= NINE;
}

/** The end of the string token starting at `at` (an opening quote), and its value when asked for. */
function scanString(text: string, at: number, decode: boolean): { end: number; value: string } {
	if (text.charCodeAt(at) !== QUOTE) fail('Expected a string', at);
	let value = '';
	let chunkStart = at + 1;
	let i = at + 1;
	for (;;) {
		if (i >= text.length) fail('Unterminated string', at);
		const c = text.charCodeAt(i);
		if (c === QUOTE) {
			if (decode) value += text.slice(chunkStart, i);
			return { end: i + 1, value };
		}
		if (c < 0x20) fail('Control character in a string', i);
		if (c !== BACKSLASH) {
			i++;
			continue;
		}
		if (decode) value += text.slice(chunkStart, i);
		const escape = text.charAt(i + 1);
		if (escape === 'u') {
			const hex = text.slice(i + 2, i + 6);
			if (!HEX4.test(hex)) fail('Bad \\u escape', i);
			// Surrogate halves are kept one by one, as JSON.parse does: a pair becomes one character.
			if (decode) value += String.fromCharCode(parseInt(hex, 16));
			i += 6;
		} else if (escape in SIMPLE_ESCAPES) {
			if (decode) value += SIMPLE_ESCAPES[escape];
			i += 2;
		} else {
			fail('Bad escape', i);
		}
		chunkStart = i;
	}
}

/** The end of the number token at `at`: -?(0|[1-9]digits)(.digits)?([eE][+-]?digits)? */
function scanNumber(text: string, at: number): number {
	let i = at;
	if (text.charCodeAt(i) === MINUS) i++;
	if (text.charCodeAt(i) === ZERO) i++;
	else if (isDigit(text.charCodeAt(i))) while (isDigit(text.charCodeAt(i))) i++;
	else fail('Expected a digit', i);
	if (text.charCodeAt(i) === DOT) {
		i++;
		if (!isDigit(text.charCodeAt(i))) fail('Expected a digit after the decimal point', i);
		while (isDigit(text.charCodeAt(i))) i++;
	}
	const e = text.charCodeAt(i);
	if (e === 0x65 || e === 0x45) {
		i++;
		const sign = text.charCodeAt(i);
		if (sign === PLUS || sign === MINUS) i++;
		if (!isDigit(text.charCodeAt(i))) fail('Expected a digit in the exponent', i);
		while (isDigit(text.charCodeAt(i))) i++;
	}
	return i;
}

/** The end of a string, number or literal at `at`; undefined when a container starts there. */
function scanScalar(text: string, at: number): number | undefined {
	const c = text.charCodeAt(at);
	if (c === OPEN_OBJECT || c === OPEN_ARRAY) return undefined;
	if (c === QUOTE) return scanString(text, at, false).end;
	if (c === MINUS || isDigit(c)) return scanNumber(text, at);
	for (const literal of ['true', 'false', 'null']) {
		if (text.startsWith(literal, at)) return at + literal.length;
	}
	return fail('Expected a JSON value', at);
}

/** After an object's `{` or `,`: the member name, the colon, and the start of the member's value. */
function scanMemberName(text: string, at: number): { name: string; valueStart: number } {
	const { end, value } = scanString(text, skipSpace(text, at), true);
	const colon = skipSpace(text, end);
	if (text.charCodeAt(colon) !== COLON) fail('Expected ":"', colon);
	return { name: value, valueStart: skipSpace(text, colon + 1) };
}

/**
 * The end of the value starting at `at` (no leading space). Containers are followed with an
 * explicit stack of closing characters, so deep nesting cannot overflow the call stack.
 */
function skipValue(text: string, at: number): number {
	const closers: number[] = [];
	let i = at;
	for (;;) {
		const c = text.charCodeAt(i);
		const scalarEnd = scanScalar(text, i);
		if (scalarEnd !== undefined) {
			i = scalarEnd;
		} else {
			const closer = c === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY;
			const inner = skipSpace(text, i + 1);
			if (text.charCodeAt(inner) === closer) {
				i = inner + 1;
			} else {
				closers.push(closer);
				i = closer === CLOSE_OBJECT ? scanMemberName(text, i + 1).valueStart : inner;
				continue;
			}
		}
		// A value ended: close every container that ends here, or move to the next element.
		for (;;) {
			if (closers.length === 0) return i;
			i = skipSpace(text, i);
			const closer = closers[closers.length - 1];
			const next = text.charCodeAt(i);
			if (next === closer) {
				closers.pop();
				i++;
				continue;
			}
			if (next !== COMMA) fail(`Expected "," or "${String.fromCharCode(closer)}"`, i);
			i = closer === CLOSE_OBJECT ? scanMemberName(text, i + 1).valueStart : skipSpace(text, i + 1);
			break;
		}
	}
}

/** Where the value of `step` starts inside the container at `at`, or undefined when it has none. */
function findStep(text: string, at: number, step: string): number | undefined {
	const c = text.charCodeAt(at);
	if (c === OPEN_OBJECT) {
		if (text.charCodeAt(skipSpace(text, at + 1)) === CLOSE_OBJECT) return undefined;
		let found: number | undefined;
		let i = at + 1;
		for (;;) {
			const { name, valueStart } = scanMemberName(text, i);
			// JSON.parse keeps the last of duplicate names: keep looking after a match.
			if (name === step) found = valueStart;
			i = skipSpace(text, skipValue(text, valueStart));
			if (text.charCodeAt(i) !== COMMA) return found;
			i++;
		}
	}
	if (c === OPEN_ARRAY) {
		if (!ARRAY_INDEX.test(step)) return undefined;
		const index = Number(step);
		let i = skipSpace(text, at + 1);
		if (text.charCodeAt(i) === CLOSE_ARRAY) return undefined;
		for (let position = 0; ; position++) {
			if (position === index) return i;
			i = skipSpace(text, skipValue(text, i));
			if (text.charCodeAt(i) !== COMMA) return undefined;
			i = skipSpace(text, i + 1);
		}
	}
	// A string or number has no members here; n8n may evaluate e.g. `.length`, which the raw body does not hold.
	return undefined;
}

function describeValue(text: string, at: number): RawJsonValue {
	const c = text.charCodeAt(at);
	if (c === OPEN_OBJECT) return { kind: 'object' };
	if (c === OPEN_ARRAY) return { kind: 'array' };
	if (c === QUOTE) return { kind: 'string', value: scanString(text, at, true).value };
	if (c === MINUS || isDigit(c))
		return { kind: 'number', text: text.slice(at, scanNumber(text, at)) };
	return {
		kind: 'literal',
		text: text.slice(at, scanScalar(text, at)) as 'true' | 'false' | 'null',
	};
}

/** What a lookup found: the value, nothing at that path, or a document that is not JSON. */
export type RawJsonLookup = { found: RawJsonValue } | { absent: true } | { invalid: string };

/**
 * The value at `path` in the JSON text `source` (`[]` is the whole document). Never throws: text
 * that is not one JSON value gives `invalid` with the reason.
 */
export function lookUpRawJson(source: string, path: readonly string[]): RawJsonLookup {
	try {
		const value = rawJsonValueAt(source, path);
		return value === undefined ? { absent: true } : { found: value };
	} catch (error) {
		// Only RawJsonError can come from this pure code over a string.
		return { invalid: (error as Error).message };
	}
}

/**
 * The value at `path` in the JSON text `source` (`[]` is the whole document), undefined when the
 * path leads nowhere. Throws RawJsonError when `source` is not one JSON value.
 */
export function rawJsonValueAt(source: string, path: readonly string[]): RawJsonValue | undefined {
	const text = source.charCodeAt(0) === BOM ? source.slice(1) : source;
	let at = skipSpace(text, 0);
	if (at >= text.length) fail('Empty document', at);
	const end = skipSpace(text, skipValue(text, at));
	if (end !== text.length) fail('Unexpected text after the JSON value', end);
	for (const step of path) {
		const next = findStep(text, at, step);
		if (next === undefined) return undefined;
		at = next;
	}
	return describeValue(text, at);
}

/**
 * The raw body's bytes as the text n8n parsed: UTF-8, with a byte order mark kept here so that
 * rawJsonValueAt drops exactly one, as n8n does (a second one makes n8n refuse the body).
 */
export function decodeRawBody(bytes: Uint8Array): string {
	return new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
}
