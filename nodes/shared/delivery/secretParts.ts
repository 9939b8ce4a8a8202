import { EVERY_ELEMENT, withoutPaths, type BodyPath } from '../webhook/bodyPaths';
import { PROVIDERS, type ProviderDefinition } from '../webhook/providers';
import { SIGNATURE_SCHEMES } from '../webhook/signatureSchemes';

/**
 * What a stored delivery (storedDelivery.ts) never holds: the one place that says what a secret is.
 * A stored delivery stays in the key table until the key is purged and a redrive is not verified
 * again, so no business step needs a credential from it. Made from the provider table, so a new
 * sender is covered by its entry: its signature headers and shared secret (`signing`), and what
 * its `secretParts` marks. Applied to every delivery, whoever sent it: Reserve cannot always tell
 * the sender (Verify Webhook Signature before it, a custom key, no check at all), and a field some
 * sender keeps a secret in is not what a business step acts on.
 * A removed value is dropped, not replaced by a marker: a marker would read as a value (a step
 * could send it on as a token, or compare a clientState with it), where a missing field is plain.
 */

const TABLE: readonly ProviderDefinition[] = PROVIDERS;
const lower = (name: string) => name.toLowerCase();

/** HTTP's own credential headers, whatever the table says. */
const CREDENTIAL_HEADERS = [
	'authorization',
	'proxy-authorization',
	'cookie',
	'set-cookie',
	'x-api-key',
];

/** Every header a sender of the table carries a signature or a secret in, lower-cased. */
export const NEVER_STORED_HEADERS: readonly string[] = [
	...new Set([
		...CREDENTIAL_HEADERS,
		...TABLE.flatMap(({ signing, secretParts }) => [
			...('signatureHeaders' in signing ? signing.signatureHeaders : []),
			...('sharedSecret' in signing && signing.sharedSecret.in === 'header'
				? [signing.sharedSecret.header]
				: []),
			...(secretParts?.headers ?? []),
		]).map(lower),
	]),
];

/**
 * A name that says it holds a credential (`X-Webhook-Secret`, `X-Auth-Token`, `?access_token=`,
 * `hub.verify_token`), matched lower-cased without `-`, `_` or `.`: Generic HMAC's header when
 * Verify Webhook Signature checked it, a header Okta's credential renamed, a sender not in the table.
 */
const CREDENTIAL_NAME = /signature|secret|hmac|token|password|apikey|credential/;
const squeezed = (name: string) => name.toLowerCase().replace(/[-_.]/g, '');

/** Headers the table reads as data though their names match: signed ones, event ids. */
const TABLE_DATA_HEADERS = new Set(
	[
		...Object.values(SIGNATURE_SCHEMES).flatMap((scheme) => scheme.signedHeaders),
		...TABLE.flatMap(({ eventId }) => (eventId.kind === 'headers' ? eventId.names : [])),
	].map(lower),
);

/**
 * Whether a header carries a credential or a signature: the table's and HTTP's, `configured` ones
 * (Generic HMAC's signature header, as the node is set), and any other whose name says so.
 */
export function isSecretHeader(name: string, configured: readonly string[] = []): boolean {
	const lowered = lower(name);
	if (NEVER_STORED_HEADERS.includes(lowered) || configured.map(lower).includes(lowered))
		return true;
	return !TABLE_DATA_HEADERS.has(lowered) && CREDENTIAL_NAME.test(squeezed(name));
}

/**
 * Short query names APIs put a credential under, besides CREDENTIAL_NAME's: `key` (Google's API
 * keys), `sig` (signed URLs), `auth`, `pass`, `pwd`. Not `code`: in a webhook's URL far more often a
 * promotion or a status than an OAuth code.
 */
const CREDENTIAL_QUERY_NAMES = new Set(['key', 'sig', 'auth', 'pass', 'pwd']);

/** Whether a query parameter carries a credential (`?token=` put in the URL given to a sender). */
export function isSecretQueryParameter(name: string): boolean {
	return CREDENTIAL_QUERY_NAMES.has(squeezed(name)) || CREDENTIAL_NAME.test(squeezed(name));
}

/** Body fields that hold a sender's secret: a shared secret in a body array, what entries mark. */
export const SECRET_BODY_PATHS: readonly BodyPath[] = TABLE.flatMap(({ signing, secretParts }) => [
	...('sharedSecret' in signing && signing.sharedSecret.in === 'bodyArray'
		? [[...signing.sharedSecret.array, EVERY_ELEMENT, signing.sharedSecret.field]]
		: []),
	...(secretParts?.body ?? []),
]);

/** The body without its secret fields (a copy: the item the business step runs is not changed). */
export function withoutSecretFields(body: unknown): unknown {
	return withoutPaths(body, SECRET_BODY_PATHS);
}

/** The query without its credential parameters (a copy). */
export function withoutSecretQuery(query: unknown): unknown {
	if (query === null || typeof query !== 'object' || Array.isArray(query)) return query;
	return Object.fromEntries(
		Object.entries(query).filter(([name]) => !isSecretQueryParameter(name)),
	);
}
