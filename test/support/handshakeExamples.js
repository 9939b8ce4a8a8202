// The senders' documented handshake examples (docs/signatures.md, "Handshakes: connecting a sender"), and the answer
// each sender checks, computed here without the package: shared by the engine tests
// (test/integration/handshakes.test.js) and the real-n8n suite (test/e2e/handshakes.e2e.mjs).
const { createHmac } = require('node:crypto');

const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';
/** Every answer that echoes a value of the request carries it (handshakes.ts `echoed`). */
const NOSNIFF = { 'x-content-type-options': 'nosniff' };

/**
 * Each signed handshake's documented example (the senders' docs, listed in docs/signatures.md) and the answer the
 * sender checks, computed here without the package: `expected(secret)`.
 */
const SIGNED_EXAMPLES = {
	// https://api.slack.com/events/url_verification
	slack: {
		body: '{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}',
		headers: {},
		expected: () => ({
			statusCode: 200,
			headers: { 'content-type': JSON_TYPE, ...NOSNIFF },
			body: '{"challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}',
		}),
		// A real event of the same sender: reserved as any event.
		event:
			'{"token":"x","team_id":"T1","type":"event_callback","event_id":"Ev1","event":{"type":"app_mention"}}',
	},
	// https://developers.zoom.us/docs/api/webhooks/#validate-your-webhook-endpoint
	zoom: {
		body: '{"payload":{"plainToken":"qgg8vlvZRS6UYooatFL8Aw"},"event_ts":1654503849680,"event":"endpoint.url_validation"}',
		headers: {},
		expected: (secret) => ({
			statusCode: 200,
			headers: { 'content-type': JSON_TYPE, ...NOSNIFF },
			body: `{"plainToken":"qgg8vlvZRS6UYooatFL8Aw","encryptedToken":"${createHmac('sha256', secret).update('qgg8vlvZRS6UYooatFL8Aw').digest('hex')}"}`,
		}),
		event:
			'{"event":"meeting.started","event_ts":1654503849680,"payload":{"account_id":"a","object":{"id":"1"}}}',
	},
	// https://discord.com/developers/docs/interactions/receiving-and-responding#receiving-an-interaction
	discord: {
		body: '{"application_id":"1","id":"2","token":"t","type":1,"user":{"id":"3"},"version":1}',
		headers: {},
		expected: () => ({
			statusCode: 200,
			headers: { 'content-type': JSON_TYPE },
			body: '{"type":1}',
		}),
		event:
			'{"application_id":"1","id":"4","token":"t","type":2,"data":{"name":"hello"},"version":1}',
	},
	// https://discord.com/developers/docs/events/webhook-events#preparing-for-events: the PING is
	// WebhookType.PING (0), answered 204 with no body as discord-interactions' middleware answers it.
	discordWebhookEvents: {
		body: '{"version":1,"application_id":"1","type":0}',
		headers: {},
		expected: () => ({ statusCode: 204, headers: {}, body: '' }),
		// WebhookType.EVENT is 1, Interactions' PING number: an event, never the handshake.
		event:
			'{"version":1,"application_id":"1","type":1,"event":{"type":"APPLICATION_AUTHORIZED","timestamp":"2024-10-18T14:42:53.064834","data":{"user":{"id":"3"}}}}',
	},
	// https://docs.github.com/en/webhooks/webhook-events-and-payloads#ping
	github: {
		body: '{"zen":"Design for failure.","hook_id":12345678,"hook":{"type":"Repository","id":12345678,"name":"web","active":true,"events":["push"],"config":{"content_type":"json","insecure_ssl":"0","url":"https://example.com/webhook"}}}',
		headers: {
			'x-github-event': 'ping',
			'x-github-delivery': 'a1b2c3d4-0000-4000-8000-000000000001',
		},
		expected: () => ({
			statusCode: 200,
			headers: { 'content-type': JSON_TYPE },
			body: '{"status":"pong"}',
		}),
		event: '{"ref":"refs/heads/main","after":"abc","repository":{"id":1}}',
	},
	// The verification request twitch-cli's verify-subscription sends (the body of
	// internal/events/verify/subscription_verify.go at the commit test/vectors/platforms.js names):
	// https://dev.twitch.tv/docs/eventsub/handling-webhook-events/#responding-to-a-challenge-request
	twitchEventSub: {
		body: '{"challenge":"9a1f3e6c-2d8b-4c57-b0e4-71f5a8c3d926","subscription":{"id":"3c9e7a41-5b2d-4f6e-8a19-6d0c2b7e4f58","status":"webhook_callback_verification_pending","type":"channel.subscribe","version":"1","condition":{"broadcaster_user_id":"48371925"},"transport":{"method":"webhook","callback":"https://example.com/webhook"},"created_at":"2026-03-11T17:51:16.123456789Z","cost":0}}',
		headers: {
			'twitch-eventsub-message-id': '0b5d2c1e-7f3a-4e8b-9c61-2a4f8e9d1b07',
			'twitch-eventsub-message-type': 'webhook_callback_verification',
			'twitch-eventsub-subscription-type': 'channel.subscribe',
		},
		expected: () => ({
			statusCode: 200,
			headers: { 'content-type': TEXT_TYPE, ...NOSNIFF },
			body: '9a1f3e6c-2d8b-4c57-b0e4-71f5a8c3d926',
		}),
		// The type header is not signed: a notification sent with it stays an event (no challenge).
		event:
			'{"subscription":{"id":"3c9e7a41-5b2d-4f6e-8a19-6d0c2b7e4f58","status":"enabled","type":"channel.subscribe","version":"1","condition":{"broadcaster_user_id":"48371925"},"transport":{"method":"webhook","callback":"https://example.com/webhook"},"created_at":"2026-03-11T17:51:16.123456789Z","cost":0},"event":{"user_id":"1234","user_login":"cool_user","broadcaster_user_id":"48371925","tier":"1000","is_gift":false}}',
	},
};

