'use strict';

/**
 * Proof for the verifiable entries of nodes/shared/webhook/providers/commerce.ts. Every genuine
 * delivery below is copied byte for byte from the provider's own SDK test suite (repository, path and
 * commit in `source`): secret, body, signature and, where there is one, timestamp as printed there.
 * None is computed here.
 */
module.exports = {
	paddle: {
		kind: 'documented',
		source:
			'https://github.com/PaddleHQ/paddle-node-sdk/blob/b8ee4b12741d88abe5a33f5c8a74735c9ac3653f/src/__tests__/notifications/webhooks-validator.node.test.ts (the Paddle Node SDK), case "Valid signature" (checked at 2023-11-01T00:00:00Z, i.e. ts 1698796800)',
		secret: 'VALID_SECRET',
		// The same test's "Invalid secret" case.
		otherSecret: 'INVALID_VALID_SECRET',
		genuine: async () => ({
			body: '{"data": ["1", "2"]}',
			headers: {
				'Paddle-Signature':
					'ts=1698796800;h1=a300428748dce5c70e4da19bffd60769591ea969c99dea3105d0ec9612cf43f9',
			},
			nowSeconds: 1698796800,
		}),
	},
	square: {
		kind: 'documented',
		source:
			'https://github.com/square/square-nodejs-sdk/blob/c58c6e097af6717e5c728712f79f89f6cd9da12f/tests/integration/webhooks.test.ts (the Square Node SDK), "test signature validation pass" (WebhooksHelper.verifySignature)',
		secret: 'Ibxx_5AKakO-3qeNVR61Dw',
		// The same test's "fails on invalid signature key" case.
		otherSecret: 'MCmhFRxGX82xMwg5FsaoQA',
		genuine: async () => ({
			body: '{"merchant_id":"MLEFBHHSJGVHD","type":"webhooks.test_notification","event_id":"ac3ac95b-f97d-458c-a6e6-18981597e05f","created_at":"2022-07-13T20:30:59.037339943Z","data":{"type":"webhooks","id":"bc368e64-01aa-407e-b46e-3231809b1129"}}',
			headers: { 'x-square-hmacsha256-signature': 'GF4YkrJgGBDZ9NIYbNXBnMzqb2HoL4RW/S6vkZ9/2N4=' },
			url: 'https://webhook.site/679a4f3a-dcfa-49ee-bac5-9d0edad886b9',
			// No timestamp in Square's scheme: any moment.
			nowSeconds: 1657744259,
		}),
	},
	razorpay: {
		kind: 'documented',
		source:
			'https://github.com/razorpay/razorpay-node/blob/9737ef17342b8a551f7af2413c8d24df559accc8/test/utils/razorpay-utils.spec.js (the Razorpay Node SDK), it("validateWebhookSignature")',
		secret: '123456',
		// The same file's other HMAC secret (its "Subscription Verfication" case).
		otherSecret: 'EnLs21M47BllR3X8PSFtjtbd',
		genuine: async () => ({
			body: '{"a":1,"b":2,"c":{"d":3}}',
			headers: {
				'X-Razorpay-Signature': '2fe04e22977002e6c7cb553adab8b460cb9e2a4970d5953cb27a8472752e3bbc',
			},
			nowSeconds: 1700000000,
		}),
	},
	coinbaseCommerce: {
		kind: 'documented',
		source:
			'https://github.com/coinbase/coinbase-commerce-node/blob/d46c59684423b07d068e001ae8c5d58abb9cbbc1/test/testWebhook.spec.js (the Coinbase Commerce Node SDK), "should successfully verify signature and return event" (Webhook.verifyEventBody)',
		secret: '30291a20-0bd1-4267-9b0f-e6e7b123c0bf',
		// The same file's "should fail verification with invalid secret key" case.
		otherSecret: '30291a20-0bd1-4267-9b0f-e6e7b123c0bg',
		genuine: async () => ({
			body: '{"id":1,"scheduled_for":"2017-01-31T20:50:02Z","attempt_number":1,"event":{"id":"24934862-d980-46cb-9402-43c81b0cdba6","type":"charge:created","api_version":"2018-03-22","created_at":"2017-01-31T20:49:02Z","data":{"code":"66BEOV2A","name":"The Sovereign Individual","description":"Mastering the Transition to the Information Age","hosted_url":"https://commerce.coinbase.com/charges/66BEOV2A","created_at":"2017-01-31T20:49:02Z","expires_at":"2017-01-31T21:04:02Z","timeline":[{"time":"2017-01-31T20:49:02Z","status":"NEW"}],"metadata":{},"pricing_type":"no_price","payments":[],"addresses":{"bitcoin":"0000000000000000000000000000000000","ethereum":"0x0000000000000000000000000000000000000000","litecoin":"3000000000000000000000000000000000","bitcoincash":"bitcoincash:000000000000000000000000000000000000000000"}}}}',
			headers: {
				'X-CC-Webhook-Signature':
					'8be7742c7d372f08a6a3224edadf18a22b65fa9e28f3f2de97376cdaa092590d',
			},
			nowSeconds: 1485895802,
		}),
	},
};
