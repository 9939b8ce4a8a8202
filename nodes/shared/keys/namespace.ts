import { normalizeId } from './idText';
import { KeyError } from './KeyError';
import { PROVIDERS } from '../webhook/providers';
import {
	BODY_HASH_PREFIX,
	CLIENT_KEY_PREFIX,
	EMAIL_SCOPE,
	EVENT_ID_PREFIX,
	SIGNED_CONTENT_PREFIX,
} from './prefixes';

/**
 * A key is `<namespace>:<key>`, or the key alone when the namespace is empty (the hand-built
 * pattern's keys, unchanged). For that join to be one-to-one:
 * - a namespace has no ":", so the text before the first ":" of a namespaced key is its namespace;
 * - a namespace is not "evt", "sha256", "signed", "idk", "email" or a provider's value: an empty namespace's
 *   keys start with one of those and ":", and `evt` + `evt:x` would be the key of the id `evt:x`
 *   without a namespace (`svix` + `evt:x` that of Svix's event `evt:x`).
 * A Custom key without a namespace is used exactly as it is, so it shares the key space with every
 * other key of the table: give each workflow with Custom keys a namespace of its own.
 * Reserve and Purge share this rule, so Purge's "Only Namespace" means exactly Reserve's namespace.
 */

const RESERVED: readonly string[] = [
	...[EVENT_ID_PREFIX, BODY_HASH_PREFIX, SIGNED_CONTENT_PREFIX, CLIENT_KEY_PREFIX].map((prefix) =>
		prefix.slice(0, -1),
	),
	EMAIL_SCOPE,
	...PROVIDERS.map(({ value }) => value),
];

/** The namespace's text ('' for none), or a KeyError saying why it cannot be one. */
export function namespaceText(value: unknown): string {
	const namespace = normalizeId(value, 'namespace') ?? '';
	assertNamespace(namespace);
	return namespace;
}

export function assertNamespace(namespace: string): void {
	if (namespace.includes(':')) {
		throw new KeyError(
			`The namespace "${namespace}" contains ":", which separates the namespace from the key`,
			'Use a namespace without ":", for example "orders-workflow" or "billing_eu".',
		);
	}
	if (RESERVED.includes(namespace)) {
		throw new KeyError(
			`The namespace "${namespace}" is reserved: keys without a namespace start with "${namespace}:"`,
			"Pick another namespace, for example the workflow's name.",
		);
	}
}
