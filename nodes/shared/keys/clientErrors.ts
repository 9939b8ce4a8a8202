/**
 * Failures the sender caused, each with a machine-readable kind: the templates answer these with a
 * 4xx problem+json (RFC 9457) naming the reason, so the sender stops retrying something that can
 * never succeed. Most are item errors (`details.kind` on Reserve's error output); invalid-signature
 * is Reserve's own output, answered by the templates' Respond 401. Every other failure (the
 * database, a setting, a bug) stays a 5xx, which senders retry. Pure data: the key planner bundles
 * it, and docs/errors.md lists the same kinds (a test keeps the two in step).
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
	/**
	 * The delivery's signature is missing, malformed, stale or does not match (Reserve's `invalid
	 * signature` output, Verify Webhook Signature's `invalid`). Answered with the fixed
	 * INVALID_SIGNATURE_DETAIL, never with which check failed.
	 */
	'invalid-signature': {
		status: 401,
		title: 'The signature of the request could not be verified',
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

/**
 * The `detail` of every invalid-signature answer: the same whatever check failed. Which one it was
 * (`signature.reason`) stays in the execution data for the operator; a replayer or forger learns
 * nothing from the answer about how close it came (docs/errors.md#invalid-signature).
 */
export const INVALID_SIGNATURE_DETAIL =
	"Nothing was processed: the request's signature could not be verified with this endpoint's signing secret.";

/**
 * Answers that are 4xx problem+json but not an error of the request: the same request sent again
 * later succeeds. Not client-error kinds (nothing here tells the sender to stop); each has its own
 * anchor in docs/errors.md, under "Not an error of the request".
 */
export const RETRY_LATER_ANSWERS = {
	/** Another request with the same Idempotency-Key is still being processed (Reserve's `in flight`). */
	'in-flight': {
		status: 409,
		title: 'A request with this Idempotency-Key is still being processed',
	},
} as const;

export type RetryLaterAnswer = keyof typeof RETRY_LATER_ANSWERS;

/** The problem+json `type`, `title` and `status` of an answer that says "retry later". */
export function retryLaterDetails(answer: RetryLaterAnswer) {
	const { status, title } = RETRY_LATER_ANSWERS[answer];
	return { status, title, type: `${CLIENT_ERROR_DOCS}#${answer}` };
}

export function clientErrorDetails(kind: ClientErrorKind): ClientErrorDetails {
	const { status, title } = CLIENT_ERRORS[kind];
	return { kind, status, title, type: `${CLIENT_ERROR_DOCS}#${kind}` };
}
