/**
 * The key planner's logic, without the page: what key a delivery gets, the SQL the nodes run, and
 * the template configured with the same settings. Every rule comes from the nodes' own modules
 * (nodes/shared/keys, nodes/shared/store/sql.ts), bundled for the browser by scripts/build-planner.mjs;
 * only the parts of n8n around the node (the Webhook node's body parsing, Node.js's header handling,
 * reading a parameter) are followed here, as n8n 2.41 does them.
 */
import { reserveOutputNames } from '../nodes/IdempotencyReserve/helpers/reserveOutputs';
import {
	DEFAULT_FINGERPRINT_EXPRESSION,
	DEFAULT_LEASE_SECONDS,
	DEFAULT_MODE,
	defaultFingerprint,
	FINGERPRINT_OPTIONS,
	MODE_OPTIONS,
	type FingerprintSource,
	type ReserveMode,
} from '../nodes/IdempotencyReserve/helpers/reserveSettings';
import { headerMap, httpStatusOf } from '../nodes/shared/answers/storedResponse';
import { webhookAnswerOf } from '../nodes/shared/answers/webhookAnswer';
import { composeKey } from '../nodes/shared/keys/composeKey';
import { requiredExpressionFingerprintText } from '../nodes/shared/keys/fingerprint';
import { headerIdText, readHeader } from '../nodes/shared/keys/headerValue';
import { jsonPathOf, NEEDS_EVALUATION, readJsonPath } from '../nodes/shared/keys/jsonPath';
import { KeyError } from '../nodes/shared/keys/KeyError';
import {
	resolveKeyIdentity,
	settleNumericId,
	type KeyIdentity,
	type WebhookItemJson,
} from '../nodes/shared/keys/keySources';
import {
	KEY_SOURCES,
	keySourceDefinition,
	type KeySource,
} from '../nodes/shared/keys/keySourceTable';
import { namespaceText } from '../nodes/shared/keys/namespace';
import { keyIdIsUnsigned } from '../nodes/shared/keys/replayGuard';
import { decodeRawBody } from '../nodes/shared/keys/rawJson';
import { tableRef, type TableRef } from '../nodes/shared/store/identifiers';
import {
	addColumnsSql,
	completeSql,
	createTableSql,
	groupsNeeded,
	keySelectionDeleteSql,
	purgeCutoffSql,
	purgeKeysSelection,
	releaseOwnedSql,
	releaseSql,
	reserveLeaseSql,
	reserveWithFingerprintSql,
	reserveWithFirstSeenSql,
} from '../nodes/shared/store/sql';
import { SIGNATURE_SCHEMES } from '../nodes/shared/webhook/signatureSchemes';

export { KEY_SOURCES };

export type Mode = ReserveMode;

/** The node settings the page asks for. Expressions are as the node holds them, with or without the leading "=". */
export interface PlannerSettings {
	keySource: KeySource;
	/** The Event ID (default source) or Custom Key (custom source) parameter. */
	eventIdPath: string;
	namespace: string;
	schema: string;
	table: string;
	retentionDays: number;
	mode: Mode;
	leaseSeconds: number;
	/** The Fingerprint parameter; its default depends on the mode (fingerprintDefault). */
	fingerprint: FingerprintSource;
	/** The Fingerprint Fields parameter (Expression fingerprints only). */
	fingerprintExpression: string;
}

export const DEFAULT_SETTINGS: PlannerSettings = {
	keySource: 'eventIdOrBodyHash',
	eventIdPath: '{{ $json.body.id }}',
	namespace: '',
	schema: 'public',
	table: 'processed_events',
	retentionDays: 30,
	mode: DEFAULT_MODE,
	leaseSeconds: DEFAULT_LEASE_SECONDS,
	fingerprint: defaultFingerprint(DEFAULT_MODE),
	fingerprintExpression: DEFAULT_FINGERPRINT_EXPRESSION.replace(/^=/, ''),
};

/** The Fingerprint options, values and labels as the node has them. */
export const FINGERPRINT_SOURCES = FINGERPRINT_OPTIONS;

/** The Fingerprint a new node has in this mode: raw body in lease mode, none in simple mode. */
export function fingerprintDefault(mode: Mode): FingerprintSource {
	return defaultFingerprint(mode);
}

