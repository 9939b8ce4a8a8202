/**
 * How long one statement waits for a key row that another transaction holds (a takeover in flight,
 * someone's open `BEGIN; DELETE …`), before it fails with lock_not_available (55P03). Short enough
 * that n8n still answers a webhook sender well within its timeout (Slack waits 3 s, Shopify 5 s),
 * long enough for any of this package's own statements, which hold a row for milliseconds.
 */
export const LOCK_WAIT_MS = 2000;
