// Deliveries signed by each provider's own library (Stripe, GitHub's Octokit, Standard Webhooks,
// Svix), and that library's own verdict on a delivery. Slack and Shopify publish no light
// verifier on npm (their SDKs pull in web frameworks), so for them the signer is the documented
// algorithm, pinned by Slack's own documented example in the unit tests.
const { createHmac } = require('node:crypto');
const Stripe = require('stripe');
const { Webhook: StandardWebhook } = require('standardwebhooks');
const { Webhook: SvixWebhook } = require('svix');

const stripe = new Stripe('sk_test_not_used_for_webhooks');

const nowSeconds = () => Math.floor(Date.now() / 1000);
const base64Secret = (seed) => `whsec_${Buffer.from(seed.padEnd(24, '.')).toString('base64')}`;

let octokit;
/** @octokit/webhooks-methods is ESM only. */
async function loadOctokit() {
	octokit ??= await import('@octokit/webhooks-methods');
	return octokit;
}

function throwsToFalse(fn) {
	try {
		fn();
		return true;
	} catch {
		return false;
	}
}

/**
 * Each kit: `sign(body, { secret, timestamp, id })` → headers, `accepts(body, headers, secret)` →
 * the library's verdict at the current time, `signatureHeader` (the one a cut-short test trims).
 */
const PROVIDERS = {
	stripe: {
		secret: 'whsec_stripe_current_0123456789abcdef',
		otherSecret: 'whsec_stripe_someone_else_0123456789',
		signatureHeader: 'stripe-signature',
		hasTimestamp: true,
		sign: async (body, { secret, timestamp = nowSeconds() }) => ({
			'stripe-signature': stripe.webhooks.generateTestHeaderString({
				payload: body,
				secret,
				timestamp,
			}),
		}),
		accepts: async (body, headers, secret) =>
			throwsToFalse(() =>
				stripe.webhooks.constructEvent(body, headers['stripe-signature'], secret, 300),
			),
	},
	github: {
		secret: "github-webhook-secret-It's a Secret to Everybody",
		otherSecret: 'github-other-secret',
		signatureHeader: 'x-hub-signature-256',
		hasTimestamp: false,
		sign: async (body, { secret }) => ({
			'x-hub-signature-256': await (await loadOctokit()).sign(secret, body),
		}),
		accepts: async (body, headers, secret) => {
			try {
				return await (await loadOctokit()).verify(secret, body, headers['x-hub-signature-256']);
			} catch {
				return false;
			}
		},
	},
	standardWebhooks: {
		secret: base64Secret('standard-current'),
		otherSecret: base64Secret('standard-other'),
		signatureHeader: 'webhook-signature',
		hasTimestamp: true,
		sign: async (
			body,
			{ secret, timestamp = nowSeconds(), id = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W' },
		) => ({
			'webhook-id': id,
			'webhook-timestamp': String(timestamp),
			'webhook-signature': new StandardWebhook(secret).sign(id, new Date(timestamp * 1000), body),
		}),
		accepts: async (body, headers, secret) =>
			throwsToFalse(() => new StandardWebhook(secret).verify(body, headers)),
	},
	svix: {
		secret: base64Secret('svix-current'),
		otherSecret: base64Secret('svix-other'),
		signatureHeader: 'svix-signature',
		hasTimestamp: true,
		sign: async (
			body,
			{ secret, timestamp = nowSeconds(), id = 'msg_p5jXN8AQM9LWM0D4loKWxJek' },
		) => ({
			'svix-id': id,
			'svix-timestamp': String(timestamp),
			'svix-signature': new SvixWebhook(secret).sign(id, new Date(timestamp * 1000), body),
		}),
		accepts: async (body, headers, secret) =>
			throwsToFalse(() => new SvixWebhook(secret).verify(body, headers)),
	},
	slack: {
		secret: '8f742231b10e8888abcd99yyyzzz85a5',
		otherSecret: 'a-different-slack-signing-secret',
		signatureHeader: 'x-slack-signature',
		hasTimestamp: true,
		sign: async (body, { secret, timestamp = nowSeconds() }) => ({
			'x-slack-request-timestamp': String(timestamp),
			'x-slack-signature': `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`,
		}),
		accepts: undefined,
	},
	shopify: {
		secret: 'shpss_shopify_app_client_secret',
		otherSecret: 'shpss_other_client_secret',
		signatureHeader: 'x-shopify-hmac-sha256',
		hasTimestamp: false,
		sign: async (body, { secret }) => ({
			'x-shopify-hmac-sha256': createHmac('sha256', secret).update(body).digest('base64'),
		}),
		accepts: undefined,
	},
};

module.exports = { PROVIDERS, nowSeconds, loadOctokit };