/**
 * Meta's GET verification request (WhatsApp Cloud API, Messenger, Instagram), as documented:
 * https://developers.facebook.com/docs/graph-api/webhooks/getting-started#verification-requests
 */
const META_VERIFICATION = {
	token: 'meatyhamhock',
	query: {
		'hub.mode': 'subscribe',
		'hub.challenge': '1158201444',
		'hub.verify_token': 'meatyhamhock',
	},
	expected: {
		statusCode: 200,
		headers: { 'content-type': TEXT_TYPE, ...NOSNIFF },
		body: '1158201444',
	},
	refused: { statusCode: 403, headers: { 'content-type': TEXT_TYPE }, body: 'Forbidden' },
};

/**
 * Microsoft Graph's validation request: a POST with `?validationToken=…`, Content-Type text/plain and
 * no body, answered within 10 s with 200 text/plain and the URL-decoded token. Microsoft prints no
 * token value ("{opaqueTokenCreatedByMicrosoftGraph}", and says to treat it as opaque):
 * https://learn.microsoft.com/graph/change-notifications-delivery-webhooks#notificationurl-validation
 * (microsoftgraph/microsoft-graph-docs-contrib concepts/includes/change-notifications-delivery-notificationurl-validation.md
 * at commit 0d928665b3df9c6bc0cf9957f10634c16b072d31); this one has spaces and colons, so the answer must be
 * the decoded text, never the encoded query.
 */
const GRAPH_VALIDATION_TOKEN =
	'Validation: Testing client application reachability for subscription Request-Id: 46e4f6ff-d4f7-4b1b-8d6f-2b4c1d9cfa1c';

/**
 * Okta's one-time verification request as its support article prints it, with the shared secret in
 * Authorization (https://support.okta.com/help/s/article/Unable-to-verify-event-hook-Hook-hook-name-execution-failed),
 * and the answer printed there: {"verification":"<the header's value>"}.
 */
const OKTA_CHALLENGE = 'Me_rShK8JHsTnbyYrWXCEoMGbM_zsZ6k0hLPZ_Pg';
const oktaVerification = (/** @type {string | undefined} */ authorization) => ({
	'user-agent': 'Okta-Integrations',
	accept: 'application/json',
	'x-okta-request-id': 'XOZfPkReFFZ10KWyGkzAMwAAADA',
	'x-okta-verification-challenge': OKTA_CHALLENGE,
	'x-any-key': 'my-header-value',
	...(authorization === undefined ? {} : { authorization }),
});

