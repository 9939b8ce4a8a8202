/**
 * Every Key Source of Idempotency Reserve, defined once: the option's value and label, its
 * subtitle, and where the event id is read. The node's options, its subtitle and the key lookup
 * are all made from this table, so they cannot drift apart.
 * Values are stored in saved workflows: never rename one.
 */

export type KeySource =
	| 'eventIdOrBodyHash'
	| 'stripe'
	| 'github'
	| 'shopify'
	| 'standardWebhooks'
	| 'svix'
	| 'slack'
	| 'bodyHash'
	| 'custom'
	| 'idempotencyKeyHeader';

/** Where a source finds the event id. Presets fall back to the body hash when it is missing or empty. */
export type IdLocation =
	/** The Event ID parameter (default `{{ $json.body.id }}`), else the body hash. */
	| { kind: 'eventIdParameter' }
	/** The Custom Key parameter, used as the whole key. */
	| { kind: 'customKey' }
	/** No id: always the body hash. */
	| { kind: 'none' }
	/** A field of the JSON body (`$json.body`), by path. */
	| { kind: 'body'; path: readonly string[] }
	/** The first of these headers that has a value, in this order (names as providers write them). */
	| { kind: 'headers'; names: readonly string[] }
	/** A client's Idempotency-Key request header (idempotencyKeyHeader.ts); no fallback: missing is an error. */
	| { kind: 'idempotencyKeyHeader' };

export interface KeySourceDefinition {
	value: KeySource;
	/** The option's label in the Key Source list. */
	name: string;
	/** What the node's subtitle shows for this source. */
	subtitle: string;
	location: IdLocation;
	/** The option's description; for presets it is written from `location`, see presetDescription. */
	description: string;
}

const FALLBACK = 'else SHA-256 of the raw body';

function presetDescription(location: IdLocation): string {
	if (location.kind === 'body') return `Key "evt:" + body.${location.path.join('.')}, ${FALLBACK}`;
	if (location.kind === 'headers') {
		const [first, ...others] = location.names;
		const alternatives = others.map((name) => `, else the ${name} header`).join('');
		return `Key "evt:" + the ${first} header${alternatives}, ${FALLBACK}`;
	}
	throw new Error(`Not a preset location: ${location.kind}`);
}

function preset(value: KeySource, name: string, location: IdLocation): KeySourceDefinition {
	return { value, name, subtitle: name, location, description: presetDescription(location) };
}

export const KEY_SOURCES: readonly KeySourceDefinition[] = [
	{
		value: 'eventIdOrBodyHash',
		name: 'Event ID, Else Body Hash',
		subtitle: 'Event ID or body hash',
		location: { kind: 'eventIdParameter' },
		description: 'Key "evt:" + the Event ID; when it is empty, "sha256:" + SHA-256 of the raw body',
	},
	preset('stripe', 'Stripe', { kind: 'body', path: ['id'] }),
	preset('github', 'GitHub', { kind: 'headers', names: ['X-GitHub-Delivery'] }),
	// X-Shopify-Event-Id is one event across subscriptions (Shopify's advice for dropping duplicates); X-Shopify-Webhook-Id is per delivery.
	preset('shopify', 'Shopify', {
		kind: 'headers',
		names: ['X-Shopify-Event-Id', 'X-Shopify-Webhook-Id'],
	}),
	preset('standardWebhooks', 'Standard Webhooks', { kind: 'headers', names: ['webhook-id'] }),
	preset('svix', 'Svix', { kind: 'headers', names: ['svix-id'] }),
	preset('slack', 'Slack', { kind: 'body', path: ['event_id'] }),
	{
		value: 'bodyHash',
		name: 'Body Hash Only',
		subtitle: 'Body hash',
		location: { kind: 'none' },
		description: 'Key "sha256:" + SHA-256 of the raw request body',
	},
	{
		value: 'idempotencyKeyHeader',
		name: 'Idempotency-Key Header (API Clients)',
		subtitle: 'Idempotency-Key header',
		location: { kind: 'idempotencyKeyHeader' },
		description:
			'Key "idk:" + the client\'s Idempotency-Key header (IETF draft: "…" or the bare token). A request without it is an item error. Scope it per client with Namespace.',
	},
	{
		value: 'custom',
		name: 'Custom',
		subtitle: 'Custom key',
		location: { kind: 'customKey' },
		description: 'Key is the Custom Key expression, used as it is (no prefix)',
	},
];

const BY_VALUE = new Map(KEY_SOURCES.map((definition) => [definition.value, definition]));

export function keySourceDefinition(value: string): KeySourceDefinition | undefined {
	return BY_VALUE.get(value as KeySource);
}
