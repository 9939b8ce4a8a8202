import type { ProviderDefinition } from './providerTypes';
import { hubSignatureSigning } from './hubSignatureSigning';
import { slackStyleSigning } from './slackStyleSigning';
import { standardWebhooksSigning } from './standardWebhooksSigning';
import { stripeStyleSigning } from './stripeStyleSigning';

/** The senders the package started with; values stored in workflows since before the table was data. */
export const ESTABLISHED = [
	{
		value: 'stripe',
		label: 'Stripe',
		eventId: { kind: 'body', path: ['id'] },
		signing: stripeStyleSigning('Stripe-Signature'),
		contentTypes: ['application/json'],
		retries:
			'Any non-2xx (3xx too) fails; live mode retries with backoff for up to 3 days; manual resends for 30 days',
		resend: {
			how: "Workbench → Webhooks → the destination → Event deliveries → the event → send it again, or `stripe events resend evt_…` in Workbench's Shell (no terminal needed)",
			docs: 'https://docs.stripe.com/workbench/webhooks',
		},
		retry: {
			keeps: 'The event id (body.id, evt_…) and the body bytes',
			renews: 't and v1 of Stripe-Signature: each attempt is signed with a new timestamp',
			source: 'https://docs.stripe.com/webhooks',
		},
		timeout: {
			unknown:
				'no Stripe page read states a number (its delivery log has a Timed out status; third-party tables disagree: 20 s, 30 s)',
		},
		docs: 'https://docs.stripe.com/webhooks#verify-manually',
	},
	{
		value: 'github',
		label: 'GitHub',
		eventId: { kind: 'headers', names: ['X-GitHub-Delivery'] },
		signing: hubSignatureSigning,
		contentTypes: ['application/json', 'application/x-www-form-urlencoded'],
		retries:
			'No automatic retry: failures are recorded; redelivery is manual or through the REST API (3 days)',
		resend: {
			how: 'Settings → Webhooks → the webhook → Recent Deliveries → the delivery → Redeliver (deliveries of the past 3 days)',
			docs: 'https://docs.github.com/en/webhooks/testing-and-troubleshooting-webhooks/redelivering-webhooks',
		},
		retry: {
			keeps: 'X-GitHub-Delivery (the same GUID on a redelivery) and the body',
			renews:
				'Nothing signed: X-Hub-Signature-256 covers the body alone; no automatic retry, redelivery is manual',
			source:
				'https://docs.github.com/en/webhooks/testing-and-troubleshooting-webhooks/redelivering-webhooks',
		},
		// Sent once when a hook is created, signed like any delivery. X-GitHub-Event is not signed, so the
		// signed body must be a ping's too (only a ping carries `zen`): a real event stays an event. A
		// hook whose content type is form sends the same JSON as `payload=…`, the signature over the form.
		handshake: {
			name: 'ping',
			match: [
				{ on: 'header', name: 'X-GitHub-Event', equals: 'ping' },
				{ on: 'bodyField', path: ['zen'] },
			],
			signed: true,
			formJsonField: 'payload',
			answer: { kind: 'fixedJson', body: { status: 'pong' } },
		},
		timeout: {
			seconds: 10,
			docs: 'https://docs.github.com/en/webhooks/using-webhooks/handling-failed-webhook-deliveries',
		},
		docs: 'https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries',
	},
	{
		value: 'shopify',
		label: 'Shopify',
		// X-Shopify-Event-Id is one event across subscriptions (Shopify's advice for dropping duplicates); X-Shopify-Webhook-Id is per delivery.
		eventId: { kind: 'headers', names: ['X-Shopify-Event-Id', 'X-Shopify-Webhook-Id'] },
		signing: {
			algorithm: 'sha256',
			encoding: 'base64',
			secret: 'text',
			signatureHeaders: ['X-Shopify-Hmac-Sha256'],
			signature: { format: 'whole' },
			signs: '{body}',
		},
		contentTypes: ['application/json'],
		retries: 'Non-2xx or no answer within 5 s: 8 retries over 4 hours',
		retry: {
			keeps:
				'X-Shopify-Event-Id and the original payload of the trigger (retries send the original payload)',
			renews:
				'unknown: whether X-Shopify-Webhook-Id or X-Shopify-Triggered-At change per retry is not stated',
			source: 'https://shopify.dev/changelog/updates-to-webhook-retry-mechanism',
		},
		timeout: {
			seconds: 5,
			docs: 'https://community.shopify.com/c/Shopify-APIs-SDKs/Webhook-on-create-orders-called-twice/m-p/543046',
		},
		docs: 'https://shopify.dev/docs/apps/build/webhooks/subscribe/https#step-2-validate-the-origin-of-your-webhook-to-ensure-its-coming-from-shopify',
	},
	{
		value: 'standardWebhooks',
		label: 'Standard Webhooks',
		eventId: { kind: 'headers', names: ['webhook-id'] },
		signing: standardWebhooksSigning('webhook'),
		contentTypes: ['application/json'],
		retries:
			'2xx is success, 410 disables the endpoint, anything else is retried (senders choose the schedule)',
		retry: {
			keeps: 'webhook-id (the same on every retry of a message) and the body',
			renews: 'webhook-timestamp and webhook-signature',
			source:
				'https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md',
		},
		timeout: {
			unknown:
				'each sender of Standard Webhooks chooses its own; the entry is the scheme, not a sender',
		},
		docs: 'https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md',
	},
	{
		value: 'svix',
		label: 'Svix',
		eventId: { kind: 'headers', names: ['svix-id'] },
		signing: standardWebhooksSigning('svix'),
		contentTypes: ['application/json'],
		retries:
			'Non-2xx: retried with backoff for about 28 hours (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h)',
		retry: {
			keeps: 'svix-id (the same on every retry of a message) and the body',
			renews: 'svix-timestamp and svix-signature',
			source: 'https://docs.svix.com/receiving/verifying-payloads/how-manual',
		},
		timeout: { seconds: 15, docs: 'https://docs.svix.com/retries' },
		docs: 'https://docs.svix.com/receiving/verifying-payloads/how-manual',
	},
	{
		value: 'slack',
		label: 'Slack',
		eventId: { kind: 'body', path: ['event_id'] },
		signing: slackStyleSigning('X-Slack-Signature', 'X-Slack-Request-Timestamp'),
		contentTypes: ['application/json', 'application/x-www-form-urlencoded'],
		retries:
			'Non-2xx or no answer within 3 s: up to 3 retries (about immediately, 1 min, 5 min) with X-Slack-Retry-Num',
		retry: {
			keeps: 'The body event_id (and the event)',
			renews:
				'Adds X-Slack-Retry-Num and X-Slack-Retry-Reason (unsigned); a new timestamp and signature per retry is not stated',
			source: 'https://api.slack.com/apis/events-api#retries',
		},
		// Sent when the Request URL is saved, signed like any event: answer the challenge (JSON is one of
		// the three forms Slack accepts).
		handshake: {
			name: 'url_verification',
			match: [{ on: 'bodyField', path: ['type'], equals: 'url_verification' }],
			signed: true,
			answer: { kind: 'echoBodyField', path: ['challenge'], as: 'json', name: 'challenge' },
		},
		timeout: { seconds: 3, docs: 'https://docs.slack.dev/tools/bolt-python/concepts/acknowledge' },
		// The legacy verification token Slack still sends in every event and slash command: a
		// credential of its own, long replaced by the signing secret.
		secretParts: { body: [['token']] },
		docs: 'https://api.slack.com/authentication/verifying-requests-from-slack',
	},
] as const satisfies readonly ProviderDefinition[];
