/**
 * What a key starts with (after the namespace): an event id, the SHA-256 of the raw body, a digest
 * of the signed content that is not the raw body's SHA-256 (retryStableContent.ts), or a client's
 * Idempotency-Key (so a client's key can never equal a provider's event key). A provider's preset
 * puts the provider's value before its event ids instead of `evt:` (Stripe keeps `evt:`, the design
 * note's keys), so two senders' events never share a key in one table.
 */
export const EVENT_ID_PREFIX = 'evt:';
export const BODY_HASH_PREFIX = 'sha256:';
export const SIGNED_CONTENT_PREFIX = 'signed:';
export const CLIENT_KEY_PREFIX = 'idk:';
/** The scope of the email presets' Message-ID keys (`email:<a@b>`), one for IMAP and Gmail alike. */
export const EMAIL_SCOPE = 'email';

/** The provider whose preset keeps the bare `evt:` prefix: the hand-built pattern's Stripe keys. */
export const UNSCOPED_PROVIDER = 'stripe';

/** What a preset's event id is prefixed with: `evt:` for Stripe, `<provider>:` for every other sender. */
export function eventIdPrefix(scope: string | undefined): string {
	return scope === undefined ? EVENT_ID_PREFIX : `${scope}:`;
}
