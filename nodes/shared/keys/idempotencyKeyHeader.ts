import { KeyError } from './KeyError';

/**
 * The Idempotency-Key request header of the IETF HTTPAPI draft (draft-ietf-httpapi-idempotency-key-header):
 * its value is a Structured Field String, `Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"`.
 * Many clients (Stripe's libraries among them) send the bare token instead, `Idempotency-Key: 8e03…`;
 * both are accepted and give the same key. Node.js joins a header sent twice with ", ": the same value
 * twice is that value, two different values are an item error.
 */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

/** Longer keys are refused: a UUID is 36 characters, and a client key is an id, not a payload. */
export const MAX_CLIENT_KEY_LENGTH = 255;

const EXAMPLE = 'Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"';
const FORMS = `Send one value per request, the same on its retries: ${EXAMPLE} (or the bare token without quotes).`;

function malformed(detail: string): KeyError {
	return new KeyError(
		`The ${IDEMPOTENCY_KEY_HEADER} header is malformed: ${detail}`,
		FORMS,
		'invalid-idempotency-key',
	);
}

/** Reads one sf-string starting at `start` (a `"`); returns its text and where it ended. */
function readQuoted(text: string, start: number): { value: string; end: number } {
	let value = '';
	for (let index = start + 1; index < text.length; index++) {
		const char = text[index];
		if (char === '\\') {
			const next = text[index + 1];
			if (next !== '"' && next !== '\\') throw malformed('a backslash escapes only " or \\');
			value += next;
			index++;
		} else if (char === '"') {
			return { value, end: index + 1 };
		} else {
			const code = char.charCodeAt(0);
			if (code < 0x20 || code > 0x7e)
				throw malformed('a Structured Field String holds printable ASCII only');
			value += char;
		}
	}
	throw malformed('the quoted string is not closed');
}

/** The members of the header's value: sf-strings and bare tokens, separated by commas. */
function members(text: string): string[] {
	const found: string[] = [];
	let index = 0;
	while (index <= text.length) {
		while (text[index] === ' ' || text[index] === '\t') index++;
		let value: string;
		if (text[index] === '"') {
			const quoted = readQuoted(text, index);
			value = quoted.value;
			index = quoted.end;
		} else {
			const comma = text.indexOf(',', index);
			const end = comma < 0 ? text.length : comma;
			value = text.slice(index, end).trim();
			if (/[^\x21-\x7e]|"/.test(value))
				throw malformed('a bare key holds visible ASCII only, without spaces or quotes');
			index = end;
		}
		found.push(value);
		while (text[index] === ' ' || text[index] === '\t') index++;
		if (index >= text.length) break;
		if (text[index] !== ',') throw malformed(`unexpected "${text[index]}" after the key`);
		index++;
	}
	return found;
}

/** The client's key from the header's value as the Webhook node gives it; an item error when it is unusable. */
export function clientKeyFromHeader(value: unknown): string {
	if (value === undefined || value === null)
		throw new KeyError(
			`The ${IDEMPOTENCY_KEY_HEADER} header is missing`,
			`This endpoint needs it (answer 400). ${FORMS}`,
			'invalid-idempotency-key',
		);
	const text = (Array.isArray(value) ? value.map(String).join(', ') : String(value)).trim();
	const distinct = [...new Set(members(text))];
	if (distinct.length > 1)
		throw new KeyError(
			`The ${IDEMPOTENCY_KEY_HEADER} header was sent ${distinct.length} times with different values`,
			FORMS,
			'invalid-idempotency-key',
		);
	const key = distinct[0] ?? '';
	if (key === '')
		throw new KeyError(
			`The ${IDEMPOTENCY_KEY_HEADER} header is empty`,
			FORMS,
			'invalid-idempotency-key',
		);
	if (key.length > MAX_CLIENT_KEY_LENGTH)
		throw new KeyError(
			`The ${IDEMPOTENCY_KEY_HEADER} header is ${key.length} characters long; at most ${MAX_CLIENT_KEY_LENGTH} are accepted`,
			FORMS,
			'invalid-idempotency-key',
		);
	return key;
}
