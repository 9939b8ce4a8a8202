// Test vectors for nodes/shared/webhook/providers/platforms.ts: for each verifiable provider, either
// the example the provider itself publishes (in its docs or its own SDK's tests), or a delivery its
// official npm library signs or accepts, or (Twitch and Dropbox, which print no signed example) a
// delivery computed by reproducing their official tool's signing code exactly, pinned to a commit.
// Nothing here is invented to agree with the table.
const { createHmac } = require('node:crypto');

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Microsoft's printed change notification, byte for byte (indentation and spacing as printed). */
const GRAPH_NOTIFICATION = `{
  "value": [
    {
      "id": "lsgTZMr9KwAAA",
      "subscriptionId":"{subscription_guid}",
      "subscriptionExpirationDateTime":"2016-03-19T22:11:09.952Z",
      "clientState":"secretClientValue",
      "changeType":"created",
      "resource":"users/{user_guid}@{tenant_guid}/messages/{long_id_string}",
      "tenantId": "84bd8158-6d4d-4958-8b9f-9d6445542f95",
      "resourceData":
      {
        "@odata.type":"#Microsoft.Graph.Message",
        "@odata.id":"Users/{user_guid}@{tenant_guid}/Messages/{long_id_string}",
        "@odata.etag":"W/\\"CQAAABYAAADkrWGo7bouTKlsgTZMr9KwAAAUWRHf\\"",
        "id":"{long_id_string}"
      }
    }
  ]
}`;

/** An Okta event hook delivery with the fields Okta names (source in the vector). */
const OKTA_DELIVERY =
	'{"eventType":"com.okta.event_hook","eventTypeVersion":"1.0","cloudEventsVersion":"0.1","source":"https://example.okta.com/api/v1/eventHooks/who8vt36qfNpCGz9H1e6","eventId":"b5a188b9-5ece-4636-b041-482ffda96311","eventTime":"2026-03-11T17:51:16.000Z","contentType":"application/json","data":{"events":[{"uuid":"14a42b00-74e5-11ee-8a5a-69d62fcd0f8b","published":"2026-03-11T17:51:15.770Z","eventType":"user.lifecycle.create","version":"0","displayMessage":"Create Okta user","severity":"INFO","actor":{"id":"00u1qw1mqitPHM8AJ0g7","type":"User","alternateId":"admin@example.com","displayName":"Jane Doe"},"outcome":{"result":"SUCCESS"},"target":[{"id":"00u1xut94qEWYx5ss1e5","type":"User","alternateId":"john.doe@example.com","displayName":"John Doe"}]}]}}';

/** A header as the test hands it over (any case), or undefined. */
function header(headers, name) {
	const wanted = name.toLowerCase();
	for (const [key, value] of Object.entries(headers ?? {})) {
		if (key.toLowerCase() === wanted) return value;
	}
	return undefined;
}

/** Only the headers that are there: a library reading `undefined` as text would see "undefined". */
function present(entries) {
	return Object.fromEntries(entries.filter(([, value]) => value !== undefined));
}

async function rejectsToFalse(fn) {
	try {
		await fn();
		return true;
	} catch {
		return false;
	}
}

/**
 * Standard Webhooks' v1 signature, written out (Replicate, Clerk and Resend ship verifiers only):
 * HMAC-SHA256 of "<id>.<timestamp>.<body>" keyed with the base64 after `whsec_`.
 */
