/**
 * How a sender checks an endpoint before it delivers (a "handshake"), as data: a provider's entry in
 * the table (providers/) may hold one `HandshakeDefinition` next to its signing scheme. The nodes
 * that verify signatures (Reserve, Verify Webhook Signature) answer it themselves, before anything
 * is reserved, and no business step runs (signature/answerHandshakes.ts; logic in handshakes.ts).
 * Pure data: the key planner bundles the table.
 *
 * The kinds, small on purpose (a provider that needs one is one entry):
 * - recognised by: a JSON body field equal to a value (`bodyField`), a header equal to a value
 *   (`header`), a bodiless request (a GET) with a query parameter equal to a value or present
 *   (`query`); all of the listed conditions must hold;
 * - answered with: a body field echoed as JSON `{name: value}` or as text (`echoBodyField`), a body
 *   field and its HMAC-SHA256 hex keyed with the secret as JSON (`hmacBodyField`), a fixed JSON body
 *   (`fixedJson`), a query parameter echoed as text once the request's verify token equals the
 *   credential's (`echoQueryWithVerifyToken`), a query parameter echoed as text to any bodiless GET
 *   (`echoQuery`: Dropbox's `challenge`, which proves nothing and starts nothing, so it needs no proof).
 */

/** One condition a handshake request meets. Paths as in `eventId` (digits index arrays). */
export type HandshakeMatch =
	/** A field of the JSON body equal to `equals` (same type: `1` is not `"1"`); without `equals`, present. */
	| { on: 'bodyField'; path: readonly string[]; equals?: string | number | boolean }
	/** A header equal to `equals` (the name in any case; the value exactly). */
	| { on: 'header'; name: string; equals: string }
	/**
	 * A request without a body (n8n's Webhook item carries no method: a GET is the one with no body)
	 * whose query parameter `parameter` equals `equals`; without `equals`, has a value.
	 */
	| { on: 'query'; method: 'GET'; parameter: string; equals?: string };

/** What the handshake is answered with. */
export type HandshakeAnswer =
	/** The body field at `path` as JSON `{[name]: value}` (`as: 'json'`) or as the text itself (`as: 'text'`). */
	| { kind: 'echoBodyField'; path: readonly string[]; as: 'json' | 'text'; name?: string }
	/**
	 * JSON `{[plainName]: value, [hmacName]: HMAC-SHA256 hex of value keyed with the credential's
	 * secret}` (Zoom's `{plainToken, encryptedToken}`).
	 */
	| { kind: 'hmacBodyField'; path: readonly string[]; plainName: string; hmacName: string }
	/** This JSON, always (Discord's `{"type":1}`). */
	| { kind: 'fixedJson'; body: Readonly<Record<string, string | number | boolean>> }
	/**
	 * The query parameter `parameter` as text, when the query parameter `tokenParameter` equals the
	 * credential's Verify Token (compared in constant time); else 403 (Meta's `hub.challenge`).
	 */
	| { kind: 'echoQueryWithVerifyToken'; parameter: string; tokenParameter: string }
	/**
	 * The query parameter `parameter` as text, to any request without a body (never to one with a
	 * body, whatever the match says): `text/plain` with `X-Content-Type-Options: nosniff`, so a
	 * browser never renders the reflected value, and at most `ECHO_MAX_LENGTH` characters (else 400).
	 * Only for a handshake that is not signed and carries nothing to check (Dropbox's `challenge`).
	 */
	| { kind: 'echoQuery'; parameter: string };

/** The longest query value `echoQuery` reflects: a sender's random challenge is far shorter. */
export const ECHO_MAX_LENGTH = 256;

export interface HandshakeDefinition {
	/** What the sender calls it (`url_verification`, `PING`): hints and docs name it. */
	name: string;
	/** Every condition must hold. */
	match: readonly HandshakeMatch[];
	/**
	 * Whether the sender signs the handshake like any delivery. Signed: recognised only once its
	 * signature holds, from the signed body (a forged one is refused as any delivery is). Unsigned:
	 * recognised before any signature check (a GET has no body to sign); the answer kind checks
	 * whatever proves the sender (a verify token).
	 */
	signed: boolean;
	answer: HandshakeAnswer;
	/** The status of the answer; 200 when left out. */
	statusCode?: number;
}
