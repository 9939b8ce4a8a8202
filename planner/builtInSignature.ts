/**
 * The signature check of the built-in-nodes workflow (planner/builtIn.ts), per provider, as n8n
 * expressions around n8n's Crypto node (v2). How each provider signs comes from the one provider
 * table (nodes/shared/webhook/providers.ts: headers, encoding, secret format, timestamp); this file
 * only says how the Crypto node and an If node can check that, or why they cannot.
 *
 * The Crypto node's HMAC takes its secret from a Crypto credential, a text field that Node.js
 * uses as UTF-8 bytes (`createHmac(type, secret)`, n8n-nodes-base CryptoV2.node.js). A provider
 * whose key is bytes given as base64 (Standard Webhooks and Svix: `whsec_<base64>`) cannot be
 * entered there: most keys are not valid UTF-8, so no text gives those bytes. A Code node may use
 * `crypto` on n8n Cloud (https://docs.n8n.io/build/code-in-n8n/using-the-code-node, "External libraries"), but it has no
 * credentials, so the secret would be written into the workflow: those providers are refused instead.
 */
import {
	PROVIDERS,
	type ProviderDefinition,
	type ProviderValue,
} from '../nodes/shared/webhook/providers';

/** The Webhook node's name in the generated workflow; later nodes read its output by name. */
export const WEBHOOK_NODE = 'Webhook';

/** A request header as the Webhook node hands it (names lower-cased), '' when missing. */
export function headerExpression(name: string): string {
	return `String($('${WEBHOOK_NODE}').first().json.headers[${JSON.stringify(name.toLowerCase())}] ?? '')`;
}

export interface BuiltInSignature {
	provider: ProviderValue;
	label: string;
	/** HMAC of the raw bytes (Webhook's binary "data"), or of a text made of the body text. */
	input: { kind: 'binary' } | { kind: 'text'; expression: string };
	encoding: 'hex' | 'base64';
	/** An expression giving the signatures the request carries (an array of text). */
	signatures: string;
	/** An expression giving the signed timestamp's text, for providers that sign one. */
	timestamp?: string;
	/**
	 * Whether the event id is covered by the signature (senderSignsEventId). When it is not (GitHub,
	 * Shopify: an id header next to a signature of the body alone), a captured delivery resent under
	 * a fresh id header passes the signature check: the replay guard keys on the body instead.
	 */
	signsEventId: boolean;
}

export type SignatureSupport =
	| { supported: true; signature: BuiltInSignature }
	| { supported: false; provider: string; label: string; reason: string };

/** The body as text, as Extract From File put it on the item (planner/builtIn.ts, RAW_TEXT_FIELD). */
const BODY_TEXT = '$json.rawBody';

/** `name=value` entries of a comma-separated header, trimmed. */
function entries(header: string): string {
	return `${headerExpression(header)}.split(',').map((part) => part.trim())`;
}

/** How the Crypto node and an If node express each provider this path supports. */
const EXPRESSIONS: Partial<
	Record<ProviderValue, Omit<BuiltInSignature, 'provider' | 'label' | 'signsEventId'>>
> = {
	// Stripe-Signature: t=<unix>,v1=<hex>[,v1=…]: HMAC-SHA256 hex of "<t>.<body>".
	stripe: (() => {
		const timestamp = `(${entries('stripe-signature')}.find((part) => part.startsWith('t=')) ?? '').slice(2)`;
		return {
			input: { kind: 'text', expression: `${timestamp} + '.' + ${BODY_TEXT}` },
			encoding: 'hex',
			signatures: `${entries('stripe-signature')}.filter((part) => part.startsWith('v1=')).map((part) => part.slice(3))`,
			timestamp,
		};
	})(),
	// X-Hub-Signature-256: sha256=<hex> of the raw body.
	github: {
		input: { kind: 'binary' },
		encoding: 'hex',
		signatures: `[${headerExpression('x-hub-signature-256')}].filter((value) => value.startsWith('sha256=')).map((value) => value.slice(7))`,
	},
	// X-Shopify-Hmac-Sha256: <base64> of the raw body.
	shopify: {
		input: { kind: 'binary' },
		encoding: 'base64',
		signatures: `[${headerExpression('x-shopify-hmac-sha256')}].filter((value) => value !== '')`,
	},
	// X-Slack-Signature: v0=<hex> of "v0:<X-Slack-Request-Timestamp>:<body>".
	slack: {
		input: {
			kind: 'text',
			expression: `'v0:' + ${headerExpression('x-slack-request-timestamp')} + ':' + ${BODY_TEXT}`,
		},
		encoding: 'hex',
		signatures: `[${headerExpression('x-slack-signature')}].filter((value) => value.startsWith('v0=')).map((value) => value.slice(3))`,
		timestamp: headerExpression('x-slack-request-timestamp'),
	},
};

/**
 * The one place that says whether a sender signs its event id, read from the provider table: an id
 * in the body is signed with the body (every provider here signs the body); an id in headers is
 * signed only when those headers are among the ones the signature scheme reads (Standard Webhooks
 * and Svix sign `webhook-id` / `svix-id`; GitHub and Shopify sign the body alone). Whether it signs
 * a timestamp is the table's own `signature.hasTimestamp`.
 */
export function senderSignsEventId(provider: ProviderDefinition): boolean {
	if (provider.eventId.kind === 'body') return true;
	const signed = new Set(provider.signature.headers.map((name) => name.toLowerCase()));
	return provider.eventId.names.every((name) => signed.has(name.toLowerCase()));
}

const BASE64_SECRET_REASON =
	"its signing secret is whsec_ followed by base64, and the HMAC key is the decoded bytes. The Crypto node's HMAC secret is a text in a Crypto credential, used as its UTF-8 bytes, and most decoded keys are not valid UTF-8, so no text gives the same key. A Code node could decode it (n8n documents crypto as available in the Code node on n8n Cloud), but a Code node has no credentials: the secret would sit in the workflow's code, exported and shown with it. Use the package's Idempotency Reserve on a self-hosted n8n for this provider.";

/** Every provider of the table, with what the built-in path does for it. */
export const BUILT_IN_SIGNATURES: readonly SignatureSupport[] = PROVIDERS.map((provider) => {
	const expressions = EXPRESSIONS[provider.value];
	if (provider.signature.secretFormat === 'whsecBase64' || expressions === undefined) {
		return {
			supported: false,
			provider: provider.value,
			label: provider.label,
			reason: `${provider.label} cannot be checked with built-in nodes: ${provider.signature.secretFormat === 'whsecBase64' ? BASE64_SECRET_REASON : 'no Crypto node expression is written for it.'}`,
		};
	}
	if (expressions.encoding !== provider.signature.encoding)
		throw new Error(`builtInSignature: ${provider.value}'s encoding differs from providers.ts`);
	if (Boolean(expressions.timestamp) !== provider.signature.hasTimestamp)
		throw new Error(`builtInSignature: ${provider.value}'s timestamp differs from providers.ts`);
	return {
		supported: true,
		signature: {
			provider: provider.value,
			label: provider.label,
			...expressions,
			signsEventId: senderSignsEventId(provider),
		},
	};
});

/** What the built-in path does for this provider value (undefined: not a provider of the table). */
export function builtInSignatureOf(provider: string): SignatureSupport | undefined {
	return BUILT_IN_SIGNATURES.find((support) =>
		support.supported ? support.signature.provider === provider : support.provider === provider,
	);
}