/** The Fingerprint Fields default, without the leading "=" (as the page's fields hold expressions). */
export const FINGERPRINT_EXPRESSION_DEFAULT = DEFAULT_FINGERPRINT_EXPRESSION.replace(/^=/, '');

/** The node's Mode options, values and labels as the node has them. */
export const MODES: ReadonlyArray<{ value: Mode; name: string }> = MODE_OPTIONS;

/** Does this source read the Event ID or Custom Key parameter, and what is it called in the node? */
export function parameterOfSource(
	source: KeySource,
): { name: 'eventId' | 'customKey'; label: string } | undefined {
	const location = keySourceDefinition(source)?.location.kind;
	if (location === 'eventIdParameter') return { name: 'eventId', label: 'Event ID' };
	if (location === 'customKey') return { name: 'customKey', label: 'Custom Key' };
	return undefined;
}

/** A field as the node stores it: text with `{{ … }}` is an expression (stored with a leading "="), anything else fixed text. */
function asNodeParameter(text: string): string {
	if (text.startsWith('=')) return text;
	return text.includes('{{') ? `=${text}` : text;
}

// ---- the request, as n8n's Webhook node hands it to the next node ----------------------------

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

export type ParsedBody =
	| { ok: true; body: unknown; note: string }
	/** n8n refuses the request before any workflow runs (422 "Failed to parse request body"). */
	| { ok: false; message: string };

/**
 * `$json.body` as n8n 2.41's webhook body parser makes it (packages/cli middlewares/body-parser):
 * an empty body or an unknown content type gives no body; application/json is JSON.parse of the
 * UTF-8 text after one byte order mark; text/plain the text; form fields parsed; XML is not read here.
 */
function parseWebhookBody(bytes: Uint8Array, contentType: string): ParsedBody {
	const [type, ...parameters] = contentType.split(';');
	const mediaType = type.toLowerCase();
	const charset = parameters
		.map((p) => p.trim().toLowerCase())
		.find((p) => p.startsWith('charset='));
	const charsetNote =
		charset !== undefined && !/^charset="?utf-?8"?$/.test(charset)
			? ` The page reads it as UTF-8, not ${charset.slice(8)}.`
			: '';
	if (bytes.length === 0)
		return { ok: true, body: undefined, note: 'The body is empty: n8n gives no $json.body.' };
	const text = decodeRawBody(bytes);
	const withoutBom = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
	if (mediaType === 'application/json') {
		try {
			return {
				ok: true,
				body: JSON.parse(withoutBom),
				note: `$json.body is JSON.parse of the body's UTF-8 text, as n8n parses it.${charsetNote}`,
			};
		} catch (error) {
			return {
				ok: false,
				message: `n8n refuses this request before the workflow runs (HTTP 422 "Failed to parse request body": ${(error as Error).message}), so no key is reserved. Send valid JSON, or another Content-Type.`,
			};
		}
	}
	if (mediaType === 'text/plain')
		return {
			ok: true,
			body: text,
			note: `Content-Type text/plain: $json.body is the text.${charsetNote}`,
		};
	if (mediaType === 'application/x-www-form-urlencoded') {
		const body: Record<string, string | string[]> = {};
		for (const [name, value] of new URLSearchParams(withoutBom)) {
			const previous = body[name];
			body[name] =
				previous === undefined
					? value
					: Array.isArray(previous)
						? [...previous, value]
						: [previous, value];
		}
		return { ok: true, body, note: 'Form fields: $json.body holds them by name.' };
	}
	if (mediaType.endsWith('/xml') || mediaType.endsWith('+xml')) {
		return {
			ok: true,
			body: XML_BODY,
			note: 'n8n parses XML bodies; the page does not read their fields.',
		};
	}
	return {
		ok: true,
		body: undefined,
		note: `Content-Type ${mediaType}: n8n gives no $json.body, only the raw bytes.`,
	};
}

/** Stands for an XML body, whose parsed form the page does not compute. */
const XML_BODY = Object.freeze({ '[XML body: parsed by n8n, not by this page]': true });

// ---- the key -----------------------------------------------------------------------------------

/** The fingerprint Reserve records with a new key for this delivery and settings. */
export type FingerprintPlan =
	/** SHA-256 hex, as stored in the key table's fingerprint column. */
	| { kind: 'value'; fingerprint: string; explain: string }
	/** No fingerprint is recorded (Fingerprint None). */
	| { kind: 'none'; explain: string }
	/** Only n8n's expression engine can tell. */
	| { kind: 'beyond'; explain: string };

