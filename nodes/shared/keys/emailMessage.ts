import { canonicalJson } from './fingerprint';
import { KeyError } from './KeyError';

/**
 * What the email presets read from an item of n8n's Email Trigger (IMAP) or Gmail Trigger: the
 * Message-ID header, else the text whose SHA-256 identifies the message. The item shapes, from
 * n8n-nodes-base (2.41.1) EmailReadImap/v2/utils.ts and Google/Gmail (GmailTrigger, GenericFunctions):
 * - IMAP "simple": headers decoded by @n8n/imap parseHeaders (lower-case names, folded lines
 *   joined), `from`, `to`, `cc`, `subject`, `date` at the top and every other header under
 *   `metadata` (`metadata['message-id']`); `textPlain`, `textHtml`; `attributes.uid`.
 * - IMAP "resolved": mailparser's parsed mail; `headers` maps each lower-case name to its whole raw
 *   line (`headers['message-id']` is "Message-ID: <…>", folding kept); `attributes.uid`.
 * - IMAP "raw": `{ raw }`, the body (IMAP BODY[TEXT]) without any header and without the UID.
 * - Gmail, Simplify on: Gmail's message (`id`, `threadId`, `labels`, `snippet`…) with only the From,
 *   To, Cc, Bcc and Subject headers: no Message-ID.
 * - Gmail, Simplify off: mailparser's parsed mail as in IMAP "resolved", plus Gmail's `id`.
 * Pure: the key planner page could bundle it.
 */

export type EmailTrigger = 'imap' | 'gmail';

/** How an email's key was made; said on Reserve's item as `idempotency.keyFrom`. */
export type EmailKeyFrom = 'messageId' | 'noMessageId' | 'malformedMessageId';

export interface EmailKeyInput {
	/** The Message-ID as sent, angle brackets included, when the item has a well-formed one. */
	messageId?: string;
	/** Otherwise: the text whose SHA-256 is the key. */
	digestText?: string;
	keyFrom: EmailKeyFrom;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
	value !== null && typeof value === 'object' && !Array.isArray(value);

/** Folding (CRLF before white space) undone, as RFC 5322 section 2.2.3 says to read a header. */
const unfold = (text: string) => text.replace(/\r?\n(?=[ \t])/g, '');

/**
 * The id-left "@" id-right of RFC 5322 section 3.6.4 (dot-atom-text, or a domain literal on the
 * right): no white space, no angle bracket, no second "@" outside a literal. UTF-8 allowed (RFC 6532).
 */
const MSG_ID = /^<[^\s<>@"()\\,;:[\]]+@(?:[^\s<>@"()\\,;:[\]]+|\[[^\s<>[\]\\]*\])>$/u;

/**
 * A Message-ID header's value as the key's id: CFWS around it removed (white space, folding and
 * comments), the rest exactly as sent, angle brackets included; the case of the domain part is kept
 * (RFC 5322 leaves the comparison to the sender's text). Undefined when it is not one msg-id.
 */
export function normalizeMessageId(value: string): string | undefined {
	let text = unfold(value).trim();
	// Comments before or after the msg-id (CFWS); none nest in practice, nested ones are refused.
	text = text
		.replace(/^(?:\([^()]*\)\s*)+/, '')
		.replace(/(?:\s*\([^()]*\))+$/, '')
		.trim();
	return MSG_ID.test(text) ? text : undefined;
}

/** A resolved item's raw header line without its name ("Message-ID: <a@b>" → " <a@b>"). */
function lineValue(line: string): string {
	const colon = line.indexOf(':');
	return colon < 0 ? line : line.slice(colon + 1);
}

