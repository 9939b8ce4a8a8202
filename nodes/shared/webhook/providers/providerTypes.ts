import type { HandshakeDefinition } from '../handshakeTypes';
import type { VerificationDescription } from '../schemeTypes';

/** Where a provider puts the event id. Presets fall back to the body hash when it is missing or empty. */
export type EventIdLocation =
	/** A field of the JSON body (`$json.body`), by path (digits index arrays): preferred, since the body is signed. */
	| { kind: 'body'; path: readonly string[] }
	/** The first of these headers that has a value, in this order (names as providers write them). */
	| { kind: 'headers'; names: readonly string[] }
	/** No event id in a delivery (a batch of events, or none at all): the key is the body hash. */
	| { kind: 'none' };

/** A sender whose deliveries cannot be proven genuine from the request alone, and why. */
export interface Unverifiable {
	unverifiable: string;
}

export interface ProviderDefinition {
	/** Stored in workflows (Key Source, Provider, Verify Signature): never rename one. */
	value: string;
	/** Its name everywhere: the options, both nodes' subtitles, the key planner, the docs. */
	label: string;
	/** Where the event id is: the Key Source preset of this provider reads it there. */
	eventId: EventIdLocation;
	/**
	 * How it signs (schemeTypes.ts), or the shared secret it repeats instead (`sharedSecret`: nothing
	 * signed, see its `caveat`), or why the request alone cannot prove it.
	 */
	signing: VerificationDescription | Unverifiable;
	/** The content types its deliveries use (docs/signatures.md; multipart is never verifiable). */
	contentTypes: readonly string[];
	/** How it retries and for how long (docs/signatures.md): the key's retention must outlast it. */
	retries: string;
	/**
	 * How a user sends one delivery again by hand, to see it answered "duplicate": the sender's own
	 * resend or redeliver button, from its docs. Absent where no page read documents one: the sender
	 * then sends an event again only when it retries (`retries`), after a failed answer.
	 */
	resend?: { how: string; docs: string };
	/** What one event's attempts share and what each renews: the replay guard keys on what they share. */
	retry?: RetryBehaviour;
	/**
	 * How long it waits for the answer before it counts the delivery as failed (and retries it, or
	 * gives up): a business step slower than that needs Answer First (docs/answer-first.md).
	 */
	timeout: AnswerTimeout;
	/**
	 * How it checks the endpoint before it delivers (handshakeTypes.ts): Reserve and Verify Webhook
	 * Signature answer it themselves, nothing reserved, no business step. Only with a signing scheme
	 * or a shared secret.
	 */
	handshake?: HandshakeDefinition;
	/**
	 * Where its deliveries carry a secret besides its signature headers and its shared secret (both
	 * known from `signing`): never stored with an Answer First delivery (delivery/secretParts.ts).
	 */
	secretParts?: SecretParts;
	/** The provider's own page on signing, where the table entry was read from. */
	docs: string;
}

/** A sender's secrets outside its signing: a legacy token in the body, a token header, … */
export interface SecretParts {
	/** Body fields, by path as in `eventId` (`*` steps over every element of an array). */
	body?: ReadonlyArray<readonly string[]>;
	/** Headers, as the sender spells them. */
	headers?: readonly string[];
}

/**
 * A sender's wait for the answer, from its own page (the docs URL where the number was read), or
 * `unknown` with why where no page read states it: never guessed, never taken from a third party.
 */
export type AnswerTimeout = { seconds: number; docs: string } | { unknown: string };

/**
 * What a sender's own retry of one event keeps and renews, from its docs or official library. The
 * replay guard (webhook/retryStableContent.ts) hashes the signed content less what is renewed, so
 * the sender's retry is a duplicate while a replay with an unsigned part changed is too.
 */
export interface RetryBehaviour {
	/** What every attempt of one event keeps: the id header, the body, … */
	keeps: string;
	/** What each attempt renews: the timestamp, the signature, a body field …; "unknown" where no source says. */
	renews: string;
	/**
	 * Fields of the signed JSON body renewed on every attempt (a timestamp the scheme reads from the
	 * body is renewed already): left out of the replay guard's digest. Paths as in `eventId`; `*`
	 * steps over every element of an array (each event of a batch).
	 */
	renewedBodyFields?: ReadonlyArray<readonly string[]>;
	/** Where this was read: a docs URL, an SDK file at a commit, or "unknown: <why>". */
	source: string;
}