/**
 * Each unsigned handshake as its sender sends it (a GET unless `method` says otherwise; `headers`
 * made from the credential's secret where the sender sends it too), the answer it checks, and the
 * requests that must not get the challenge back: `refused` (each a query, or `{ query, headers }`)
 * answered `refusedAnswer`.
 */
const UNSIGNED_EXAMPLES = {
	whatsApp: {
		credential: { verifyToken: META_VERIFICATION.token },
		query: META_VERIFICATION.query,
		expected: META_VERIFICATION.expected,
		refused: [
			{ ...META_VERIFICATION.query, 'hub.verify_token': `${META_VERIFICATION.token}X` },
			{ 'hub.mode': 'subscribe', 'hub.challenge': '1158201444' },
		],
		refusedAnswer: META_VERIFICATION.refused,
	},
	microsoftGraph: {
		credential: {},
		method: 'POST',
		contentType: 'text/plain; charset=utf-8',
		query: { validationToken: GRAPH_VALIDATION_TOKEN },
		expected: {
			statusCode: 200,
			headers: { 'content-type': TEXT_TYPE, 'x-content-type-options': 'nosniff' },
			body: GRAPH_VALIDATION_TOKEN,
		},
		refused: [{ validationToken: 'x'.repeat(300) }],
		refusedAnswer: {
			statusCode: 400,
			headers: { 'content-type': TEXT_TYPE, 'x-content-type-options': 'nosniff' },
			body: 'validationToken is longer than 256 characters',
		},
	},
	oktaEventHooks: {
		credential: {},
		query: {},
		headers: (/** @type {string} */ secret) => oktaVerification(secret),
		expected: {
			statusCode: 200,
			headers: { 'content-type': JSON_TYPE, ...NOSNIFF },
			body: `{"verification":"${OKTA_CHALLENGE}"}`,
		},
		refused: [
			{ query: {}, headers: oktaVerification('my-shared-secret-but-not-yours') },
			{ query: {}, headers: oktaVerification(undefined) },
		],
		refusedAnswer: {
			statusCode: 401,
			headers: { 'content-type': TEXT_TYPE },
			body: 'Unauthorized',
		},
	},
	// https://www.dropbox.com/developers/reference/webhooks (dropbox_hook.py's default challenge)
	dropbox: {
		credential: {},
		query: { challenge: 'challenge123' },
		expected: {
			statusCode: 200,
			headers: { 'content-type': TEXT_TYPE, 'x-content-type-options': 'nosniff' },
			body: 'challenge123',
		},
		refused: [{ challenge: 'x'.repeat(300) }],
		refusedAnswer: {
			statusCode: 400,
			headers: { 'content-type': TEXT_TYPE, 'x-content-type-options': 'nosniff' },
			body: 'challenge is longer than 256 characters',
		},
	},
};

/** Every `Event<"…">` name @zoom/rivet (pinned) types in its modules' declarations: Zoom's webhook events. */
function zoomEventNames() {
	const { readFileSync, readdirSync } = require('node:fs');
	const path = require('node:path');
	// The package exports no package.json: its root is where its main entry sits.
	const root = path.dirname(require.resolve('@zoom/rivet'));
	const names = new Set();
	for (const folder of readdirSync(root, { withFileTypes: true })) {
		if (!folder.isDirectory()) continue;
		for (const file of readdirSync(path.join(root, folder.name)))
			if (file.endsWith('.d.ts'))
				for (const [, name] of readFileSync(path.join(root, folder.name, file), 'utf8').matchAll(
					/\bEvent<"([a-z0-9_.]+)">/g,
				))
					names.add(name);
	}
	return [...names].sort();
}

/**
 * Each signed handshake's sender's real event types, from its own library's enum where one is
 * pinned, else from its docs (the URL says where), and a real event of a type as the sender sends
 * it (`id` makes each one a new event): the property in test/integration/handshakes.test.js sends
 * them through Reserve and Verify Webhook Signature next to the handshake. `types` may be async
 * (an ES module's import).
 * @type {Record<string, { source: string, types: () => Promise<ReadonlyArray<string | number>>, event: (type: any, id: string) => { body: string, headers: Record<string, string> } }>}
 */
