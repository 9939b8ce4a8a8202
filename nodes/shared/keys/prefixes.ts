/** What a key starts with (after the namespace): an event id, or the SHA-256 of the raw body. */
export const EVENT_ID_PREFIX = 'evt:';
export const BODY_HASH_PREFIX = 'sha256:';
