import type { ProviderDefinition } from './providerTypes';
import { stripeStyleSigning } from './stripeStyleSigning';

/**
 * Developer tools and productivity senders. Each verifiable entry has its vector in
 * test/vectors/devTools.js: PagerDuty's, Mux's, WorkOS's and Fingerprint's from their own
 * libraries' tests, Linear's and Notion's signed or checked by their official npm packages. GitHub
 * is in established.ts.
 */
export const DEV_TOOLS = [
	{
		value: 'gitlab',
		label: 'GitLab',
		// Idempotency-Key stays the same across GitLab's resends of one delivery; X-Gitlab-Event-UUID on older GitLab.
		eventId: { kind: 'headers', names: ['Idempotency-Key', 'X-Gitlab-Event-UUID'] },
		signing: {
			unverifiable:
				"GitLab's secret token travels as it is in X-Gitlab-Token, a token compare over nothing signed, so whoever sees one delivery can forge others; where your GitLab offers a signing token (newer versions, signed the Standard Webhooks way with webhook-id, webhook-timestamp and webhook-signature), set one and choose Standard Webhooks instead.",
		},
		contentTypes: ['application/json'],
		retries:
			"Failures are logged; after 4 in a row the webhook is paused with a backoff of up to 1 day, after 40 it is disabled; a delivery resent by hand from the webhook's request history keeps its Idempotency-Key",
		retry: {
			keeps: 'Idempotency-Key (the same across automatic and manual resends of one delivery)',
			renews: 'unknown: nothing else is stated',
			source: 'https://docs.gitlab.com/user/project/integrations/webhooks/',
		},
		timeout: {
			seconds: 10,
			docs: 'https://gitlab.com/gitlab-com/gl-infra/production/-/issues/1228',
		},
		// The webhook's secret token, as it is, on every delivery.
		secretParts: { headers: ['X-Gitlab-Token'] },
		docs: 'https://docs.gitlab.com/user/project/integrations/webhooks/',
	},
	{
		value: 'pagerDuty',
		label: 'PagerDuty',
		eventId: { kind: 'body', path: ['event', 'id'] },
		signing: {
			algorithm: 'sha256',
			encoding: 'hex',
			secret: 'text',
			signatureHeaders: ['X-PagerDuty-Signature'],
			// `v1=<hex>,v1=<hex>`: one signature for each secret during a rotation; other versions are skipped.
			signature: { format: 'fields', separator: ',', signatureKey: 'v1' },
			signs: '{body}',
		},
		contentTypes: ['application/json'],
		retries:
			'No answer within 5 s, 5xx or 429: up to 4 retries (5 attempts) with backoff over about 20 minutes; another 4xx drops the delivery',
		retry: {
			keeps: 'unknown: the table keys on event.id; no page read says a retry keeps it',
			renews: 'unknown',
			source:
				"unknown: PagerDuty's pages read give the retry schedule, not what a retry keeps or renews",
		},
		timeout: {
			unknown: "no PagerDuty page read states it (the entry's retries say 5 s, unconfirmed here)",
		},
		docs: 'https://developer.pagerduty.com/docs/ZG9jOjExMDI5NTkz-verifying-signatures',
	},
	{
		value: 'linear',
		label: 'Linear',
		// The body has no id of its event and its webhookTimestamp changes on every attempt: the delivery header is the key.
		eventId: { kind: 'headers', names: ['Linear-Delivery'] },
		signing: {
			algorithm: 'sha256',
			encoding: 'hex',
			secret: 'text',
			signatureHeaders: ['Linear-Signature'],
			signature: { format: 'whole' },
			signs: '{body}',
			// Milliseconds, inside the signed body; Linear's SDK refuses one more than a minute away.
			timestamp: { from: 'body', path: ['webhookTimestamp'], unit: 'milliseconds' },
			toleranceSeconds: 60,
		},
		contentTypes: ['application/json'],
		retries: 'No 200 within 5 s: 3 retries, after about 1 minute, 1 hour and 6 hours',
		retry: {
			keeps: 'Linear-Delivery (the same on every retry) and the rest of the body',
			renews: 'webhookTimestamp inside the signed body, so Linear-Signature',
			source: 'https://linear.app/developers/webhooks',
		},
		timeout: { seconds: 5, docs: 'https://developers.linear.app/docs/graphql/webhooks' },
		docs: 'https://linear.app/developers/webhooks#securing-webhooks',
	},
	{
		value: 'notion',
		label: 'Notion',
		eventId: { kind: 'body', path: ['id'] },
		signing: {
			algorithm: 'sha256',
			encoding: 'hex',
			// The subscription's verification_token, which Notion posts once, unsigned, when the subscription is created.
			secret: 'text',
			signatureHeaders: ['X-Notion-Signature'],
			signature: { format: 'whole', prefix: 'sha256=' },
			signs: '{body}',
		},
		contentTypes: ['application/json'],
		retries:
			"Failed deliveries are retried with backoff; every attempt keeps the event's id and counts itself in attempt_number",
		retry: {
			keeps: 'The event id (body.id)',
			renews: 'attempt_number in the signed body, so X-Notion-Signature',
			renewedBodyFields: [['attempt_number']],
			source: 'https://developers.notion.com/reference/webhooks',
		},
		timeout: { unknown: "Notion's webhook pages read state no time limit" },
		// Posted once, unsigned, when the subscription is created: the signing secret itself.
		secretParts: { body: [['verification_token']] },
		docs: 'https://developers.notion.com/reference/webhooks',
	},
	{
		value: 'mux',
		label: 'Mux',
		eventId: { kind: 'body', path: ['id'] },
		signing: stripeStyleSigning('Mux-Signature'),
		contentTypes: ['application/json'],
		retries: 'No 2xx within 5 s: retried with increasing delays for up to 24 hours',
		retry: {
			keeps: 'The event id (body.id)',
			renews:
				'The attempts array in the signed body; t and v1 of Mux-Signature (the SDK refuses a t over 300 s old)',
			renewedBodyFields: [['attempts']],
			source:
				'muxinc/mux-node-sdk@33b6bc07f176e5b1022bdab4b7b74b5a73193418 src/resources/webhooks.ts',
		},
		timeout: { seconds: 5, docs: 'https://docs.mux.com/docs/webhooks' },
		docs: 'https://www.mux.com/docs/core/verify-webhook-signatures',
	},
	{
		value: 'workOs',
		label: 'WorkOS',
		eventId: { kind: 'body', path: ['id'] },
		// `t=<milliseconds>, v1=<hex>` (a space after the comma; fields are read trimmed), the
		// milliseconds signed as sent; WorkOS's SDKs allow 180 s by default.
		signing: stripeStyleSigning('WorkOS-Signature', 'milliseconds', 180),
		contentTypes: ['application/json'],
		retries:
			'No 200 (or a timeout): retried up to 12 times with exponential backoff over 3 days in production; for several minutes only in other environments',
		retry: {
			keeps: 'The event id (body.id)',
			renews:
				'unknown: a new t and v1 of WorkOS-Signature is implied (SDKs refuse a t over 180 s old) but not stated',
			source: "unknown: WorkOS's webhook page gives the schedule, not what a retry keeps or renews",
		},
		timeout: { unknown: "WorkOS's webhook pages read state no time limit" },
		docs: 'https://workos.com/docs/events/data-syncing/webhooks',
	},
	{
		value: 'fingerprint',
		label: 'Fingerprint',
		// Server API v4 payloads; the legacy (v3) payload names it requestId. The retry keeps it.
		eventId: { kind: 'body', path: ['event_id'] },
		signing: {
			algorithm: 'sha256',
			encoding: 'hex',
			secret: 'text',
			signatureHeaders: ['FPJS-Event-Signature'],
			// `v1=<hex>,v1=<hex>`: a comma-separated list; versions other than v1 are skipped.
			signature: { format: 'fields', separator: ',', signatureKey: 'v1' },
			signs: '{body}',
		},
		contentTypes: ['application/json'],
		retries: 'No 2xx within 3 s: retried once, 5 minutes later, with the same request id',
		retry: {
			keeps: 'The event id (event_id; requestId in v3 payloads): the one retry keeps it',
			renews: 'unknown',
			source: 'https://dev.fingerprint.com/docs/webhooks-security',
		},
		timeout: { seconds: 3, docs: 'https://docs.fingerprint.com/docs/webhooks' },
		docs: 'https://dev.fingerprint.com/docs/webhooks-security',
	},
] as const satisfies readonly ProviderDefinition[];
