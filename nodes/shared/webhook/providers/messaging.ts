import type { ProviderDefinition } from './providerTypes';
import { slackStyleSigning } from './slackStyleSigning';

/** Both Discord endpoints sign alike: Ed25519 over the timestamp and the body. */
const DISCORD_SIGNING = {
	algorithm: 'ed25519',
	encoding: 'hex',
	// The application's Public Key as the Developer Portal shows it (64 hex digits).
	secret: 'publicKeyHex',
	signatureHeaders: ['X-Signature-Ed25519'],
	signature: { format: 'whole' },
	signs: '{timestamp}{body}',
	// Discord's own library checks no window; the nodes' default tolerance applies.
	timestamp: { from: 'header', header: 'X-Signature-Timestamp', unit: 'seconds' },
} as const;

/** Messaging, email, forms and meetings: the senders n8n users connect for conversations and bookings. */
export const MESSAGING = [
	{
		// The Interactions Endpoint URL only: Webhook Events are `discordWebhookEvents` below.
		value: 'discord',
		label: 'Discord',
		eventId: { kind: 'body', path: ['id'] },
		signing: DISCORD_SIGNING,
		contentTypes: ['application/json'],
		retries:
			'Interactions are not retried: answer within 3 s or the user sees the interaction fail',
		retry: {
			keeps: 'One attempt only: interactions are not retried',
			renews: 'Nothing: no retry',
			source:
				'https://discord.com/developers/docs/interactions/receiving-and-responding#security-and-authorization',
		},
		// PING, Ed25519-signed like any interaction, when the Interactions Endpoint URL is saved (Discord
		// also sends it badly signed then and expects the 401 the invalid output leads to).
		handshake: {
			name: 'PING',
			// No `event`: a Webhook Event (WebhookType.EVENT is 1 too) sent here by mistake stays an event.
			match: [
				{ on: 'bodyField', path: ['type'], equals: 1 },
				{ on: 'bodyField', path: ['event'], absent: true },
			],
			signed: true,
			answer: { kind: 'fixedJson', body: { type: 1 } },
		},
		timeout: {
			seconds: 3,
			docs: 'https://discord.com/developers/docs/interactions/receiving-and-responding#responding-to-an-interaction',
		},
		// No secretParts: the interaction's `token` is stored with an Answer First delivery, a redriven step
		// answers with it, and Discord expires it 15 minutes after the interaction.
		docs: 'https://discord.com/developers/docs/interactions/receiving-and-responding#security-and-authorization',
	},
	{
		// Discord's two endpoints number their PING oppositely (InteractionType.PING = 1 answered 200
		// {"type":1}; WebhookType.PING = 0 answered 204, and an EVENT is 1) and a body does not say which
		// endpoint it came to: discord-interactions itself tells them apart by route only (two
		// middlewares). So each URL is its own entry, as its own URL in the Developer Portal.
		value: 'discordWebhookEvents',
		label: 'Discord Webhook Events',
		// An event has no id (event.type and event.timestamp only): the key is the body hash.
		eventId: { kind: 'none' },
		signing: DISCORD_SIGNING,
		contentTypes: ['application/json'],
		retries: 'unknown: the Webhook Events page read states no retry schedule',
		retry: {
			keeps: 'unknown',
			renews: 'unknown',
			source: "unknown: Discord's Webhook Events page read says nothing of retries",
		},
		// PING (type 0), signed, when the Webhook Events URL is saved: 204 with no body.
		handshake: {
			name: 'PING',
			match: [{ on: 'bodyField', path: ['type'], equals: 0 }],
			signed: true,
			answer: { kind: 'noContent' },
			statusCode: 204,
		},
		timeout: { unknown: "Discord's Webhook Events page read states no time limit" },
		docs: 'https://discord.com/developers/docs/events/webhook-events#preparing-for-events',
	},
	{
		value: 'twilio',
		label: 'Twilio',
		// The same on a retry of one callback; MessageSid or CallSid repeat across status callbacks.
		eventId: { kind: 'headers', names: ['I-Twilio-Idempotency-Token'] },
		signing: {
			algorithm: 'sha1',
			encoding: 'base64',
			// The account's Auth Token.
			secret: 'text',
			signatureHeaders: ['X-Twilio-Signature'],
			signature: { format: 'whole' },
			// The full webhook URL (query included), then each POST parameter sorted by name, name then value.
			signs: '{url}{form}',
		},
		// JSON callbacks sign the URL with a bodySHA256 query parameter instead of the form: not covered here.
		contentTypes: ['application/x-www-form-urlencoded'],
		retries:
			'No retry by default; connection overrides on the URL (#rc=…) retry on a failed connection or timeout, and voice falls back to the Fallback URL',
		retry: {
			keeps: 'I-Twilio-Idempotency-Token (the same on a retry of one callback)',
			renews:
				'unknown: X-Twilio-Signature covers the URL and form, no timestamp; other changes not stated',
			source: 'https://www.twilio.com/docs/usage/webhooks/webhooks-connection-overrides',
		},
		timeout: { seconds: 15, docs: 'https://www.twilio.com/docs/api/errors/11205' },
		docs: 'https://www.twilio.com/docs/usage/webhooks/webhooks-security',
	},
	{
		value: 'sendGrid',
		label: 'SendGrid',
		// A delivery is a JSON array of events, each with its own sg_event_id: no id names the request,
		// so the key is the body hash (an event re-sent inside another batch is not caught).
		eventId: { kind: 'none' },
		signing: {
			algorithm: 'ecdsaP256',
			encoding: 'base64',
			// The Signed Event Webhook's verification key, base64 DER, as SendGrid shows it.
			secret: 'publicKeyBase64',
			signatureHeaders: ['X-Twilio-Email-Event-Webhook-Signature'],
			signature: { format: 'whole' },
			signs: '{timestamp}{body}',
			// SendGrid's own library checks no window; the nodes' default tolerance applies.
			timestamp: {
				from: 'header',
				header: 'X-Twilio-Email-Event-Webhook-Timestamp',
				unit: 'seconds',
			},
		},
		contentTypes: ['application/json'],
		retries:
			'Non-2xx: the batch is retried for up to 24 hours; one event can arrive again in another batch',
		retry: {
			keeps:
				'unknown: each event keeps its sg_event_id, but a retried event can come in another batch',
			renews: 'unknown',
			source: "unknown: SendGrid's pages read say the batch is retried, not what a retry renews",
		},
		timeout: { unknown: "SendGrid's Event Webhook pages read state no time limit" },
		docs: 'https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/getting-started-event-webhook-security-features',
	},
	{
		value: 'mailgun',
		label: 'Mailgun',
		eventId: { kind: 'body', path: ['event-data', 'id'] },
		signing: {
			unverifiable:
				"Mailgun's signature covers only its timestamp and token, not the event data, so anyone holding one genuine delivery can attach its signature to any event; protect the URL with a secret path or Basic Auth and fetch the event from Mailgun's Events API before acting on it.",
		},
		contentTypes: ['application/json'],
		retries:
			'Any code but 200 or 406: retried for 8 hours (5 min, 10 min, 15 min, 1 h, 2 h, 4 h); delivered events are not retried',
		retry: {
			keeps: 'unknown: the table keys on event-data.id; no page read says a retry keeps it',
			renews: 'unknown',
			source:
				"unknown: Mailgun's pages read give the schedule, not whether signature.timestamp or token change per retry",
		},
		timeout: { unknown: "Mailgun's webhook pages read list the retry schedule but no time limit" },
		// The body's signature (timestamp, token, signature): attachable to any event, as `signing` says.
		secretParts: { body: [['signature']] },
		docs: 'https://documentation.mailgun.com/docs/mailgun/user-manual/webhooks/securing-webhooks',
	},
	{
		value: 'postmark',
		label: 'Postmark',
		// Bounce and SpamComplaint records carry their own ID; Delivery, Open, Click and inbound
		// records share their MessageID across events, so those fall back to the body hash.
		eventId: { kind: 'body', path: ['ID'] },
		signing: {
			unverifiable:
				"Postmark signs nothing: put Basic Auth credentials in the webhook URL (https://user:pass@host/…) and check them, or allow only Postmark's published IP addresses.",
		},
		contentTypes: ['application/json'],
		retries:
			'Non-200: retried with growing intervals (inbound: 10 retries over about 10.5 hours); a 403 stops them',
		retry: {
			keeps: 'unknown',
			renews: 'unknown',
			source: "unknown: Postmark's pages read give the schedule, not what a retry keeps or renews",
		},
		timeout: { unknown: "Postmark's webhook pages read state no time limit" },
		docs: 'https://postmarkapp.com/developer/webhooks/webhooks-overview',
	},
	{
		value: 'zoom',
		label: 'Zoom',
		// Zoom's events carry no id (event, event_ts, payload): the key is the body hash, which a retry
		// of the same notification repeats.
		eventId: { kind: 'none' },
		// The secret is the app's Secret Token.
		signing: slackStyleSigning('x-zm-signature', 'x-zm-request-timestamp'),
		contentTypes: ['application/json'],
		retries:
			'No 200 or 204 within 3 s: 3 retries (5 min, then 20 min, then 60 min later), about 85 minutes in all',
		retry: {
			keeps: 'unknown: Zoom says it sends the notification again, not what stays',
			renews: 'unknown: a new x-zm-request-timestamp per retry is not stated',
			source: 'https://developers.zoom.us/blog/webhook-delays',
		},
		// Signed like any event, when the endpoint is validated and again periodically: answer within 3 s.
		handshake: {
			name: 'endpoint.url_validation',
			match: [{ on: 'bodyField', path: ['event'], equals: 'endpoint.url_validation' }],
			signed: true,
			answer: {
				kind: 'hmacBodyField',
				path: ['payload', 'plainToken'],
				plainName: 'plainToken',
				hmacName: 'encryptedToken',
			},
		},
		timeout: { seconds: 3, docs: 'https://developers.zoom.us/blog/webhook-delays' },
		docs: 'https://developers.zoom.us/docs/api/webhooks/#verify-webhook-events',
	},
	{
		value: 'line',
		label: 'LINE Messaging API',
		// Each event carries its webhookEventId, the same on a redelivery: the first event's, since a
		// delivery is an events array (the Console's verify request, with no events, falls back to the body hash).
		eventId: { kind: 'body', path: ['events', '0', 'webhookEventId'] },
		signing: {
			algorithm: 'sha256',
			encoding: 'base64',
			// The channel's Channel secret.
			secret: 'text',
			signatureHeaders: ['x-line-signature'],
			signature: { format: 'whole' },
			signs: '{body}',
		},
		contentTypes: ['application/json'],
		retries:
			'Not resent by default; with Webhook redelivery on, a failed event is redelivered with the same webhookEventId and deliveryContext.isRedelivery true',
		retry: {
			keeps: "Each event's webhookEventId (the same on a redelivery)",
			renews:
				'deliveryContext.isRedelivery becomes true in each redelivered event, so x-line-signature',
			renewedBodyFields: [['events', '*', 'deliveryContext', 'isRedelivery']],
			source: 'https://developers.line.biz/en/reference/messaging-api/#webhook-event-objects',
		},
		timeout: {
			seconds: 2,
			docs: 'https://developers.line.biz/en/docs/messaging-api/check-webhook-error-statistics',
		},
		// No secretParts: each event's replyToken is stored with an Answer First delivery, a redriven step
		// replies with it, and LINE accepts it once, shortly after the event.
		docs: 'https://developers.line.biz/en/reference/messaging-api/#signature-validation',
	},
	{
		value: 'pusher',
		label: 'Pusher Channels',
		// A delivery is time_ms and an events array (several with batch webhooks), with no id: the key is
		// the body hash, which a retry of the same webhook repeats.
		eventId: { kind: 'none' },
		signing: {
			algorithm: 'sha256',
			encoding: 'hex',
			// The secret of the app key named in X-Pusher-Key (the app's oldest active key); that header
			// is not checked here.
			secret: 'text',
			signatureHeaders: ['X-Pusher-Signature'],
			signature: { format: 'whole' },
			signs: '{body}',
		},
		contentTypes: ['application/json'],
		retries: 'Non-2xx or no answer within 4 s: retried with exponential backoff for 5 minutes',
		retry: {
			keeps: 'unknown',
			renews: 'unknown',
			source:
				"unknown: Pusher's pages read give the retry window, not what a retry keeps or renews",
		},
		timeout: {
			seconds: 4,
			docs: 'https://docs.bird.com/pusher/channels/channels/webhooks/channels-webhook-timeouts-and-retries',
		},
		docs: 'https://pusher.com/docs/channels/server_api/webhooks/',
	},
	{
		value: 'streamChat',
		label: 'Stream Chat',
		// Events carry no id of their own; X-Webhook-Id names the call and stays the same on its retries.
		eventId: { kind: 'headers', names: ['X-Webhook-Id'] },
		signing: {
			algorithm: 'sha256',
			encoding: 'hex',
			// The app's API secret.
			secret: 'text',
			signatureHeaders: ['X-Signature'],
			signature: { format: 'whole' },
			// The uncompressed body: leave the Dashboard's payload compression (gzip) off.
			signs: '{body}',
		},
		contentTypes: ['application/json'],
		retries:
			'Push webhook: 408, 429 or 5xx and timeouts up to 3 attempts, network errors 2; 6 s per request, 15 s in all',
		retry: {
			keeps: 'X-Webhook-Id (consistent between retries of one call)',
			renews: 'X-Webhook-Attempt (unsigned, from 1); a body change is not stated',
			source: 'https://getstream.io/chat/docs/node/webhooks_overview/',
		},
		timeout: { seconds: 6, docs: 'https://getstream.io/chat/docs/php/push_webhook/' },
		docs: 'https://getstream.io/chat/docs/node/webhooks_overview/',
	},
	{
		value: 'typeform',
		label: 'Typeform',
		// event_id names the delivery's event (form_response.token names the response).
		eventId: { kind: 'body', path: ['event_id'] },
		signing: {
			algorithm: 'sha256',
			encoding: 'base64',
			// The secret set on the webhook (Webhooks API or the Connect panel).
			secret: 'text',
			signatureHeaders: ['Typeform-Signature'],
			signature: { format: 'whole', prefix: 'sha256=' },
			signs: '{body}',
		},
		contentTypes: ['application/json'],
		retries:
			'Non-2xx or no answer within 30 s: 429, 408, 503 and 423 are retried every 2 to 3 minutes for up to 10 hours',
		retry: {
			keeps: 'unknown: the table keys on event_id; no page read says a retry keeps it',
			renews: 'unknown',
			source:
				"unknown: Typeform's pages read give the retry rules, not what a retry keeps or renews",
		},
		timeout: { seconds: 30, docs: 'https://typeform.com/developers/webhooks' },
		docs: 'https://www.typeform.com/developers/webhooks/secure-your-webhooks/',
	},
] as const satisfies readonly ProviderDefinition[];
