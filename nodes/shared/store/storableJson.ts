/**
 * Any JSON value as text PostgreSQL's jsonb accepts, and back, exactly. jsonb refuses the text
 * JSON.stringify gives for a NUL ("\u0000") or a lone surrogate ("\ud800") anywhere, keys included,
 * and nesting deeper than its stack allows. Such a value is stored as a wrapper holding its JSON
 * text as one jsonb string (in which those escapes are plain characters). A step record is written
 * after its side effect, so refusing the value there would leave the key in flight and make every
 * retry repeat the effect: encoding is the only safe answer.
 */

/** The wrapper's one key. A user value that looks like the wrapper is wrapped too, so decoding is unambiguous. */
export const WRAPPER_KEY = '$idempotencyJson';

/** Deeper than this, a value is wrapped: PostgreSQL's jsonb parser runs out of stack between 10,000 and 20,000 levels. */
export const MAX_PLAIN_DEPTH = 1000;

const WRAPPER_PREFIX = `{${JSON.stringify(WRAPPER_KEY)}:`;
const BACKSLASH = 0x5c;
const QUOTE = 0x22;

/**
 * Whether jsonb would refuse JSON.stringify's text: a \u escape of NUL or of a surrogate (it only
 * escapes lone ones; a valid pair comes as its characters), or nesting past MAX_PLAIN_DEPTH. One
 * pass over the text, strings skipped by their quotes and escapes.
 */
export function jsonbRefuses(text: string): boolean {
	let depth = 0;
	let inString = false;
	for (let index = 0; index < text.length; index++) {
		const code = text.charCodeAt(index);
		if (inString) {
			if (code === QUOTE) inString = false;
			else if (code === BACKSLASH) {
				if (text[index + 1] === 'u') {
					const hex = text.slice(index + 2, index + 6).toLowerCase();
					if (hex === '0000' || (hex[0] === 'd' && '89abcdef'.includes(hex[1]))) return true;
					index += 5;
				} else index += 1;
			}
			continue;
		}
		if (code === QUOTE) inString = true;
		else if (code === 0x5b || code === 0x7b) {
			depth++;
			if (depth > MAX_PLAIN_DEPTH) return true;
		} else if (code === 0x5d || code === 0x7d) depth--;
	}
	return false;
}

function looksLikeWrapper(value: unknown): boolean {
	if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
	const keys = Object.keys(value);
	return keys.length === 1 && keys[0] === WRAPPER_KEY;
}

/**
 * The JSON text to store for `value` in a jsonb column: its JSON as it is where jsonb accepts it,
 * else the wrapper. `undefined` (nothing to store) is stored as null.
 */
export function toStorableJson(value: unknown): string {
	const text = JSON.stringify(value) ?? 'null';
	// Only a text starting with the wrapper's key can be one: parsed again only then.
	const wrapperLike =
		text.startsWith(WRAPPER_PREFIX) && looksLikeWrapper(JSON.parse(text) as unknown);
	if (!wrapperLike && !jsonbRefuses(text)) return text;
	return JSON.stringify({ [WRAPPER_KEY]: text });
}

/** A value read from a jsonb column that toStorableJson wrote (already parsed by the driver), as it was given. */
export function fromStorableJson(stored: unknown): unknown {
	if (!looksLikeWrapper(stored)) return stored;
	const text = (stored as Record<string, unknown>)[WRAPPER_KEY];
	if (typeof text !== 'string') return stored;
	return JSON.parse(text) as unknown;
}
