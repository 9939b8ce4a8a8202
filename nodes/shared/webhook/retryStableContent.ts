/**
 * What Reserve's replay guard hashes: the signed content in the form the signature covers it, less
 * what the sender renews on each attempt. A key made from it holds still across the sender's own
 * retries (Linear renews `webhookTimestamp` inside the signed body; Stripe renews `t`) and across
 * replays with an unsigned part changed (a fresh id header, a form re-encoded: Twilio signs the
 * decoded, sorted fields, so `+` and `%20` are one content).
 * - `{body}`: the raw bytes; with fields renewed per attempt, the JSON without them.
 * - `{form}`: the fields sorted and decoded, as the signature covers them.
 * - `{url}`: as signed (a replay cannot change it without breaking the signature).
 * - `{timestamp}`, `{header:X}` and literal text: left out. Signed headers are renewed per attempt by
 *   some senders (Box's delivery id and timestamp, Twitch's timestamp); one that names the event
 *   (Standard Webhooks' webhook-id) is keyed on directly, never through this digest.
 * - A shared secret (Graph, Okta) signs nothing: the body as received, hashed as it is (`sha256:`).
 *   A replay of it is caught as any repeat of the same bytes; a changed body is a new key, which
 *   is why such a sender's deliveries must be read again from its API before acting.
 * Parts the sender signs one after another with nothing between them (Twilio's `{url}{form}`,
 * Square's `{url}{body}`) are one text, as signed: Twilio's fields moved from the form to the end
 * of the URL's query are the same signed string, so the same key. Parts apart (a timestamp or a
 * literal between them) are length-prefixed so no two lists of parts give one content. When the content is the raw
 * bytes alone, the caller keys it `sha256:` (exactly `sha256sum` of the body); any other content
 * gets a prefix of its own (prefixes.ts).
 * Pure: the key planner bundles it; hashing is the caller's.
 */
import { withoutPaths, type BodyPath } from './bodyPaths';
import { concat, signedContentParts, sortedForm } from './schemeReader';
import { isSharedSecret, type VerificationDescription } from './schemeTypes';

export { EVERY_ELEMENT, type BodyPath } from './bodyPaths';

export type RetryStableContent =
	/** The raw bytes alone: hash them as they are. */
	| { kind: 'rawBody' }
	/** Anything else: hash these bytes. */
	| { kind: 'content'; bytes: Uint8Array };

export interface SignedParts {
	body: Uint8Array;
	/** The parse of the signed body (signedParse.ts), where it was parsed. */
	parsedBody?: unknown;
	url?: string;
}

/** The body paths a sender renews on each attempt: the table's, and a timestamp kept in the body. */
export function perAttemptPaths(
	description: VerificationDescription,
	renewedBodyFields: readonly BodyPath[] = [],
): BodyPath[] {
	const paths = [...renewedBodyFields];
	if (isSharedSecret(description)) return paths;
	if (description.timestamp?.from === 'body') paths.push(description.timestamp.path);
	return paths;
}

const encoder = new TextEncoder();

/** Each part after its length and a colon, so no two lists of parts give one content. */
function joined(parts: readonly Uint8Array[]): Uint8Array {
	return concat(parts.flatMap((part) => [encoder.encode(`${part.length}:`), part]));
}

/**
 * The retry-stable content of a verified delivery. `renewed`: body paths the sender renews on
 * each attempt (perAttemptPaths). Undefined only where the signed parts cannot be read again,
 * which a verified delivery never is.
 */
export function retryStableContent(
	description: VerificationDescription,
	renewed: readonly BodyPath[],
	signed: SignedParts,
): RetryStableContent | undefined {
	// Runs of kept parts with nothing between them, each one text as it is signed.
	const runs: Uint8Array[][] = [];
	let run: Uint8Array[] | undefined;
	let onlyRawBody = true;
	// Nothing signed: the body as received stands for the delivery (the key planner says so).
	const signs = isSharedSecret(description) ? '{body}' : description.signs;
	for (const part of signedContentParts(signs)) {
		if (part.kind === 'literal' || part.kind === 'timestamp' || part.kind === 'header') {
			run = undefined;
			continue;
		}
		if (run === undefined) runs.push((run = []));
		if (part.kind === 'body') {
			if (renewed.length === 0 || signed.parsedBody === undefined) {
				run.push(signed.body);
				continue;
			}
			onlyRawBody = false;
			run.push(encoder.encode(JSON.stringify(withoutPaths(signed.parsedBody, renewed))));
			continue;
		}
		onlyRawBody = false;
		const text = part.kind === 'form' ? sortedForm(signed.body) : signed.url;
		if (text === undefined) return undefined;
		run.push(encoder.encode(text));
	}
	if (onlyRawBody && runs.length === 1 && runs[0].length === 1) return { kind: 'rawBody' };
	return { kind: 'content', bytes: joined(runs.map((chunks) => concat(chunks))) };
}