const EVENT_TYPES = {
	slack: {
		// The Events API's outer types besides url_verification; the inner event type is any.
		source: 'https://api.slack.com/apis/events-api#callback-field and #rate-limiting',
		types: async () => ['event_callback', 'app_rate_limited'],
		event: (type, id) => ({
			body: JSON.stringify({
				token: 'x',
				team_id: 'T1',
				api_app_id: 'A1',
				type,
				event_id: id,
				event: { type: 'app_mention', text: id },
			}),
			headers: {},
		}),
	},
	zoom: {
		source: "@zoom/rivet's typed webhook events (Event<name>) in its .d.ts files",
		types: async () => zoomEventNames().filter((name) => name !== 'endpoint.url_validation'),
		event: (type, id) => ({
			body: JSON.stringify({
				event: type,
				event_ts: 1654503849680,
				payload: { account_id: 'a', object: { id } },
			}),
			headers: {},
		}),
	},
	discord: {
		// Every InteractionType but PING: APPLICATION_COMMAND, MESSAGE_COMPONENT, autocomplete, MODAL_SUBMIT.
		source: "discord-interactions' InteractionType",
		types: async () =>
			Object.values(require('discord-interactions').InteractionType).filter(
				(type) => typeof type === 'number' && type !== 1,
			),
		event: (type, id) => ({
			body: JSON.stringify({
				application_id: '1',
				id,
				token: 't',
				type,
				data: { name: 'hello' },
				version: 1,
			}),
			headers: {},
		}),
	},
	discordWebhookEvents: {
		source: "discord-interactions' WebhookEventType (each sent as WebhookType.EVENT)",
		types: async () => Object.values(require('discord-interactions').WebhookEventType),
		event: (type, id) => ({
			body: JSON.stringify({
				version: 1,
				application_id: '1',
				type: require('discord-interactions').WebhookType.EVENT,
				event: { type, timestamp: '2024-10-18T14:42:53.064834', data: { id } },
			}),
			headers: {},
		}),
	},
	github: {
		// Event names (X-GitHub-Event), not `name.action`; ping is the handshake.
		source: "@octokit/webhooks' emitterEventNames",
		types: async () =>
			(await import('@octokit/webhooks')).emitterEventNames.filter(
				(name) => !name.includes('.') && name !== 'ping',
			),
		event: (type, id) => ({
			body: JSON.stringify({ action: 'created', id, repository: { id: 1 }, sender: { id: 2 } }),
			headers: { 'x-github-event': type, 'x-github-delivery': id },
		}),
	},
	twitchEventSub: {
		// Twitch-Eventsub-Message-Type's other values; the subscription type is any.
		source: 'https://dev.twitch.tv/docs/eventsub/handling-webhook-events/#list-of-request-headers',
		types: async () => ['notification', 'revocation'],
		event: (type, id) => ({
			body: JSON.stringify({
				subscription: {
					id,
					status: type === 'revocation' ? 'authorization_revoked' : 'enabled',
					type: 'channel.follow',
					version: '2',
					condition: { broadcaster_user_id: '1' },
					transport: { method: 'webhook', callback: 'https://example.com/webhook' },
					created_at: '2026-03-11T17:51:16.123456789Z',
				},
				...(type === 'notification' ? { event: { user_id: '1234' } } : {}),
			}),
			headers: {
				'twitch-eventsub-message-id': id,
				'twitch-eventsub-message-type': type,
				'twitch-eventsub-subscription-type': 'channel.follow',
			},
		}),
	},
};

module.exports = {
	EVENT_TYPES,
	SIGNED_EXAMPLES,
	UNSIGNED_EXAMPLES,
	META_VERIFICATION,
	GRAPH_VALIDATION_TOKEN,
	OKTA_CHALLENGE,
	oktaVerification,
	JSON_TYPE,
	TEXT_TYPE,
	NOSNIFF,
};
