// Test vectors for nodes/shared/webhook/providers/devTools.ts: one per verifiable provider.
// PagerDuty's is the fixed example of PagerDuty's own client library (its docs send readers there);
// Mux's, WorkOS's and Fingerprint's are the fixed examples of their official SDKs' tests (Mux's and
// Fingerprint's Node SDKs, WorkOS's Python SDK); Linear's and Notion's come from their official npm
// packages. GitLab is unverifiable (a token compare).
const { createHmac } = require('node:crypto');

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A header by name, whatever its case (the test may hand headers back in another spelling). */
function header(headers, name) {
	const key = Object.keys(headers ?? {}).find((k) => k.toLowerCase() === name.toLowerCase());
	const value = key === undefined ? undefined : headers[key];
	return Array.isArray(value) ? value[0] : value;
}

let linear;
/** @linear/sdk is ESM only. */
async function loadLinear() {
	linear ??= await import('@linear/sdk/webhooks');
	return linear;
}

// The request body of go-pagerduty's webhookv3 test, byte for byte.
const PAGERDUTY_BODY =
	'{"event":{"id":"01BWDWL3NYY7LUFPZCC28QUCMK","event_type":"incident.priority_updated","resource_type":"incident","occurred_at":"2021-04-26T17:36:27.458Z","agent":{"html_url":"https://acme.pagerduty.com/users/PLH1HKV","id":"PLH1HKV","self":"https://api.pagerduty.com/users/PLH1HKV","summary":"Tenex Engineer","type":"user_reference"},"client":null,"data":{"id":"PGR0VU2","type":"incident","self":"https://api.pagerduty.com/incidents/PGR0VU2","html_url":"https://acme.pagerduty.com/incidents/PGR0VU2","number":2,"status":"triggered","title":"A little bump in the road","service":{"html_url":"https://acme.pagerduty.com/services/PF9KMXH","id":"PF9KMXH","self":"https://api.pagerduty.com/services/PF9KMXH","summary":"API Service","type":"service_reference"},"assignees":[{"html_url":"https://acme.pagerduty.com/users/PTUXL6G","id":"PTUXL6G","self":"https://api.pagerduty.com/users/PTUXL6G","summary":"User 123","type":"user_reference"}],"escalation_policy":{"html_url":"https://acme.pagerduty.com/escalation_policies/PUS0KTE","id":"PUS0KTE","self":"https://api.pagerduty.com/escalation_policies/PUS0KTE","summary":"Default","type":"escalation_policy_reference"},"teams":[{"html_url":"https://acme.pagerduty.com/teams/PFCVPS0","id":"PFCVPS0","self":"https://api.pagerduty.com/teams/PFCVPS0","summary":"Engineering","type":"team_reference"}],"priority":{"html_url":"https://acme.pagerduty.com/account/incident_priorities","id":"PSO75BM","self":"https://api.pagerduty.com/priorities/PSO75BM","summary":"P1","type":"priority_reference"},"urgency":"high","conference_bridge":{"conference_number":1000,"conference_url":"https://example.com"},"resolve_reason":null}}}';

// The request body of workos-python's test_webhooks.py (fixture mock_event_body), byte for byte.
const WORKOS_BODY =
	'{"id":"event_01J44T8116Q5M0RYCFA6KWNXN9","data":{"id":"conn_01EHWNC0FCBHZ3BJ7EGKYXK0E6","name":"Foo Corp\'s Connection","state":"active","object":"connection","status":"linked","domains":[{"id":"conn_domain_01EHWNFTAFCF3CQAE5A9Q0P1YB","domain":"foo-corp.com","object":"connection_domain"}],"created_at":"2021-06-25T19:07:33.155Z","updated_at":"2021-06-25T19:07:33.155Z","external_key":"3QMR4u0Tok6SgwY2AWG6u6mkQ","connection_type":"OktaSAML","organization_id":"org_01EHWNCE74X7JSDV0X3SZ3KJNY"},"event":"connection.activated","created_at":"2021-06-25T19:07:33.155Z"}';