function standardSignature(secret, id, timestamp, body) {
	const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
	return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * A delivery signed now as Standard Webhooks v1 under the header prefix `webhook` or `svix`, for the
 * senders whose official library only verifies (Replicate, Clerk, Resend).
 */
function standardDelivery(prefix, secret, id, body) {
	const timestamp = nowSeconds();
	return {
		body,
		headers: {
			'content-type': 'application/json',
			[`${prefix}-id`]: id,
			[`${prefix}-timestamp`]: String(timestamp),
			[`${prefix}-signature`]: standardSignature(secret, id, timestamp, body),
		},
		nowSeconds: timestamp,
	};
}

const whsec = (seed) => `whsec_${Buffer.from(seed.padEnd(32, '.')).toString('base64')}`;

module.exports = {
	hubSpot: {
		kind: 'library',
		source:
			'@hubspot/api-client@14.0.1, Signature.getSignature(method, "v3", options) signs and Signature.isValid({ signatureVersion: "v3", … }) judges',
		secret: 'yyyyyyyy-yyyy-yyyy-yyyy-yyyyyyyyyyyy',
		otherSecret: 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz',
		genuine: async () => {
			const { Signature } = require('@hubspot/api-client');
			const body =
				'[{"eventId":1,"subscriptionId":12345,"portalId":62515,"occurredAt":1564113600000,"subscriptionType":"contact.creation","attemptNumber":0,"objectId":123,"changeSource":"CRM","changeFlag":"NEW","appId":54321}]';
			const url = 'https://n8n.example.com/webhook/hubspot-contacts?portal=62515';
			const timestamp = String(Date.now());
			// The library's typings say the timestamp is a number; its v3 signer concatenates the text.
			const options = {
				clientSecret: 'yyyyyyyy-yyyy-yyyy-yyyy-yyyyyyyyyyyy',
				requestBody: body,
				url,
				timestamp,
			};
			const signature = Signature.getSignature('POST', 'v3', /** @type {any} */ (options));
			return {
				body,
				headers: {
					'Content-Type': 'application/json',
					'X-HubSpot-Signature-v3': signature,
					'X-HubSpot-Request-Timestamp': timestamp,
				},
				url,
				nowSeconds: Math.floor(Number(timestamp) / 1000),
			};
		},
		accepts: async ({ body, headers, url }, secret) => {
			const { Signature } = require('@hubspot/api-client');
			const signature = header(headers, 'X-HubSpot-Signature-v3');
			const timestamp = header(headers, 'X-HubSpot-Request-Timestamp');
			if (signature === undefined || timestamp === undefined) return false;
			// isValid throws for a timestamp older than 5 minutes.
			try {
				return Signature.isValid({
					signatureVersion: 'v3',
					signature,
					method: 'POST',
					clientSecret: secret,
					requestBody: body,
					url,
					timestamp: Number(timestamp),
				});
			} catch {
				return false;
			}
		},
	},

	quickBooks: {
		kind: 'documented',
		source:
			"https://github.com/intuit/QuickBooks-V3-Java-SDK/blob/139f250f6dbcc854be0d8bfaf0eb1e8853136c60/ipp-v3-java-devkit/src/test/java/com/intuit/ipp/services/WebhooksServiceTest.java, testVerifyPayload(): verifierToken, intuitSignature and payload as printed (WebhooksService.verifyPayload reads the intuit-signature header's value)",
		secret: 'b5771f19b12ddb4bcdb9f08bdc50bc63878a',
		otherSecret: 'a5771f19b12ddb4bcdb9f08bdc50bc63878b',
		genuine: async () => ({
			body: '{"eventNotifications":[{"realmId":"1185883450","dataChangeEvent":{"entities":[{"name":"Customer","id":"1","operation":"Create","lastUpdated":"2015-10-05T14:42:19-0700"}]}}]}',
			headers: {
				'content-type': 'application/json',
				'intuit-signature': 'JC2GUwciPmRBwEO7WvrRmKqu9tGOKL8FFallocTFi8Q=',
			},
			// No timestamp is signed: any moment will do; the payload's lastUpdated.
			nowSeconds: 1444081339,
		}),
	},

	box: {
		kind: 'documented',
		source:
			'https://github.com/box/box-node-sdk/blob/01672dba759d5a704c1ae4aeaab1cebcfcfd23c2/tests/lib/managers/webhooks-test.js, describe("validateMessage()"): "A sample webhook message that is signed with \'SamplePrimaryKey\' and \'SampleSecondaryKey\'" (BODY and HEADERS as printed; the SDK test freezes the clock in 2010 because it only refuses old messages)',
		secret: 'SamplePrimaryKey',
		// The same test's INCORRECT_SIGNATURE_KEY (SampleSecondaryKey would rightly verify the secondary signature).
		otherSecret: 'IncorrectKey',
		genuine: async () => ({
			body: '{"type":"webhook_event","webhook":{"id":"1234567890"},"trigger":"FILE.UPLOADED","source":{"id":"1234567890","type":"file","name":"Test.txt"}}',
			headers: {
				'box-delivery-id': 'f96bb54b-ee16-4fc5-aa65-8c2d9e5b546f',
				'box-delivery-timestamp': '2020-01-01T00:00:00-07:00',
				'box-signature-algorithm': 'HmacSHA256',
				'box-signature-primary': '6TfeAW3A1PASkgboxxA5yqHNKOwFyMWuEXny/FPD5hI=',
				'box-signature-secondary': 'v+1CD1Jdo3muIcbpv5lxxgPglOqMfsNHPV899xWYydo=',
				'box-signature-version': '1',
			},
			// 2020-01-01T07:00:00Z, the delivery's own timestamp.
			nowSeconds: 1577862000,
		}),
	},

	whatsApp: {
		kind: 'documented',
		source:
			'https://github.com/WhatsApp/WhatsApp-Nodejs-SDK/blob/58ca3d5fceea604e18393734578d9a7944a37b15/src/__tests__/utils.test.ts, test "signature match": body "test" and knownSignature as printed, keyed with jest.config.ts\'s M4D_APP_SECRET "TEST_APP_SECRET"; src/api/webhooks.ts reads it from X-Hub-Signature-256 after "sha256="',
		secret: 'TEST_APP_SECRET',
		otherSecret: 'TEST_APP_SECRET_OF_ANOTHER_APP',
		genuine: async () => ({
			body: 'test',
			headers: {
				'X-Hub-Signature-256':
					'sha256=0c61947b610d4f45e65f3d680e26027121ec2413e77598bcb6cfc6e0d9888221',
			},
			// No timestamp is signed: any moment will do.
			nowSeconds: 1700000000,
		}),
	},

	openAi: {
		kind: 'documented',
		source:
			'https://github.com/openai/openai-node/blob/60323767f01f4ebc036032ba8327b7acae5ce31b/tests/api-resources/webhooks.test.ts, describe("resource webhooks"): "all this data is taken from a real webhook event" (payload, webhook-signature, webhook-timestamp, webhook-id and secret as printed)',
		secret: 'whsec_RdvaYFYUXuIFuEbvZHwMfYFhUf7aMYjYcmM24+Aj40c=',
		// The same test's wrong secret, in the whsec_ form.
		otherSecret: `whsec_${Buffer.from('not-the-correct-secret-but-long-enough').toString('base64')}`,
		genuine: async () => ({
			body: '{"id": "evt_685c059ae3a481909bdc86819b066fb6", "object": "event", "created_at": 1750861210, "type": "response.completed", "data": {"id": "resp_123"}}',
			headers: {
				'webhook-signature': 'v1,gUAg4R2hWouRZqRQG4uJypNS8YK885G838+EHb4nKBY=',
				'webhook-timestamp': '1750861210',
				'webhook-id': 'wh_685c059ae39c8190af8c71ed1022a24d',
			},
			nowSeconds: 1750861210,
		}),
	},

	replicate: {
		kind: 'library',
		source:
			'replicate@1.4.0, validateWebhook({ headers, body }, secret) (a verifier only: the delivery is signed as Standard Webhooks v1)',
		secret: whsec('replicate-current-signing-key'),
		otherSecret: whsec('replicate-someone-elses-key'),
		genuine: async () =>
			standardDelivery(
				'webhook',
				whsec('replicate-current-signing-key'),
				'msg_2e9fa4c6c3b04b1f8f6e3d3b1a9e7c55',
				'{"id":"ufawqhfynnddngldkgtslldrkq","model":"replicate/hello-world","version":"5c7d5dc6dd8bf75c1acaa8565735e7986bc5b66206b55cca93cb72c9bf15ccaa","status":"succeeded","input":{"text":"Alice"},"output":"hello Alice"}',
			),
		accepts: async ({ body, headers }, secret) => {
			const { validateWebhook } = require('replicate');
			const id = header(headers, 'webhook-id');
			const timestamp = header(headers, 'webhook-timestamp');
			const signature = header(headers, 'webhook-signature');
			if (!id || !timestamp || !signature) return false;
			// validateWebhook checks the signature only; Standard Webhooks' 5 minutes are checked here.
			if (Math.abs(nowSeconds() - Number(timestamp)) > 300) return false;
			try {
				return await validateWebhook(
					/** @type {any} */ ({
						headers: {
							'webhook-id': id,
							'webhook-timestamp': timestamp,
							'webhook-signature': signature,
						},
						body,
					}),
					secret,
				);
			} catch {
				return false;
			}
		},
	},

	clerk: {
		kind: 'library',
		source:
			'@clerk/backend@3.25.0, verifyWebhook(request, { signingSecret }) from @clerk/backend/webhooks (a verifier only: the delivery is signed as Svix v1)',
		secret: whsec('clerk-current-signing-secret'),
		otherSecret: whsec('clerk-someone-elses-secret'),
		genuine: async () =>
			standardDelivery(
				'svix',
				whsec('clerk-current-signing-secret'),
				'msg_2fdiqp5c0GXt2lbnV3M7PNPqzkj',
				'{"data":{"id":"user_29w83sxmDNGwOuEthce5gg56FcC","object":"user","first_name":"Example","last_name":"Example"},"event_attributes":{"http_request":{"client_ip":"0.0.0.0","user_agent":"Mozilla/5.0"}},"instance_id":"ins_123","object":"event","timestamp":1654012591835,"type":"user.created"}',
			),
		accepts: async ({ body, headers }, secret) => {
			const { verifyWebhook } = require('@clerk/backend/webhooks');
			const request = new Request('https://n8n.example.com/webhook/clerk', {
				method: 'POST',
				headers: present([
					['content-type', 'application/json'],
					['svix-id', header(headers, 'svix-id')],
					['svix-timestamp', header(headers, 'svix-timestamp')],
					['svix-signature', header(headers, 'svix-signature')],
				]),
				body,
			});
			return rejectsToFalse(() => verifyWebhook(request, { signingSecret: secret }));
		},
	},

	resend: {
		kind: 'library',
		source:
			'resend@6.38.0, new Resend(key).webhooks.verify({ payload, headers: { id, timestamp, signature }, webhookSecret }) (a verifier only: the delivery is signed as Svix v1)',
		secret: whsec('resend-current-signing-secret'),
		otherSecret: whsec('resend-someone-elses-secret'),
		genuine: async () =>
			standardDelivery(
				'svix',
				whsec('resend-current-signing-secret'),
				'msg_2zK8QXhJ3bEwFvYqS1cN7uTgPmR',
				'{"type":"email.delivered","created_at":"2024-02-22T23:41:12.126Z","data":{"created_at":"2024-02-22T23:41:11.894719+00:00","email_id":"56761188-7520-42d8-8898-ff6fc54ce618","from":"Acme <onboarding@resend.dev>","to":["delivered@resend.dev"],"subject":"Sending this example"}}',
			),
		accepts: async ({ body, headers }, secret) => {
			const { Resend } = require('resend');
			const id = header(headers, 'svix-id');
			const timestamp = header(headers, 'svix-timestamp');
			const signature = header(headers, 'svix-signature');
			if (!id || !timestamp || !signature) return false;
			return rejectsToFalse(async () =>
				new Resend('re_not_used_for_webhooks').webhooks.verify({
					payload: body,
					headers: { id, timestamp, signature },
					webhookSecret: secret,
				}),
			);
		},
	},

	twitchEventSub: {
		kind: 'library',
		source:
			"Twitch prints no signed example, so this notification is computed here by reproducing exactly what its official tool, twitch-cli, sends for `twitch event trigger subscribe -F https://example.com/webhook -s potaytoes`: https://github.com/twitchdev/twitch-cli/blob/fd7dac646eea56c9ac9c1d36893e611de855c21e/internal/events/trigger/forward_event.go (getSignatureHeader: HMAC-SHA256 of the message id, the timestamp formatted as RFC3339Nano, then the body, hex after \"sha256=\"; ForwardEvent's headers), with the body of internal/events/types/subscribe/sub_event.go's GenerateEvent (json.Marshal, field order of internal/models/eventsub.go and subs.go) and the defaults of internal/events/trigger/trigger_event.go at that commit. Its random GUIDs, user ids and clock are fixed here; the timestamp is already in RFC3339Nano's own form, so the text signed is the header's, as Twitch's page says. Secret \"potaytoes\" from forward_event_test.go, the other from verify/subscription_verify_test.go",
		secret: 'potaytoes',
		otherSecret: 'potatoes',
		genuine: async () => ({
			body: '{"subscription":{"id":"3c9e7a41-5b2d-4f6e-8a19-6d0c2b7e4f58","status":"enabled","type":"channel.subscribe","version":"1","condition":{"broadcaster_user_id":"48371925"},"transport":{"method":"webhook","callback":"null"},"created_at":"2026-03-11T17:51:16.123456789Z","cost":0},"event":{"user_id":"71926354","user_login":"testFromUser","user_name":"testFromUser","broadcaster_user_id":"48371925","broadcaster_user_login":"testBroadcaster","broadcaster_user_name":"testBroadcaster","tier":"1000","is_gift":false}}',
			headers: {
				'Content-Type': 'application/json',
				'Twitch-Eventsub-Message-Retry': '0',
				'Twitch-Eventsub-Message-Id': '0b5d2c1e-7f3a-4e8b-9c61-2a4f8e9d1b07',
				'Twitch-Eventsub-Subscription-Type': 'channel.subscribe',
				'Twitch-Eventsub-Subscription-Version': '1',
				'Twitch-Eventsub-Message-Type': 'notification',
				'Twitch-Eventsub-Message-Timestamp': '2026-03-11T17:51:16.123456789Z',
				'Twitch-Eventsub-Message-Signature':
					'sha256=8c2c7746462fcc708734bd3b6a47f5e4d63fc382014523180380ed18759ef5d8',
			},
			// 2026-03-11T17:51:16Z, the message's own timestamp.
			nowSeconds: 1773251476,
		}),
	},

	dropbox: {
		kind: 'library',
		source:
			'Dropbox prints no signed example, so this delivery is computed here by reproducing exactly what its official test tool sends for its own documented example `dropbox_hook.py notify http://www.example.com --secret ABC123 --account 12345`: https://github.com/dropbox/dropbox_hook/blob/689236a6ec6b8cbc55a0f6326c1c9e490f8a52c0/dropbox_hook.py, notify() (body json.dumps({"list_folder": {"accounts": account}}) with Python\'s default separators; X-Dropbox-Signature hmac.new(secret.encode(), body.encode(), sha256).hexdigest()), run with Python 3\'s json and hmac. Dropbox\'s sample app checks the same way: https://github.com/dropbox/mdwebhook/blob/1b32d5aec51019eb698905345a21af46e0d4be8e/app.py, webhook()',
		secret: 'ABC123',
		otherSecret: 'DEF456',
		genuine: async () => ({
			body: '{"list_folder": {"accounts": ["12345"]}}',
			headers: {
				'X-Dropbox-Signature': '772da143563a8aaaab3dd9f09b62cb9985fb017dfa30ad7d277ea42ea8d12252',
				'Content-type': 'application/json',
			},
			// No timestamp is signed: any moment will do.
			nowSeconds: 1700000000,
		}),
	},
	// Microsoft Graph signs nothing: the vector is Microsoft's own printed change notification, whose
	// clientState is the secret the subscription was created with.
	microsoftGraph: {
		kind: 'documented',
		source:
			'Microsoft\'s "Change notification example": https://learn.microsoft.com/graph/change-notifications-delivery-webhooks#change-notification-example (microsoftgraph/microsoft-graph-docs-contrib concepts/change-notifications-delivery-webhooks.md @01c641aced9437aea8a5c1f17fd65078bff7391e), clientState "secretClientValue"; the body exactly as printed there',
		secret: 'secretClientValue',
		// The clientState of the same page's subscription request: another subscription's secret.
		otherSecret: 'SecretClientState',
		genuine: async () => ({
			body: GRAPH_NOTIFICATION,
			headers: { 'content-type': 'application/json' },
			nowSeconds: 1700000000,
		}),
	},
	// Okta signs nothing: every request carries the hook's Authentication field (Authorization) with
	// the secret as its whole value, as Okta's own example of its verification request shows.
	oktaEventHooks: {
		kind: 'documented',
		source:
			"The header as Okta's support article prints it on the verification request (`Authorization: my-shared-secret`): https://support.okta.com/help/s/article/Unable-to-verify-event-hook-Hook-hook-name-execution-failed; deliveries carry the same header (https://developer.okta.com/docs/concepts/event-hooks/). The body has the fields Okta's event hook page names (eventType com.okta.event_hook, eventId, data.events[].uuid); no stored copy of a sample printed by Okta was found, so its values are this test's",
		secret: 'my-shared-secret',
		otherSecret: 'my-other-shared-secret',
		genuine: async () => ({
			body: OKTA_DELIVERY,
			headers: {
				Accept: 'application/json',
				'Content-Type': 'application/json',
				Authorization: 'my-shared-secret',
				'X-Okta-Request-Id': 'XOZfPkReFFZ10KWyGkzAMwAAADA',
			},
			nowSeconds: 1700000000,
		}),
	},
};
