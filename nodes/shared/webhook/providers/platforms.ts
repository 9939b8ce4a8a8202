import type { ProviderDefinition } from './providerTypes';
import { hubSignatureSigning } from './hubSignatureSigning';
import { standardWebhooksSigning } from './standardWebhooksSigning';

/**
 * CRM, storage and platform senders, and the senders that sign as Standard Webhooks or through Svix
 * (their own entries: their own event id, docs and retry notes; the scheme is the established one).
 * Each verifiable entry has a test vector in test/vectors/platforms.js.
 */
export const PLATFORMS = [
	{
		value: 'hubSpot',
		label: 'HubSpot',
		// The body is an array of up to 100 events; each has its eventId (and an attemptNumber that
		// changes on every retry, so the body hash is no event id here). The first event's eventId
		// stands for the batch.
		eventId: { kind: 'body', path: ['0', 'eventId'] },
		signing: {
			algorithm: 'sha256',
			encoding: 'base64',
			secret: 'text',
			signatureHeaders: ['X-HubSpot-Signature-v3'],
			signature: { format: 'whole' },
			// v3: method + the URI HubSpot called + raw body + the timestamp header's text (milliseconds).
			signs: 'POST{url}{body}{timestamp}',
			timestamp: { from: 'header', header: 'X-HubSpot-Request-Timestamp', unit: 'milliseconds' },
			toleranceSeconds: 300,
		},
		contentTypes: ['application/json'],
		retries:
			'No answer within 5 s, a connection failure or a 4xx/5xx answer: up to 10 retries spread over 24 hours',
		retry: {
			keeps: "Each event's eventId",
			renews:
				"Each event's attemptNumber (from 0), so X-HubSpot-Signature-v3; the timestamp header per retry is not stated",
			renewedBodyFields: [['*', 'attemptNumber']],
			source: 'https://developers.hubspot.com/docs/api/webhooks',
		},
		timeout: {
			unknown:
				"HubSpot's pages disagree (its former webhooks overview said 1 s, a quote of it on its forum 2 s) and the current page read states none",
		},
		docs: 'https://developers.hubspot.com/docs/apps/developer-platform/build-apps/authentication/request-validation',
	},
	{
		value: 'quickBooks',
		label: 'Intuit QuickBooks',
		// The CloudEvents payload is an array of events, each with its id; the legacy payload
		// ({"eventNotifications": […]}) has none, and falls back to the body hash.
		eventId: { kind: 'body', path: ['0', 'id'] },
		signing: {
			algorithm: 'sha256',
			encoding: 'base64',
			// The webhook's verifier token, used as the HMAC key as it is.
			secret: 'text',
			signatureHeaders: ['intuit-signature'],
			signature: { format: 'whole' },
			signs: '{body}',
		},
		contentTypes: ['application/json'],
		retries:
			'No HTTP 200 within 3 s: retried after 10 s, 20 s, 30 s, 5 min, 20 min, 2 h, 4 h, 6 h, then every 6 hours; later events wait until the first is acknowledged',
		retry: {
			keeps: 'unknown',
			renews: 'unknown',
			source: "unknown: Intuit's pages read give the schedule, not what a retry keeps or renews",
		},
		timeout: {
			seconds: 3,
			docs: 'https://developer.intuit.com/app/developer/qbo/docs/develop/webhooks/best-practices',
		},
		docs: 'https://developer.intuit.com/app/developer/qbo/docs/develop/webhooks/managing-webhooks-notifications',
	},
	{
		value: 'box',
		label: 'Box',
		// BOX-DELIVERY-ID changes on every retry; the id in the body stays (Box's V2 webhook guide).
		eventId: { kind: 'body', path: ['id'] },
		signing: {
			algorithm: 'sha256',
			encoding: 'base64',
			secret: 'text',
			// The primary key signs BOX-SIGNATURE-PRIMARY, the secondary key BOX-SIGNATURE-SECONDARY:
			// the primary key as the secret, the secondary as the previous one during a rotation.
			signatureHeaders: ['BOX-SIGNATURE-PRIMARY', 'BOX-SIGNATURE-SECONDARY'],
			signature: { format: 'whole' },
			// The body's bytes, then the timestamp header's text (RFC 3339, with its offset).
			signs: '{body}{timestamp}',
			timestamp: { from: 'header', header: 'BOX-DELIVERY-TIMESTAMP', unit: 'iso8601' },
			toleranceSeconds: 600,
		},
		contentTypes: ['application/json'],
		retries:
			'Non-2xx or no answer: retried with backoff; each retry has a new BOX-DELIVERY-ID and the same body id',
		retry: {
			keeps: 'The id in the body',
			renews:
				'BOX-DELIVERY-ID (new on each retry), BOX-DELIVERY-TIMESTAMP (when sent), so both signatures',
			source: 'https://developer.box.com/guides/webhooks/v2/',
		},
		timeout: { seconds: 30, docs: 'https://developer.box.com/guides/webhooks/v2' },
		docs: 'https://developer.box.com/guides/webhooks/v2/signatures-v2',
	},
	{
		value: 'whatsApp',
		label: 'WhatsApp Cloud API (Meta)',
		// Meta sends no event id: a WhatsApp message's id (wamid) is the first message's, in arrays;
		// status updates and other fields fall back to the body hash (a retry resends the same body).
		eventId: { kind: 'body', path: ['entry', '0', 'changes', '0', 'value', 'messages', '0', 'id'] },
		// The secret is the Meta app's App Secret.
		signing: hubSignatureSigning,
		contentTypes: ['application/json'],
		retries:
			'Non-200 or no delivery: retried with decreasing frequency for up to 7 days; duplicates are possible',
		retry: {
			keeps: 'unknown',
			renews: 'unknown',
			source:
				"unknown: Meta's pages read say retries and duplicates happen, not what a retry keeps or renews",
		},
		// Meta verifies the callback URL with a GET (no body, so no signature): the verify token the
		// user chose, in the credential's Verify Token, is what proves it.
		handshake: {
			name: 'verification request',
			match: [{ on: 'query', method: 'GET', parameter: 'hub.mode', equals: 'subscribe' }],
			signed: false,
			answer: {
				kind: 'echoQueryWithVerifyToken',
				parameter: 'hub.challenge',
				tokenParameter: 'hub.verify_token',
			},
		},
		timeout: { unknown: "Meta's webhook pages read state no time limit" },
		docs: 'https://developers.facebook.com/docs/graph-api/webhooks/getting-started#validate-payloads',
	},
	{
		value: 'openAi',
		label: 'OpenAI',
		// The event id (evt_…) is in the signed body; webhook-id names the message.
		eventId: { kind: 'body', path: ['id'] },
		signing: standardWebhooksSigning('webhook'),
		contentTypes: ['application/json'],
		retries:
			'Non-2xx or no answer within a few seconds: retried with exponential backoff for up to 72 hours',
		retry: {
			keeps: 'The event id (body.id, evt_…)',
			renews: 'unknown: whether webhook-id or webhook-timestamp change on a retry is not stated',
			source: 'https://platform.openai.com/docs/guides/webhooks',
		},
		timeout: { unknown: 'OpenAI asks for an answer within "a few seconds", without a number' },
		docs: 'https://platform.openai.com/docs/guides/webhooks',
	},
	{
		value: 'replicate',
		label: 'Replicate',
		// The body is the prediction, sent several times as it runs (start, output, logs, completed):
		// its id is the prediction's, not the event's. webhook-id is per message and signed.
		eventId: { kind: 'headers', names: ['webhook-id'] },
		signing: standardWebhooksSigning('webhook'),
		contentTypes: ['application/json'],
		retries:
			'Non-2xx: retried with backoff (Standard Webhooks); each attempt of a message keeps its webhook-id',
		retry: {
			keeps: 'webhook-id (each attempt of a message keeps it)',
			renews: 'unknown: a new webhook-timestamp per attempt is not stated',
			source: 'https://replicate.com/docs/topics/webhooks/verify-webhook',
		},
		timeout: { unknown: "Replicate's webhook pages read state no time limit" },
		docs: 'https://replicate.com/docs/topics/webhooks/verify-webhook',
	},
	{
		value: 'clerk',
		label: 'Clerk',
		// Clerk's events carry no id in the body; svix-id is signed and the same on every retry.
		eventId: { kind: 'headers', names: ['svix-id'] },
		signing: standardWebhooksSigning('svix'),
		contentTypes: ['application/json'],
		retries:
			'Through Svix: non-2xx is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (about 28 hours)',
		retry: {
			keeps: 'svix-id (the same on every retry) and the body (delivered through Svix)',
			renews: 'svix-timestamp and svix-signature',
			source: 'https://docs.svix.com/receiving/verifying-payloads/how-manual',
		},
		timeout: {
			unknown:
				"Clerk delivers through Svix (15 s there), but Clerk's own pages read state no time limit",
		},
		docs: 'https://clerk.com/docs/webhooks/overview',
	},
	{
		value: 'resend',
		label: 'Resend',
		// Resend's events ({type, created_at, data}) carry no event id; svix-id is signed and kept on retries.
		eventId: { kind: 'headers', names: ['svix-id'] },
		signing: standardWebhooksSigning('svix'),
		contentTypes: ['application/json'],
		retries:
			'Non-2xx: retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (about 28 hours); replays by hand from the dashboard',
		retry: {
			keeps: 'svix-id (kept on retries) and the body (delivered through Svix)',
			renews: 'svix-timestamp and svix-signature',
			source: 'https://docs.svix.com/receiving/verifying-payloads/how-manual',
		},
		timeout: { unknown: "Resend's webhook pages read state no time limit" },
		docs: 'https://resend.com/docs/dashboard/webhooks/verify-webhooks-requests',
	},
	{
		value: 'twitchEventSub',
		label: 'Twitch EventSub',
		// The event in the body carries no id of its own; the message id is signed and is what Twitch
		// says to drop duplicates by.
		eventId: { kind: 'headers', names: ['Twitch-Eventsub-Message-Id'] },
		signing: {
			algorithm: 'sha256',
			encoding: 'hex',
			// The secret given when the subscription was created (10 to 100 characters).
			secret: 'text',
			signatureHeaders: ['Twitch-Eventsub-Message-Signature'],
			signature: { format: 'whole', prefix: 'sha256=' },
			// The message id, the timestamp header's text (RFC 3339 with nanoseconds), then the raw body.
			signs: '{header:Twitch-Eventsub-Message-Id}{timestamp}{body}',
			timestamp: { from: 'header', header: 'Twitch-Eventsub-Message-Timestamp', unit: 'iso8601' },
			// Twitch's guard against replays: refuse a message older than 10 minutes.
			toleranceSeconds: 600,
		},
		contentTypes: ['application/json'],
		retries:
			'Answer 2XX within a few seconds: too many failed or slow answers set the subscription to notification_failures_exceeded and Twitch revokes it; a message can arrive more than once (the same Twitch-Eventsub-Message-Id)',
		retry: {
			keeps:
				"Twitch-Eventsub-Message-Id (Twitch's advice: a message id seen before is a duplicate)",
			renews:
				'unknown: whether a resend gets a new Twitch-Eventsub-Message-Timestamp is not stated',
			source: 'https://dev.twitch.tv/docs/eventsub/#handling-duplicate-events',
		},
		// After a subscription is created, signed like any message: answer 200 with the challenge as
		// text. The type header is not signed, so the signed body must carry a challenge too.
		handshake: {
			name: 'webhook_callback_verification',
			match: [
				{
					on: 'header',
					name: 'Twitch-Eventsub-Message-Type',
					equals: 'webhook_callback_verification',
				},
				{ on: 'bodyField', path: ['challenge'] },
			],
			signed: true,
			answer: { kind: 'echoBodyField', path: ['challenge'], as: 'text' },
		},
		timeout: { unknown: 'Twitch asks for an answer "within a few seconds", without a number' },
		docs: 'https://dev.twitch.tv/docs/eventsub/handling-webhook-events/#verifying-the-event-message',
	},
	{
		value: 'dropbox',
		label: 'Dropbox',
		// A notification names only the accounts whose files changed ({"list_folder":{"accounts":[…]}}),
		// no event: the key is the body hash. A later change of the same accounts sends the same bytes,
		// so complete its key with a short retention, or release it once the changes are listed.
		eventId: { kind: 'none' },
		signing: {
			algorithm: 'sha256',
			encoding: 'hex',
			// The app's App secret.
			secret: 'text',
			signatureHeaders: ['X-Dropbox-Signature'],
			signature: { format: 'whole' },
			signs: '{body}',
		},
		contentTypes: ['application/json'],
		retries:
			'Non-200 or a timeout: retried with exponential backoff over about ten minutes, then a failure shows in the App Console; the verification GET (10 s to answer) is not retried',
		retry: {
			keeps:
				'unknown: the same accounts in the body; a new change of those accounts sends the same body too',
			renews: 'unknown',
			source:
				"unknown: Dropbox's webhook pages read give the backoff, not what a retry keeps or renews",
		},
		// A GET ?challenge=… when the URL is added in the App Console: no token, no signature, so the
		// answer is the echo alone (text/plain, nosniff, as Dropbox asks, to avoid a reflected XSS).
		handshake: {
			name: 'verification request',
			match: [{ on: 'query', method: 'GET', parameter: 'challenge' }],
			signed: false,
			answer: { kind: 'echoQuery', parameter: 'challenge' },
		},
		timeout: {
			unknown:
				'Dropbox gives the verification GET 10 s; its pages read state no limit for notifications',
		},
		docs: 'https://www.dropbox.com/developers/reference/webhooks',
	},
	{
		value: 'microsoftGraph',
		label: 'Microsoft Graph',
		// A delivery is a `value` array of notifications (subscriptionId, changeType, resource,
		// clientState) with no id that names the delivery: the key is SHA-256 of the raw body, which
		// a retry of the same batch repeats.
		eventId: { kind: 'none' },
		// Graph signs nothing: each notification repeats the clientState given when the subscription
		// was created. Every one must equal the credential's Secret (one wrong value refuses the batch).
		signing: {
			sharedSecret: { in: 'bodyArray', array: ['value'], field: 'clientState' },
			caveat:
				'Treat each notification as a hint: read the resource it names from Graph (GET https://graph.microsoft.com/v1.0/<resource>) before acting on it. One wrong clientState refuses the whole batch; an empty value[] is refused.',
		},
		contentTypes: ['application/json'],
		retries:
			'A 2xx is delivered; any other answer within 10 s is retried with exponential backoff for up to 4 hours; an endpoint often slower than 10 s is throttled and its notifications can be dropped for good',
		retry: {
			keeps: 'unknown: the same notifications in the body, as far as a retry resends the batch',
			renews: 'unknown',
			source:
				"unknown: Microsoft's page read gives the retry rules, not what a retried notification keeps or renews; nothing is signed, so the replay guard hashes the body as received",
		},
		// When a subscription is created or renewed: a POST with ?validationToken=… and no body,
		// unsigned and carrying no secret. Answered to any bodiless request, as Dropbox's echo is:
		// 200 text/plain with the token as Express decoded it, capped, nosniff; nothing reserved.
		handshake: {
			name: 'validation request',
			match: [{ on: 'query', method: 'POST', parameter: 'validationToken' }],
			signed: false,
			answer: { kind: 'echoQuery', parameter: 'validationToken' },
		},
		timeout: {
			seconds: 10,
			docs: 'https://learn.microsoft.com/graph/change-notifications-delivery-webhooks',
		},
		docs: 'https://learn.microsoft.com/graph/change-notifications-delivery-webhooks',
	},
	{
		value: 'oktaEventHooks',
		label: 'Okta Event Hooks',
		// The delivery's eventId; each event of data.events has its own uuid (the first event's is in
		// the body too, but the delivery's id names what Okta sent).
		eventId: { kind: 'body', path: ['eventId'] },
		// Okta signs nothing: every request carries the Authentication field's header (Authorization
		// unless the user named another: the credential's Shared Secret Header) with the secret as its whole value.
		signing: {
			sharedSecret: { in: 'header', header: 'Authorization' },
			caveat:
				"Before acting, look each event up in Okta's System Log API by its uuid. Secret holds the header's whole value; when the hook's Authentication field is not Authorization, name it in the credential's Shared Secret Header.",
		},
		contentTypes: ['application/json'],
		retries:
			"unknown: Okta's pages read ask for a quick answer, not how a failed delivery is retried",
		retry: {
			keeps: 'unknown',
			renews: 'unknown',
			source:
				"unknown: Okta's pages read do not say what a redelivery keeps or renews; nothing is signed, so the replay guard hashes the body as received",
		},
		// Once, when the hook is verified: a GET with X-Okta-Verification-Challenge and the same
		// authentication header as deliveries (Okta's support article shows `Authorization:
		// my-shared-secret` on it), so the secret is checked first: a wrong one gets 401.
		handshake: {
			name: 'one-time verification',
			match: [{ on: 'header', name: 'X-Okta-Verification-Challenge' }],
			signed: false,
			authenticated: 'sharedSecret',
			answer: { kind: 'echoHeader', header: 'X-Okta-Verification-Challenge', name: 'verification' },
		},
		timeout: {
			unknown:
				"Okta's 3 s found is for inline hooks and the verification request; its event hook pages read state none for deliveries",
		},
		docs: 'https://developer.okta.com/docs/concepts/event-hooks/',
	},
	{
		value: 'asana',
		label: 'Asana',
		// A delivery is an `events` array of compact events with no id: the key is the body hash.
		eventId: { kind: 'none' },
		signing: {
			unverifiable:
				"Asana hands its signing secret over in the handshake: the first POST carries X-Hook-Secret, to be echoed back, and later events are signed with it (X-Hook-Signature). These nodes cannot keep a secret learned that way (n8n credentials are read-only to nodes), and taking whatever secret arrives first would let a stranger who reaches the URL before Asana choose it. Answer the handshake with a Respond to Webhook node, and treat each event as a hint: Asana's events are compact (ids only), so read the resource from Asana's API before acting on it.",
		},
		contentTypes: ['application/json'],
		retries:
			'No success status within 10 s: resent for up to 24 hours, then given up; delivery is at most once and events cannot be replayed',
		retry: {
			keeps: 'unknown',
			renews: 'unknown',
			source:
				"unknown: Asana's webhooks guide gives the resend window, not what a resend keeps or renews",
		},
		timeout: { seconds: 10, docs: 'https://developers.asana.com/docs/webhooks-guide' },
		// The handshake's signing secret, and the signatures made with it.
		secretParts: { headers: ['X-Hook-Secret', 'X-Hook-Signature'] },
		docs: 'https://developers.asana.com/docs/webhooks-guide',
	},
] as const satisfies readonly ProviderDefinition[];