module.exports = {
	pagerDuty: {
		kind: 'documented',
		source:
			'https://github.com/PagerDuty/go-pagerduty/blob/3df5eb4e62dcdf897d37106578d7be6ad54449dc/webhookv3/webhookv3_test.go, TestVerifySignature case "valid" (secret, defaultBody and signature as printed there). PagerDuty\'s client library; its page https://developer.pagerduty.com/docs/ZG9jOjExMDI5NTkz-verifying-signatures names it as the Go example.',
		secret: 'lDQHScfUeXUKaQRNF+8XIiDKZ7XX3itBAYzwU0TARw8lJqRnkKl2iB1anSb0Z+IK',
		otherSecret: 'Q7mXc2dVb9LrT4yHnE1wZsKp0aGfJ6uI3oNx8tRe5qWl/BvCy+DhMjSg4kFzUiPo',
		genuine: async () => ({
			body: PAGERDUTY_BODY,
			headers: {
				'X-PagerDuty-Signature':
					'v1=0c0b9495b893a39e70d1fea2fe11fbe0a825f88b9f67846f6cc07dd2bc5476cd',
			},
			// PagerDuty signs no timestamp: the event's occurred_at, for the record.
			nowSeconds: 1619458587,
		}),
	},
	linear: {
		kind: 'library',
		source:
			'@linear/sdk@98.0.0, LinearWebhookClient.verify (import from "@linear/sdk/webhooks"): verify-only, so the delivery is signed here with the HMAC Linear documents and the SDK judges it, webhookTimestamp included (60 s)',
		secret: 'lin_wh_4pQ8sZ2mV6nR0tY3uW7xB1cE5fH9jK2l',
		otherSecret: 'lin_wh_9kL3jH7fE1cB5xW9uY3tR7nV1mZ5sQ0p',
		genuine: async () => {
			const timestampMs = Date.now();
			const body = JSON.stringify({
				action: 'create',
				actor: { id: '2e6eea91-1111-0000-9486-acea0603064e', name: 'Linear app', type: 'user' },
				createdAt: new Date(timestampMs).toISOString(),
				data: {
					id: '9cfb482a-81e3-4154-b5b9-2c805e70a02d',
					identifier: 'ENG-42',
					title: 'Verify webhook signatures in n8n',
					teamId: '72b2a2dc-6f4f-4423-9d34-24b5bd10634a',
				},
				url: 'https://linear.app/acme/issue/ENG-42/verify-webhook-signatures-in-n8n',
				type: 'Issue',
				organizationId: '0a2b4c6d-8e0f-4a1b-9c3d-5e7f9a1b3c5d',
				webhookTimestamp: timestampMs,
				webhookId: '000042e3-d123-4980-b49f-8e140eef9329',
			});
			return {
				body,
				headers: {
					'Linear-Delivery': '234d1a4e-b617-4388-90fe-adc3633d6b72',
					'Linear-Event': 'Issue',
					'Linear-Signature': createHmac('sha256', module.exports.linear.secret)
						.update(body)
						.digest('hex'),
				},
				nowSeconds: Math.floor(timestampMs / 1000),
			};
		},
		accepts: async ({ body, headers }, secret) => {
			const { LinearWebhookClient } = await loadLinear();
			const signature = header(headers, 'Linear-Signature');
			if (signature === undefined) return false;
			try {
				return new LinearWebhookClient(secret).verify(Buffer.from(body), signature);
			} catch {
				return false;
			}
		},
	},
	notion: {
		kind: 'library',
		source:
			'@notionhq/client@5.26.0, signWebhookPayload signs the delivery and verifyWebhookSignature judges it',
		secret: 'secret_tMrlL1qK5vuQAh1b6cZGhFChZTSYJlce98V0pYn7yBl',
		otherSecret: 'secret_Zq3vN8mW2xK7pR1tY5uB9cE4fH6jL0sA2dG8hJ4kM1n',
		genuine: async () => {
			const { signWebhookPayload } = require('@notionhq/client');
			const body = JSON.stringify({
				id: '367cba44-b6f3-4c92-81e7-6a2e9659efd4',
				timestamp: new Date().toISOString(),
				workspace_id: '13950b26-c203-4f3b-b97d-93ec06319565',
				workspace_name: 'Acme',
				subscription_id: '29d75c0d-5546-4414-8459-7b7a92f1fc4b',
				integration_id: '0ef2e755-4912-8096-91c1-00376a88a5ca',
				type: 'page.created',
				authors: [{ id: 'c7c11cca-1d73-471d-9b6e-bdef51470190', type: 'person' }],
				accessible_by: [{ id: '556a1abf-4f08-40c6-878a-75890d2a88ba', type: 'person' }],
				attempt_number: 1,
				entity: { id: '153104cd-477e-809d-8dc4-ff2d96ae3090', type: 'page' },
				data: { parent: { id: '13950b26-c203-4f3b-b97d-93ec06319565', type: 'space' } },
			});
			return {
				body,
				headers: {
					'X-Notion-Signature': await signWebhookPayload({
						body,
						verificationToken: module.exports.notion.secret,
					}),
				},
				nowSeconds: nowSeconds(),
			};
		},
		accepts: async ({ body, headers }, secret) => {
			const { verifyWebhookSignature } = require('@notionhq/client');
			return verifyWebhookSignature({
				body,
				signature: header(headers, 'X-Notion-Signature'),
				verificationToken: secret,
			});
		},
	},
	mux: {
		kind: 'documented',
		source:
			'https://github.com/muxinc/mux-node-sdk/blob/997915012cc5c6719205beb76f2a69e1dd39bacf/test/unit/webhooks/resources/verify_header.spec.cjs, "Unit::VerifyHeader verify with a header value that is actually valid: will return true when the payload is a string" (secret, payload, time and header as printed there; the header "generated from Mux\'s backend code"). Mux\'s official Node SDK.',
		secret: 'SuperSecret123',
		otherSecret: 'AnotherSecret456',
		genuine: async () => ({
			body: '{"test":"body"}',
			headers: {
				'Mux-Signature':
					't=1565125718,v1=854ece4c22acef7c66b57d4e504153bc512595e8e9c772ece2a68150548c19a7',
			},
			nowSeconds: 1565125718,
		}),
	},
	workOs: {
		kind: 'documented',
		source:
			"https://github.com/workos/workos-python/blob/dc591c5802a19777b0df2425b20e756ab748f094/tests/test_webhooks.py, TestWebhooks.test_passed_expected_event_validation (fixtures mock_event_body, mock_header and mock_secret as printed there). WorkOS's official Python SDK.",
		secret: '2sAZJlbjP8Ce3rwkKEv2GfKef',
		// The SDK test's mock_bad_secret.
		otherSecret: 'this_is_not_it_123',
		genuine: async () => ({
			body: WORKOS_BODY,
			headers: {
				'WorkOS-Signature':
					't=1722443701539, v1=bd54a3768f461461c8439c2f97ab0d646ef3976f84d5d5b132d18f2fa89cdad5',
			},
			// t is in milliseconds: 1722443701539 ms, to the whole second.
			nowSeconds: 1722443701,
		}),
	},
	fingerprint: {
		kind: 'documented',
		source:
			'https://github.com/fingerprintjs/node-sdk/blob/c2fd361160068d153520a1faffe17d7fcb75870c/tests/unit-tests/webhookTests.spec.ts, "Is valid webhook signature with valid signature" (secret, data and validHeader as printed there). Fingerprint\'s official Node SDK (@fingerprint/node-sdk, formerly fingerprintjs-pro-server-api-node-sdk).',
		secret: 'secret',
		otherSecret: 'another-secret',
		genuine: async () => ({
			body: 'data',
			headers: {
				'FPJS-Event-Signature':
					'v1=1b2c16b75bd2a870c114153ccda5bcfca63314bc722fa160d690de133ccbb9db',
			},
			// Fingerprint signs no timestamp and the test prints none: when the test was first committed
			// (885b693c7fcfcd1abe4f6891ca7d3d87412db101, 2024-05-29T17:22:53+09:00), for the record.
			nowSeconds: 1716970973,
		}),
	},
};
