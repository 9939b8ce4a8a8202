/**
 * How a sender checks an endpoint before it delivers (a "handshake"), as data: a provider's entry in
 * the table (providers/) may hold one `HandshakeDefinition` next to its signing scheme. The nodes
 * that verify signatures (Reserve, Verify Webhook Signature) answer it themselves, before anything
 * is reserved, and no business step runs (signatureNode/answerHandshakes.ts; logic in handshakes.ts).
 * Pure data: the key planner bundles the table.
 *
 * The kinds, small on purpose (a provider that needs one is one entry):
 * - recognised by: a JSON body field equal to a value (`bodyField`), a header equal to a value or
 *   present (`header`), a bodiless request (a GET, or Graph's empty POST) with a query parameter
 *   equal to a value or present (`query`); all of the listed conditions must hold;
 * - answered with: a body field echoed as JSON `{name: value}` or as text (`echoBodyField`), a body
 *   field and its HMAC-SHA256 hex keyed with the secret as JSON (`hmacBodyField`), a fixed JSON body
 *   (`fixedJson`), no body (`noContent`), a query parameter echoed as text once the request's verify token equals the
 *   credential's (`echoQueryWithVerifyToken`), a query parameter echoed as text to any bodiless
 *   request (`echoQuery`: Dropbox's `challenge`, Graph's `validationToken`, which prove nothing and
 *   start nothing, so they need no proof), a header echoed as JSON to a bodiless request (`echoHeader`:
 *   Okta's `X-Okta-Verification-Challenge`);
 * - proven by: the signature (`signed`), or, for an unsigned one, the sender's shared secret where its
 *   deliveries carry it (`authenticated: 'sharedSecret'`: Okta's authorization header; else 401).
 */

/** One condition a handshake request meets. Paths as in `eventId` (digits index arrays). */
export type HandshakeMatch =
	/**
	 * A field of the JSON body equal to `equals` (same type: `1` is not `"1"`); without `equals`,
	 * present; with `absent`, missing (a shape another endpoint of the same sender has).
	 */
	| {
			on: 'bodyField';
			path: readonly string[];
			equals?: string | number | boolean;
			absent?: true;
	  }
	/** A header equal to `equals` (the name in any case; the value exactly); without `equals`, has a value. */
	| { on: 'header'; name: string; equals?: string }
	/**
	 * A request without a body whose query parameter `parameter` equals `equals`; without `equals`,
	 * has a value. n8n's Webhook item carries no method, so the bodiless request is what is checked:
	 * `method` says how the sender sends it (docs, and which output of the template's Webhook).
	 */
	| { on: 'query'; method: 'GET' | 'POST'; parameter: string; equals?: string };

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
	/** No body and no content type (Discord Webhook Events' PING, answered 204). */
	| { kind: 'noContent' }
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
	| { kind: 'echoQuery'; parameter: string }
	/**
	 * The header `header` as JSON `{[name]: value}`, to a request without a body only (Okta's
	 * `{"verification": …}`), at most `ECHO_MAX_LENGTH` characters (else 400).
	 */
	| { kind: 'echoHeader'; header: string; name: string };

/**
 * The longest value any handshake echoes (a challenge, a token; else 400, never reflected), each echo
 * sent with `X-Content-Type-Options: nosniff`: a sender's random challenge is far shorter.
 */
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
	/**
	 * For an unsigned handshake of a shared-secret sender that sends its secret with the handshake
	 * too (Okta's verification carries the authorization header): checked as a delivery's is, in
	 * constant time, before anything is answered; a wrong or missing secret gets 401.
	 */
	authenticated?: 'sharedSecret';
	/**
	 * The form field that carries the JSON body when the sender posts a form instead of JSON (GitHub's
	 * `application/x-www-form-urlencoded` hooks send `payload=<JSON>`): `bodyField` conditions and
	 * answers then read that JSON. Only from the signed parse, so only for a signed handshake.
	 */
	formJsonField?: string;
	answer: HandshakeAnswer;
	/** The status of the answer; 200 when left out. */
	statusCode?: number;
}