/** The Message-ID header as the item holds it, or undefined when it has none. */
function messageIdHeader(json: Record<string, unknown>): string | undefined {
	// Simple: decoded value under metadata. Resolved: the raw line (mailparser's own `messageId`
	// adds missing brackets, so a malformed id could not be told apart).
	const fromMetadata = isObject(json.metadata) ? json.metadata['message-id'] : undefined;
	if (typeof fromMetadata === 'string') return fromMetadata;
	const line = isObject(json.headers) ? json.headers['message-id'] : undefined;
	if (typeof line === 'string') return lineValue(line);
	// Gmail (Simplify on) copies any header it fetched to the top level under its own spelling.
	for (const name of Object.keys(json))
		if (name.toLowerCase() === 'message-id' && typeof json[name] === 'string')
			return json[name] as string;
	return undefined;
}

/** The item as JSON text (a Date as its ISO text, as n8n stores the item), keys sorted. */
function itemText(json: Record<string, unknown>): string {
	return canonicalJson(JSON.parse(JSON.stringify(json)) as unknown);
}

const NOT_IMAP =
	'Connect Reserve to an Email Trigger (IMAP) in the Simple or Resolved format, or use a Custom key.';
const IMAP_RAW =
	'Switch the Email Trigger (IMAP) to the Simple or Resolved format: their items carry the Message-ID and the UID. The RAW format carries the body only, and two emails with the same body would share a key.';
const NOT_GMAIL = 'Connect Reserve to a Gmail Trigger, or use a Custom key.';

/** What identifies an IMAP item without a Message-ID: its UID and everything the trigger read of it. */
function imapDigestText(json: Record<string, unknown>): string {
	const uid = isObject(json.attributes) ? json.attributes.uid : undefined;
	if (typeof uid !== 'number' || !Number.isSafeInteger(uid) || uid <= 0) {
		throw new KeyError(
			'The email has no Message-ID and no UID (attributes.uid): nothing identifies it',
			'Use the Email Trigger (IMAP) of n8n 1.x or later in the Simple or Resolved format, whose items carry attributes.uid, or use a Custom key.',
		);
	}
	// The UID alone repeats when the mailbox is recreated (a new UIDVALIDITY, which the item does not
	// carry): with the headers and text the trigger read, two emails share a key only if identical.
	return `imap-uid ${uid} ${itemText(json)}`;
}

/** What identifies a Gmail item without a Message-ID: Gmail's message id, unique in a mailbox. */
function gmailDigestText(json: Record<string, unknown>): string {
	const id = json.id;
	if (typeof id !== 'string' || id === '') {
		throw new KeyError('The item has no Message-ID and no Gmail message id ("id")', NOT_GMAIL);
	}
	return `gmail-id ${id}`;
}

/** Reads an email trigger's item, or says why it is not one (never a key two emails could share). */
export function readEmailItem(json: unknown, trigger: EmailTrigger): EmailKeyInput {
	if (!isObject(json)) throw new KeyError('The item is not an email', NOT_IMAP);
	if (trigger === 'imap') {
		const simple = isObject(json.metadata) || typeof json.textPlain === 'string';
		// mailparser's fields beside `headers`: a webhook item has `headers` too, and none of these.
		const resolved =
			isObject(json.headers) &&
			('textAsHtml' in json || 'html' in json || 'messageId' in json || isObject(json.attributes));
		if (!simple && !resolved) {
			if (typeof json.raw === 'string')
				throw new KeyError(
					'The item is an Email Trigger (IMAP) RAW item: it has no Message-ID and no UID',
					IMAP_RAW,
				);
			throw new KeyError(
				'The item is not an Email Trigger (IMAP) item: it has no "metadata" or "headers"',
				NOT_IMAP,
			);
		}
	} else if (typeof json.id !== 'string' || !('threadId' in json)) {
		throw new KeyError(
			'The item is not a Gmail Trigger item: it has no Gmail "id" and "threadId"',
			NOT_GMAIL,
		);
	}
	const header = messageIdHeader(json);
	const messageId = header === undefined ? undefined : normalizeMessageId(header);
	if (messageId !== undefined) return { messageId, keyFrom: 'messageId' };
	const digestText = trigger === 'imap' ? imapDigestText(json) : gmailDigestText(json);
	return {
		digestText,
		keyFrom: header === undefined || header.trim() === '' ? 'noMessageId' : 'malformedMessageId',
	};
}
