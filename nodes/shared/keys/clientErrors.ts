/**
 * Item failures the sender caused, each with a machine-readable kind: the templates answer these
 * with a 4xx problem+json (RFC 9457) naming the reason, so the sender stops retrying something that
 * can never succeed. Every other failure (the database, a setting, a bug) stays a 5xx, which
 * senders retry. Pure data: the key planner bundles it, and docs/errors.md lists the same kinds
 * (a test keeps the two in step).
 */
export const CLIENT_ERRORS = {
	/** The event id (or custom key) cannot be an idempotency key: an object, NUL, too long… */
	'invalid-key': { status: 400, title: 'The event id cannot be an idempotency key' },
	/** The Idempotency-Key header is missing, empty, malformed or sent twice. */
	'invalid-idempotency-key': {
		status: 400,
		title: 'The Idempotency-Key header is missing or malformed',
	},
	/** The value a required fingerprint is made of is missing or empty. */
	'invalid-fingerprint': {
		status: 400,
		title: 'The request lacks what its fingerprint is made of',
	},
	/**
	 * A verified delivery under a media type its sender does not use, or one n8n read differently
	 * from the signed bytes (webhook/signedParse.ts): nothing unsigned may change how the body is read.
	 */
	'unsupported-media-type': {
		status: 415,
		title: 'The body is not sent the way its sender signs it',
	},
	/** The key was used before with another payload (On Mismatch: error). */
	'fingerprint-mismatch': {
		status: 422,
		title: 'The idempotency key was used with another payload',
	},
} as const;

export type ClientErrorKind = keyof typeof CLIENT_ERRORS;

/** Where each kind is explained: the problem+json `type`. */
export const CLIENT_ERROR_DOCS =
	'https://github.com/n8n-nodes-idempotency/n8n-nodes-idempotency/blob/main/docs/errors.md';

/** What an error item carries in `details` for a client error, so a template can answer it as problem+json. */
export interface ClientErrorDetails {
	kind: ClientErrorKind;
	status: number;
	title: string;
	type: string;
}

export function clientErrorDetails(kind: ClientErrorKind): ClientErrorDetails {
	const { status, title } = CLIENT_ERRORS[kind];
	return { kind, status, title, type: `${CLIENT_ERROR_DOCS}#${kind}` };
}
