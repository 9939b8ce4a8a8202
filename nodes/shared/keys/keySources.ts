import { KeyError } from './KeyError';

/** Where the key of an event comes from. Values are stored in workflows: never rename them. */
export type KeySource =
	| 'eventIdOrBodyHash'
	| 'stripe'
	| 'github'
	| 'shopify'
	| 'standardWebhooks'
	| 'bodyHash'
	| 'custom';

export const EVENT_ID_PREFIX = 'evt:';
export const BODY_HASH_PREFIX = 'sha256:';

/** What a webhook item offers to key on: the Webhook node's `$json.headers` and `$json.body`. */
export interface WebhookItemJson {
	headers?: unknown;
	body?: unknown;
}

/** The key before the namespace: an event id, a custom key, or "hash the raw body". */
export type KeyIdentity =
	| { kind: 'eventId'; id: string }
	| { kind: 'custom'; key: string }
	| { kind: 'bodyHash' };

/** Each preset names the header that carries the delivery's event id; Stripe keeps it in the body. */
const PRESET_HEADERS: Partial<Record<KeySource, string>> = {
	github: 'x-github-delivery',
	shopify: 'x-shopify-webhook-id',
	standardWebhooks: 'webhook-id',
};

export function readHeader(headers: unknown, name: string): unknown {
	if (headers === null || typeof headers !== 'object') return undefined;
	const record = headers as Record<string, unknown>;
	if (name in record) return record[name];
	// Express lower-cases header names, but items built by hand or by other triggers may not.
	const match = Object.keys(record).find((key) => key.toLowerCase() === name);
	return match === undefined ? undefined : record[match];
}

function readBodyId(body: unknown): unknown {
	if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
	return (body as Record<string, unknown>).id;
}

/**
 * Turns an id value into the string that goes into the key, or undefined when it is absent
 * (the caller then falls back to the body hash). Anything that is not text or a number is
 * refused: stringifying an object would give every event the same key.
 */
export function normalizeId(value: unknown, what: string): string | undefined {
	if (value === undefined || value === null || value === '') return undefined;
	if (typeof value === 'string') return value;
	if (typeof value === 'number') {
		if (!Number.isFinite(value)) {
			throw new KeyError(`The ${what} is ${String(value)}, which cannot identify an event`, 'Use a finite number or a text id.');
		}
		return String(value);
	}
	if (typeof value === 'bigint') return value.toString();
	const kind = Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;
	throw new KeyError(
		`The ${what} is ${kind}, not a text or number`,
		'Point the key at a single text or number field, for example {{ $json.body.id }}.',
	);
}

/** Decides what the key is made of, given the item and (for the default and custom sources) the evaluated parameter. */
export function resolveKeyIdentity(
	source: KeySource,
	item: WebhookItemJson,
	parameterValue?: unknown,
): KeyIdentity {
	switch (source) {
		case 'bodyHash':
			return { kind: 'bodyHash' };
		case 'custom': {
			const key = normalizeId(parameterValue, 'custom key');
			if (key === undefined) {
				throw new KeyError('The custom key is empty', 'Make the Custom Key expression return a non-empty text or number for every item.');
			}
			return { kind: 'custom', key };
		}
		case 'eventIdOrBodyHash':
			return identityFromId(normalizeId(parameterValue, 'event id'));
		case 'stripe':
			return identityFromId(normalizeId(readBodyId(item.body), 'event id (body.id)'));
		default: {
			const header = PRESET_HEADERS[source];
			if (header === undefined) {
				throw new KeyError(`Unknown key source "${String(source)}"`, 'Pick a key source from the list.');
			}
			return identityFromId(normalizeId(readHeader(item.headers, header), `${header} header`));
		}
	}
}

function identityFromId(id: string | undefined): KeyIdentity {
	return id === undefined ? { kind: 'bodyHash' } : { kind: 'eventId', id };
}
