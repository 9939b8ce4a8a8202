/**
 * What a key starts with (after the namespace): an event id, the SHA-256 of the raw body, or a
 * client's Idempotency-Key (so a client's key can never equal a provider's event key).
 */
export const EVENT_ID_PREFIX = 'evt:';
export const BODY_HASH_PREFIX = 'sha256:';
export const CLIENT_KEY_PREFIX = 'idk:';
