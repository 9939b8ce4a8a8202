import type { ProviderDefinition } from './providerTypes';

/**
 * Payments and commerce senders (Stripe and Shopify are in established.ts). Each verifiable entry is
 * proven by a vector in test/vectors/commerce.js, taken from the provider's own SDK tests.
 */
export const COMMERCE = [
	{
		value: 'paddle',
		label: 'Paddle Billing',
		// event_id is the event (the same on every retry and every destination); notification_id is per destination.
		eventId: { kind: 'body', path: ['event_id'] },
		signing: {
			algorithm: 'sha256',
			encoding: 'hex',
			secret: 'text',
			signatureHeaders: ['Paddle-Signature'],
			// `ts=…;h1=…`; several `h1` while a secret is rotated; other fields ignored.
			signature: { format: 'fields', separator: ';', signatureKey: 'h1', timestampKey: 'ts' },
			signs: '{timestamp}:{body}',
			timestamp: { from: 'signature', unit: 'seconds' },
			// @paddle/paddle-node-sdk's WebhooksValidator refuses a ts more than 5 s old (MAX_VALID_TIME_DIFFERENCE).
			toleranceSeconds: 5,
		},
		contentTypes: ['application/json'],
		retries:
			'Non-200 or no answer within 5 s: live accounts retry 60 times over 3 days (20 in the first hour), sandbox 3 times within 15 minutes; then the notification is failed and can be replayed through the API',
		resend: {
			how: "Paddle's replay a notification (POST /notifications/{notification_id}/replay, for a delivered or failed notification; an HTTP Request node can call it): a new notification of the same event_id",
			docs: 'https://developer.paddle.com/api-reference/notifications/replay-notification',
		},
		retry: {
			keeps:
				'event_id in the body; notification_id on automatic retries (a replay gets a new notification_id, same event_id)',
			renews:
				'ts and h1 of Paddle-Signature (each attempt signed anew: the SDK refuses a ts over 5 s old); notification_id on a replay',
			renewedBodyFields: [['notification_id']],
			source: 'https://developer.paddle.com/api-reference/notifications/replay-notification',
		},
		timeout: { seconds: 5, docs: 'https://developer.paddle.com/webhooks/respond-to-webhooks' },
		docs: 'https://developer.paddle.com/webhooks/signature-verification',
	},
	{
		value: 'square',
		label: 'Square',
		// Square's own advice: event_id is the idempotency value of each notification.
		eventId: { kind: 'body', path: ['event_id'] },
		signing: {
			algorithm: 'sha256',
			encoding: 'base64',
			secret: 'text',
			signatureHeaders: ['x-square-hmacsha256-signature'],
			signature: { format: 'whole' },
			// The notification URL exactly as entered in Square's subscription, then the raw body: n8n's
			// webhook URL must be that same URL (a proxy that rewrites it makes every delivery a mismatch).
			signs: '{url}{body}',
		},
		contentTypes: ['application/json'],
		retries:
			'Non-2xx or no answer within 10 s: retried for up to 72 hours (older pages of Square say 24 or 48), then discarded; a subscription with no 2xx for three weeks is disabled',
		retry: {
			keeps: 'event_id in the body (Square names it the idempotency value)',
			renews: 'unknown',
			source:
				"unknown: Square's pages read name event_id for duplicates but not what a retry changes",
		},
		timeout: { seconds: 10, docs: 'https://developer.squareup.com/docs/webhooks/troubleshooting' },
		docs: 'https://developer.squareup.com/docs/webhooks/step3validate',
	},
	{
		value: 'razorpay',
		label: 'Razorpay',
		// The payload carries no event id; Razorpay's advice is to skip repeats by this header.
		eventId: { kind: 'headers', names: ['X-Razorpay-Event-Id'] },
		signing: {
			algorithm: 'sha256',
			encoding: 'hex',
			secret: 'text',
			signatureHeaders: ['X-Razorpay-Signature'],
			signature: { format: 'whole' },
			signs: '{body}',
		},
		contentTypes: ['application/json'],
		retries:
			'Non-2xx: retried with exponential backoff for 24 hours after the event was created; a webhook failing for 24 hours is disabled',
		retry: {
			keeps: "X-Razorpay-Event-Id (Razorpay's advice for skipping repeats)",
			renews: 'unknown',
			source:
				'unknown: razorpay.com/docs/webhooks names the event id header for duplicates, not what a retry changes',
		},
		timeout: {
			unknown:
				"Razorpay's webhook pages read count any non-2xx as a failure but state no time limit",
		},
		docs: 'https://razorpay.com/docs/webhooks/validate-test/',
	},
	{
		value: 'coinbaseCommerce',
		label: 'Coinbase Commerce',
		// The top-level id is the webhook delivery; event.id is the event itself.
		eventId: { kind: 'body', path: ['event', 'id'] },
		signing: {
			algorithm: 'sha256',
			encoding: 'hex',
			secret: 'text',
			signatureHeaders: ['X-CC-Webhook-Signature'],
			signature: { format: 'whole' },
			signs: '{body}',
		},
		contentTypes: ['application/json'],
		retries: 'No 200: retried with exponential backoff for up to 3 days, at most an hour apart',
		retry: {
			keeps: 'event.id in the body',
			renews:
				'attempt_number in the signed body, so X-CC-Webhook-Signature; scheduled_for and the top-level id per attempt: not stated',
			renewedBodyFields: [['attempt_number']],
			source: 'https://docs.cdp.coinbase.com/commerce/api-arcitecture/webhooks-fields',
		},
		timeout: { unknown: "Coinbase Commerce's webhook pages read state no time limit" },
		docs: 'https://docs.cdp.coinbase.com/commerce/api-arcitecture/webhooks-security',
	},
	{
		value: 'paypal',
		label: 'PayPal',
		eventId: { kind: 'body', path: ['id'] },
		signing: {
			unverifiable:
				"PayPal signs with RSA under a certificate fetched from the URL in the PAYPAL-CERT-URL header (over the transmission id, its time, your webhook id and a CRC32 of the body), which the request alone cannot prove: call PayPal's verify-webhook-signature API (POST /v1/notifications/verify-webhook-signature) with the PAYPAL-* headers and the body, and act only on verification_status SUCCESS.",
		},
		contentTypes: ['application/json'],
		retries: 'Non-2xx: resent up to 25 times over 3 days',
		retry: {
			keeps: 'unknown: the table keys on body.id; no page read says a resend keeps it',
			renews: 'unknown',
			source:
				"unknown: PayPal's webhook pages read say resends happen, not what a resend keeps or renews",
		},
		timeout: { unknown: "PayPal's webhook pages read state no time limit" },
		docs: 'https://developer.paypal.com/api/rest/webhooks/rest/',
	},
	{
		value: 'chargebee',
		label: 'Chargebee',
		// Chargebee's advice: the event id identifies duplicates from retries.
		eventId: { kind: 'body', path: ['id'] },
		signing: {
			unverifiable:
				"Chargebee does not sign its webhooks, it only sends the HTTP Basic Auth credentials you give it: protect the Webhook node with Basic Auth and, before acting, fetch the event from Chargebee's Retrieve an Event API by its id.",
		},
		contentTypes: ['application/json'],
		retries:
			'Non-2xx or timeout: up to 7 retries (2 min, 6 min, 30 min, 1 h, 5 h, 1 day, 2 days), the last about 3 days 7 hours after the event',
		retry: {
			keeps: 'The event id (body.id): Chargebee says it identifies duplicates from retries',
			renews: 'unknown',
			source: 'https://apidocs.chargebee.com/docs/api/events',
		},
		timeout: {
			unknown:
				'Chargebee names a connection, a read and a total timeout without giving their values',
		},
		docs: 'https://apidocs.chargebee.com/docs/api/events',
	},
] as const satisfies readonly ProviderDefinition[];