export type KeyPlan =
	| { ok: true; key: string; explain: string; fingerprint: FingerprintPlan }
	| { ok: false; kind: 'itemError'; message: string; hint: string; explain: string }
	| { ok: false; kind: 'refused' | 'beyond' | 'failed'; message: string; explain: string };

export interface Delivery {
	/** The exact request bytes (the Webhook node's Raw Body). */
	bytes: Uint8Array;
	/** `Name: value` lines. */
	headersText: string;
}

/** Beyond the page: only n8n's expression engine knows the answer. */
class BeyondPage extends Error {}

/** A parameter as the node reads it per item (nodes/shared/n8n/itemParameter.ts): fixed text, or a plain `$json` path. */
function readParameter(stored: string, json: Record<string, unknown>, label: string): unknown {
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

/** Where the bodyPath of a parameter points inside $json.body (nodes/shared/n8n/itemParameter.ts, bodyPathOfParameter). */
function bodyPathOf(stored: string): string[] | undefined {
	const path = stored.startsWith('=') ? jsonPathOf(stored) : undefined;
	return path?.[0] === 'body' ? path.slice(1) : undefined;
}

function describeId(value: unknown): string {
	if (value === undefined) return 'missing';
	if (value === null) return 'null';
	if (value === '') return 'empty text';
	return JSON.stringify(value) ?? String(value);
}

/** Why the key came from the body hash, or where the id came from, in a sentence. */
function explainIdentity(
	source: KeySource,
	json: WebhookItemJson & Record<string, unknown>,
	identity: KeyIdentity,
	parameter: { stored: string; value: unknown } | undefined,
	numeric: boolean,
	byteCount: number,
): string {
	const definition = keySourceDefinition(source);
	const location = definition?.location;
	const exact = numeric
		? " It is a JSON number: its exact digits were read from the raw body, not from n8n's parsed (rounded) number."
		: '';
	const hash = `SHA-256 of the ${byteCount} raw body byte${byteCount === 1 ? '' : 's'} (the Webhook node's Raw Body, as sha256sum computes it)`;
	if (location === undefined) return '';
	switch (location.kind) {
		case 'none':
			return `${definition?.name}: ${hash}.`;
		case 'customKey':
			return `The Custom Key ${parameter?.stored.slice(parameter.stored.startsWith('=') ? 1 : 0)} as it is, no prefix.${exact}`;
		case 'eventIdParameter': {
			const shown = parameter?.stored.startsWith('=')
				? parameter.stored.slice(1)
				: `fixed text "${parameter?.stored}"`;
			if (identity.kind === 'eventId') return `"evt:" + the Event ID ${shown}.${exact}`;
			return `The Event ID ${shown} is ${describeId(parameter?.value)}, so the key fell back to "sha256:" + ${hash}.`;
		}
		case 'body': {
			const path = `body.${location.path.join('.')}`;
			if (identity.kind === 'eventId') return `${definition?.name}: "evt:" + ${path}.${exact}`;
			let value: unknown = json.body;
			for (const step of location.path)
				value =
					value !== null && typeof value === 'object'
						? (value as Record<string, unknown>)[step]
						: undefined;
			return `${definition?.name}: ${path} is ${describeId(value)}, so the key fell back to "sha256:" + ${hash}.`;
		}
		case 'headers': {
			for (const name of location.names) {
				const id = headerIdText(readHeader(json.headers, name.toLowerCase()), name);
				if (id !== undefined) return `${definition?.name}: "evt:" + the ${name} header.`;
			}
			const missing =
				location.names.length === 1
					? `the ${location.names[0]} header is missing or empty`
					: `none of the ${location.names.join(', ')} headers has a value`;
			return `${definition?.name}: ${missing}, so the key fell back to "sha256:" + ${hash}.`;
		}
		case 'amqpMessage':
			return `${definition?.name}: "evt:" + the message-id property, else "sha256:" + the content's SHA-256.`;
		case 'idempotencyKeyHeader':
			return `"idk:" + the client's Idempotency-Key header (quoted or bare), after the namespace that scopes it to the client.`;
	}
}

/**
 * The fingerprint Reserve records for this item (nodes/IdempotencyReserve/deriveItemFingerprint.ts):
 * Raw Body is the SHA-256 of the exact bytes (the template's Webhook node has Raw Body on); an
 * Expression is read as the node reads a plain `$json` path, and hashed by the node's own rule
 * (nodes/shared/keys/fingerprint.ts); any other expression is n8n's to evaluate.
 */
/**
 * The key above is Reserve's without a signature check. The downloaded workflow checks the preset's
 * own signature, and where that leaves the id header unsigned (GitHub, Shopify) its Replay Guard
 * keys on the signed body instead (nodes/shared/keys/replayGuard.ts): say so, with that key.
 */
async function replayGuardNote(
	source: KeySource,
	identity: KeyIdentity,
	namespace: string,
	bytes: Uint8Array,
	sha256Hex: (bytes: Uint8Array) => Promise<string>,
): Promise<string> {
	if (identity.kind !== 'eventId' || !(source in SIGNATURE_SCHEMES)) return '';
	const scheme = SIGNATURE_SCHEMES[source as keyof typeof SIGNATURE_SCHEMES];
	const location = keySourceDefinition(source)?.location;
	if (location === undefined || !keyIdIsUnsigned(location, scheme)) return '';
	const guarded = composeKey({ kind: 'bodyHash' }, namespace, await sha256Hex(bytes));
	return `In the downloaded workflow Reserve checks ${scheme.label}'s signature, which does not cover this header: its Replay Guard (Options) keys the delivery on the signed body instead, "${guarded}", so a copy resent under a new id is a duplicate.`;
}

async function planFingerprint(
	settings: PlannerSettings,
	json: Record<string, unknown>,
	xmlBody: boolean,
	bytes: Uint8Array,
	sha256Hex: (bytes: Uint8Array) => Promise<string>,
	bodyHashHex: string | undefined,
): Promise<FingerprintPlan> {
	if (settings.fingerprint === 'none')
		return {
			kind: 'none',
			explain:
				'Fingerprint None: no fingerprint is recorded, so a key reused with another payload is a plain duplicate.',
		};
	if (settings.fingerprint === 'rawBody') {
		const n = bytes.length;
		return {
			kind: 'value',
			fingerprint: bodyHashHex ?? (await sha256Hex(bytes)),
			explain: `Raw Body: SHA-256 of the ${n} raw body byte${n === 1 ? '' : 's'}, the same bytes the body-hash key uses. A duplicate with another fingerprint is a mismatch (idempotency.mismatch), never new.`,
		};
	}
	const stored = asNodeParameter(settings.fingerprintExpression);
	if (xmlBody && /\$json\.body/.test(stored))
		return {
			kind: 'beyond',
			explain:
				'The Fingerprint Fields read an XML body: n8n parses XML (xml2js), this page does not.',
		};
	let value: unknown;
	try {
		value = readParameter(stored, json, 'Fingerprint Fields');
	} catch (error) {
		// readParameter throws only BeyondPage: an expression that n8n's engine evaluates.
		return { kind: 'beyond', explain: (error as Error).message };
	}
	// Nothing there is the node's item error (invalid-fingerprint, 400), thrown as the node throws it.
	const text = requiredExpressionFingerprintText(value);
	return {
		kind: 'value',
		fingerprint: await sha256Hex(new TextEncoder().encode(text)),
		explain: `Expression: SHA-256 of ${typeof value === 'string' ? 'the text' : 'the canonical JSON (object keys sorted)'} of ${stored.startsWith('=') ? stored.slice(1) : `fixed text "${stored}"`}, ${text.length > 120 ? `${JSON.stringify(text.slice(0, 120))}…` : JSON.stringify(text)}.`,
	};
}

/**
 * The key Idempotency Reserve derives for this delivery (nodes/IdempotencyReserve/deriveItemKey.ts),
 * with the Webhook node's Raw Body on, as in the template. `sha256Hex` hashes bytes (crypto.subtle in the page).
 */
export async function planKey(
	delivery: Delivery,
	settings: PlannerSettings,
	sha256Hex: (bytes: Uint8Array) => Promise<string>,
): Promise<KeyPlan> {
	const { headers, ignored } = parseHeaders(delivery.headersText);
	const notes: string[] = [];
	if (ignored.length > 0)
		notes.push(
			`Ignored ${ignored.length} line${ignored.length === 1 ? '' : 's'} that ${ignored.length === 1 ? 'is' : 'are'} not "Name: value".`,
		);
	let contentType = headers['content-type'];
	if (contentType === undefined) {
		contentType = 'application/json';
		headers['content-type'] = contentType;
		notes.push(
			'No Content-Type given: the page assumes application/json, as webhook senders send.',
		);
	}
	const parsed = parseWebhookBody(delivery.bytes, String(contentType));
	if (!parsed.ok)
		return { ok: false, kind: 'refused', message: parsed.message, explain: notes.join(' ') };
	notes.push(parsed.note);
	const json = {
		headers,
		params: {},
		query: {},
		body: parsed.body,
		webhookUrl: 'http://localhost:5678/webhook/idempotent-webhook',
		executionMode: 'production',
	};
	const parameterInfo = parameterOfSource(settings.keySource);
	let parameter: { stored: string; value: unknown } | undefined;
	try {
		const readsBody =
			keySourceDefinition(settings.keySource)?.location.kind === 'body' ||
			(parameterInfo !== undefined && /\$json\.body/.test(settings.eventIdPath));
		if (parsed.body === XML_BODY && readsBody) {
			throw new BeyondPage(
				'This key reads a field of an XML body: n8n parses XML (xml2js), this page does not.',
			);
		}
		if (parameterInfo !== undefined) {
			const stored = asNodeParameter(settings.eventIdPath);
			parameter = { stored, value: readParameter(stored, json, parameterInfo.label) };
		}
		// In the node's order (deriveItemKey.ts), so that an item with two problems shows the node's message.
		const resolution = resolveKeyIdentity(
			settings.keySource,
			json,
			parameter?.value,
			parameter === undefined ? undefined : bodyPathOf(parameter.stored),
		);
		const namespace = namespaceText(
			readParameter(asNodeParameter(settings.namespace), json, 'Namespace'),
		);
		const numeric = resolution.kind === 'number';
		// The template's Webhook node has Raw Body on: the exact bytes are always there.
		// A webhook request is never a RabbitMQ message: resolveKeyIdentity refuses it before this.
		if (resolution.kind === 'messageContent')
			throw new KeyError('The planner models webhook requests, not broker messages', '');
		const identity =
			resolution.kind === 'number' ? settleNumericId(resolution, delivery.bytes) : resolution;
		const hex = identity.kind === 'bodyHash' ? await sha256Hex(delivery.bytes) : undefined;
		const key = composeKey(identity, namespace, hex);
		const fingerprint = await planFingerprint(
			settings,
			json,
			parsed.body === XML_BODY,
			delivery.bytes,
			sha256Hex,
			hex,
		);
		const explain = [
			explainIdentity(
				settings.keySource,
				json,
				identity,
				parameter,
				numeric,
				delivery.bytes.length,
			),
			namespace === '' ? '' : `Namespace "${namespace}" + ":" in front.`,
			await replayGuardNote(settings.keySource, identity, namespace, delivery.bytes, sha256Hex),
			...notes,
		];
		return {
			ok: true,
			key,
			explain: explain.filter((part) => part !== '').join(' '),
			fingerprint,
		};
	} catch (error) {
		if (error instanceof KeyError) {
			return {
				ok: false,
				kind: 'itemError',
				message: error.message,
				hint: error.hint,
				explain: notes.join(' '),
			};
		}
		if (error instanceof BeyondPage)
			return { ok: false, kind: 'beyond', message: error.message, explain: notes.join(' ') };
		// Not expected from the key modules: shown as it is rather than hidden.
		return {
			ok: false,
			kind: 'failed',
			message: `The page failed: ${(error as Error).message}`,
			explain: notes.join(' '),
		};
	}
}

// ---- the SQL -----------------------------------------------------------------------------------

/** The batch size Purge Keys uses by default, and the purge template's. */
const PURGE_BATCH_SIZE = 1000;

export interface SqlStatement {
	title: string;
	sql: string;
	/** The bind parameters as the node sends them ($1, $2 …), described, with this delivery's values. */
	parameters: Array<{ name: string; type: string; value: string }>;
}

/** A value for a `--` comment: JSON text has no line break, so it cannot end the comment. */
function commentValue(value: unknown): string {
	return JSON.stringify(value) ?? 'undefined';
}

/**
 * The statements the nodes run for these settings, from nodes/shared/store/sql.ts, with the bind
 * parameters they send. `key` is this delivery's key, for the comments; undefined when there is none;
 * `fingerprint` the one recorded with it (null: none, undefined: only n8n can tell).
 */
export function planStatements(
	settings: PlannerSettings,
	key: string | undefined,
	fingerprint?: string | null,
): SqlStatement[] {
	const ref: TableRef = tableRef(settings.schema, settings.table);
	const lease = settings.mode === 'lease';
	const fingerprints = settings.fingerprint !== 'none';
	const keys = commentValue(key === undefined ? [] : [key]);
	const fingerprintValues = `${key === undefined ? '[]' : fingerprint === undefined ? '[<evaluated by n8n>]' : commentValue([fingerprint])} (each key's request fingerprint, aligned with the keys)`;
	const token = '<a random token per execution>';
	const statements: SqlStatement[] = [
		{
			title: `Create the table and its index (Create Table If Missing, on by default; once per table)${lease ? ', with the lease, fingerprint and response columns' : fingerprints ? ', with the fingerprint column' : ''}`,
			sql: createTableSql(ref, { lease, fingerprint: fingerprints }),
			parameters: [],
		},
	];
	// The column groups Reserve needs (the nodes' own rule), for a table made before.
	const groups = groupsNeeded({ lease, fingerprint: fingerprints });
	if (groups.length > 0) {
		statements.push({
			title: `A table that exists without the ${groups.join(' and ')} column${groups.length === 1 && !lease ? '' : 's'} (made ${lease ? 'in simple mode ' : ''}by hand or before): the node adds them, or asks the table owner to run`,
			sql: addColumnsSql(ref, groups),
			parameters: [],
		});
	}
	if (lease) {
		statements.push({
			title:
				'Reserve (Idempotency Reserve, lease mode): all keys of one execution in one statement',
			sql: reserveLeaseSql(ref, { fingerprint: fingerprints }),
			parameters: [
				{
					name: '$1',
					type: 'text[]',
					value: `${keys} (the execution's keys, distinct and sorted)`,
				},
				{ name: '$2', type: 'text', value: `${token} (the owner token of this reservation)` },
				{
					name: '$3',
					type: 'float8',
					value: `${commentValue(settings.leaseSeconds)} (Lease, seconds)`,
				},
				...(fingerprints ? [{ name: '$4', type: 'text[]', value: fingerprintValues }] : []),
			],
		});
		statements.push({
			title:
				'Complete (Idempotency Complete Key, after the business step): only where the token still owns the key',
			sql: completeSql(ref),
			parameters: [
				{ name: '$1', type: 'text[]', value: `${keys} (keys)` },
				{
					name: '$2',
					type: 'text[]',
					value: `[${JSON.stringify(token)}] (each key's token, from Reserve's output)`,
				},
			],
		});
		statements.push({
			title:
				"Release (Release Key, on the business step's error path): only while the token still owns the key",
			sql: releaseOwnedSql(ref),
			parameters: [
				{ name: '$1', type: 'text[]', value: `${keys} (keys)` },
				{
					name: '$2',
					type: 'text[]',
					value: `[${JSON.stringify(token)}] (each key's token; null deletes the key whoever holds it)`,
				},
			],
		});
	} else {
		statements.push({
			title: `Reserve (Idempotency Reserve, simple mode, ${fingerprints ? 'recording fingerprints' : 'Look Up First Seen Time on'}): all keys of one execution in one statement`,
			sql: fingerprints ? reserveWithFingerprintSql(ref) : reserveWithFirstSeenSql(ref),
			parameters: [
				{
					name: '$1',
					type: 'text[]',
					value: `${keys} (the execution's keys, distinct and sorted)`,
				},
				...(fingerprints ? [{ name: '$2', type: 'text[]', value: fingerprintValues }] : []),
			],
		});
		statements.push({
			title: "Release (Release Key, on the business step's error path)",
			sql: releaseSql(ref),
			parameters: [{ name: '$1', type: 'text[]', value: `${keys} (keys)` }],
		});
	}
	const namespace = settings.namespace;
	statements.push({
		title: 'Purge (Purge Keys, on a schedule): the cutoff, once, in database time',
		sql: purgeCutoffSql(),
		parameters: [
			{
				name: '$1',
				type: 'interval',
				value: `${commentValue(`${settings.retentionDays} days`)} (Keep Keys For)`,
			},
		],
	});
	// Only Namespace set to Reserve's namespace: this workflow's keys (none: every key).
	const withinPrefix = namespace !== '';
	statements.push({
		title: `Purge: then batches of ${PURGE_BATCH_SIZE} until one deletes fewer`,
		sql: keySelectionDeleteSql(ref, purgeKeysSelection({ lease, withinPrefix })),
		parameters: [
			{ name: '$1', type: 'timestamptz', value: 'the cutoff from the statement above' },
			...(withinPrefix
				? [
						{
							name: '$2',
							type: 'text',
							value: `${namespace.includes('{{') ? '"<namespace>:"' : commentValue(`${namespace}:`)} (Only Namespace; left empty, the statement has no $2 and purges every key)`,
						},
					]
				: []),
			{
				name: withinPrefix ? '$3' : '$2',
				type: 'integer',
				value: `${PURGE_BATCH_SIZE} (Batch Size)`,
			},
		],
	});
	return statements;
}

/** The statements as one SQL text: each with its title and parameters as comments, never spliced into the SQL. */
export function sqlText(statements: readonly SqlStatement[]): string {
	return statements
		.map(({ title, sql, parameters }) => {
			const comments = [
				`-- ${title}`,
				...parameters.map((p) => `-- ${p.name} (${p.type}) = ${p.value}`),
			];
			return `${comments.join('\n')}\n${sql}${sql.trimEnd().endsWith(';') ? '' : ';'}`;
		})
		.join('\n\n');
}

// ---- the template ------------------------------------------------------------------------------

interface WorkflowNode {
	name: string;
	type: string;
	parameters: Record<string, unknown>;
	[other: string]: unknown;
}
interface Connection {
	node: string;
	type: string;
	index: number;
}
interface Workflow {
	nodes: WorkflowNode[];
	connections: Record<string, { main: Connection[][] }>;
	[other: string]: unknown;
}

const PACKAGE = 'n8n-nodes-idempotency';

function outputsOf(workflow: Workflow, name: string): Connection[][] {
	return workflow.connections[name]?.main ?? [];
}

function removeNode(workflow: Workflow, name: string): void {
	workflow.nodes = workflow.nodes.filter((node) => node.name !== name);
	delete workflow.connections[name];
}

/**
 * The templates the page offers. `webhook` (workflows/idempotent-webhook.json) takes every setting.
 * `api` (workflows/idempotent-api.json) is built around the Idempotency-Key header and lease mode
 * (Complete Key stores the first answer): it keeps its key source and mode, and its per-caller
 * namespace expression unless the page sets a namespace.
 */
export type TemplateKind = 'webhook' | 'api';

/**
 * A template with these settings on its nodes. The webhook template in simple mode leaves out
 * Complete Key and the in-flight branch (nothing is ever in flight there): a Respond to Webhook node
 * with Complete Key's answer follows the business step, and every duplicate gets 200 "duplicate".
 */
export function configureWorkflow(
	template: unknown,
	settings: PlannerSettings,
	kind: TemplateKind = 'webhook',
): Workflow {
	const workflow = JSON.parse(JSON.stringify(template)) as Workflow;
	const reserve = workflow.nodes.find((node) => node.type === `${PACKAGE}.idempotencyReserve`);
	if (reserve === undefined) throw new Error('The template has no Idempotency Reserve node');
	const templateParameters = reserve.parameters;
	const parameters: Record<string, unknown> = { ...templateParameters };
	if (kind === 'webhook') {
		delete parameters.eventId;
		delete parameters.customKey;
		parameters.mode = settings.mode;
		parameters.keySource = settings.keySource;
		const parameter = parameterOfSource(settings.keySource);
		if (parameter !== undefined) parameters[parameter.name] = asNodeParameter(settings.eventIdPath);
	}
	if (parameters.mode === 'lease') parameters.leaseSeconds = settings.leaseSeconds;
	else delete parameters.leaseSeconds;
	parameters.fingerprint = settings.fingerprint;
	if (settings.fingerprint === 'expression')
		parameters.fingerprintExpression = asNodeParameter(settings.fingerprintExpression);
	else delete parameters.fingerprintExpression;
	if (kind === 'webhook' || settings.namespace !== '')
		parameters.namespace = asNodeParameter(settings.namespace);
	parameters.schema = settings.schema;
	parameters.table = settings.table;
	reserve.parameters = parameters;
	for (const node of workflow.nodes) {
		// Complete Key, Release Key: the nodes of the package that name the key table.
		if (node !== reserve && node.type.startsWith(`${PACKAGE}.`) && 'table' in node.parameters) {
			node.parameters = { ...node.parameters, schema: settings.schema, table: settings.table };
		}
	}
	// The signature and the key come from one sender (README, "Switching the provider"): a preset
	// that names a sender also sets the scheme Reserve verifies.
	if (kind === 'webhook' && settings.keySource in SIGNATURE_SCHEMES) {
		const verifies = typeof parameters.signature === 'string' && parameters.signature !== 'none';
		if (verifies) parameters.signature = settings.keySource;
	}
	if (kind === 'webhook' && settings.mode === 'simple') {
		const complete = workflow.nodes.find((node) => node.type === `${PACKAGE}.idempotencyComplete`);
		if (complete !== undefined) {
			const answering = respondNodeAnsweringAs(complete);
			if (answering !== undefined) workflow.nodes.push(answering);
			const after = answering
				? [{ node: answering.name, type: 'main', index: 0 }]
				: (outputsOf(workflow, complete.name)[0] ?? []);
			for (const outputs of Object.values(workflow.connections)) {
				for (const output of outputs.main) {
					const at = output.findIndex((c) => c.node === complete.name);
					if (at !== -1) output.splice(at, 1, ...after);
				}
			}
			removeNode(workflow, complete.name);
		}
	}
	// Simple mode has no in-flight output, and no fingerprint no reused-key output.
	followReserveOutputs(workflow, reserve, templateParameters);
	return workflow;
}

/**
 * Where Complete Key answers the webhook itself (Respond to Webhook), the Respond to Webhook node that
 * takes its place when simple mode leaves it out: the same status, body and headers.
 */
function respondNodeAnsweringAs(complete: WorkflowNode): WorkflowNode | undefined {
	const parameters = complete.parameters;
	if (parameters.respondToWebhook !== true) return undefined;
	const entries =
		(parameters.responseHeaders as { entries?: unknown[] } | undefined)?.entries ?? [];
	const headers = Object.fromEntries(
		(entries as Array<{ name: string; value: unknown }>).map(({ name, value }) => [name, value]),
	);
	const body = parameters.responseBody ?? '';
	const statusCode = httpStatusOf(parameters.responseStatusCode ?? 200);
	// An expression's value is known only when it runs: then only the user's headers go along.
	const isExpression = typeof body === 'string' && body.startsWith('=');
	const sentHeaders = isExpression
		? headerMap(headers)
		: webhookAnswerOf(statusCode, headers, body).headers;
	return {
		parameters: {
			respondWith: 'text',
			responseBody: body,
			options: {
				responseCode: statusCode,
				responseHeaders: {
					entries: Object.entries(sentHeaders).map(([name, value]) => ({ name, value })),
				},
			},
		},
		id: `${String(complete.id)}-respond`,
		name: `Respond ${statusCode}`,
		type: 'n8n-nodes-base.respondToWebhook',
		typeVersion: 1.5,
		position: complete.position,
	};
}

/**
 * Reserve's connections laid out again by output name once its settings changed which outputs it
 * has (n8n connects outputs by position): an output it no longer has loses its branch (the
 * templates' such branches are one Respond node each), and the error output stays last.
 */
function followReserveOutputs(
	workflow: Workflow,
	reserve: WorkflowNode,
	templateParameters: Record<string, unknown>,
): void {
	const version = Number(reserve.typeVersion);
	const before = reserveOutputNames(templateParameters, version);
	const after = reserveOutputNames(reserve.parameters, version);
	const connections = outputsOf(workflow, reserve.name);
	const branchOf = new Map(before.map((name, at) => [name, connections[at] ?? []]));
	for (const [name, branch] of branchOf) {
		if (!after.includes(name))
			for (const connection of branch) removeNode(workflow, connection.node);
	}
	const errorOutput = connections.slice(before.length);
	workflow.connections[reserve.name] = {
		main: [...after.map((name) => branchOf.get(name) ?? []), ...errorOutput],
	};
}
