// The six providers the package started with. GitHub and Slack: the examples their documentation
// prints; Shopify: the fixture of its official PHP library's webhook tests. Stripe, Standard Webhooks and Svix: their official libraries sign (test/support/providerVectors.js).
const { PROVIDERS: KITS, nowSeconds } = require('../support/providerVectors');

const BODY =
	'{"id":"evt_1PvYpF2eZvKYlo2C","type":"payment_intent.succeeded","data":{"amount":2000}}';

/** A vector whose delivery one of the official library kits signs now, and whose verdict it gives. */
function libraryVector(value, source) {
	const kit = KITS[value];
	return {
		kind: 'library',
		source,
		secret: kit.secret,
		otherSecret: kit.otherSecret,
		genuine: async () => ({
			body: BODY,
			headers: await kit.sign(BODY, { secret: kit.secret }),
			nowSeconds: nowSeconds(),
		}),
		accepts: async (delivery, secret) =>
			await kit.accepts(String(delivery.body), lowerCased(delivery.headers), secret),
	};
}

const lowerCased = (headers) =>
	Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));

module.exports = {
	stripe: libraryVector(
		'stripe',
		'stripe (npm) webhooks.generateTestHeaderString signs, webhooks.constructEvent verifies',
	),
	github: {
		kind: 'documented',
		source:
			'https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries, "Testing the webhook payload validation"',
		secret: "It's a Secret to Everybody",
		otherSecret: 'another-github-secret',
		genuine: async () => ({
			body: 'Hello, World!',
			headers: {
				'X-Hub-Signature-256':
					'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
			},
			nowSeconds: nowSeconds(),
		}),
	},
	shopify: {
		kind: 'documented',
		source:
			"https://github.com/Shopify/shopify-api-php/blob/3c41a5e1b3f92c840eab3085c44009493cc6dffc/tests/Webhooks/RegistryTest.php#L853-L862, Shopify's own webhook test fixture (secret: tests/BaseTestCase.php line 27)",
		secret: '7008c5f4da4718b9b45d26d3fcbbb157',
		otherSecret: 'steffi',
		genuine: async () => ({
			body: '{"foo":"bar"}',
			headers: { 'X-Shopify-Hmac-Sha256': '+R9TwYM4mbLTk3hEAOBkpA7zW2lc9vNFmVKs2u2jtyY=' },
			nowSeconds: nowSeconds(),
		}),
	},
	standardWebhooks: libraryVector(
		'standardWebhooks',
		'standardwebhooks (npm, the reference library) Webhook.sign and Webhook.verify',
	),
	svix: libraryVector('svix', 'svix (npm) Webhook.sign and Webhook.verify'),
	slack: {
		kind: 'documented',
		source:
			'https://api.slack.com/authentication/verifying-requests-from-slack, "Step-by-step walk-through for validating a request"',
		secret: '8f742231b10e8888abcd99yyyzzz85a5',
		otherSecret: 'a-different-slack-signing-secret',
		genuine: async () => ({
			body: 'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c',
			headers: {
				'X-Slack-Request-Timestamp': '1531420618',
				'X-Slack-Signature': 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
			},
			nowSeconds: 1531420618,
		}),
	},
};
