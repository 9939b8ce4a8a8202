// Test vectors for the messaging, email, forms and meetings providers (providers/messaging.ts).
// Each is the provider's own published example ('documented') or a delivery its official npm
// library signs or, for key pairs and verify-only libraries, accepts ('library'). Mailgun and
// Postmark are unverifiable and have none.
const { createHmac, generateKeyPairSync, sign } = require('node:crypto');
const { verifyKey } = require('discord-interactions');
const { AwsLambdaReceiver } = require('@zoom/rivet/meetings');

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A header's value whatever its case, or undefined. */
function header(headers, name) {
	const key = Object.keys(headers).find(
		(candidate) => candidate.toLowerCase() === name.toLowerCase(),
	);
	return key === undefined ? undefined : headers[key];
}

/** Ed25519 key pairs as Discord's Developer Portal shows the public key: 32 bytes as hex. */
function ed25519Pair() {
	const { publicKey, privateKey } = generateKeyPairSync('ed25519');
	const spki = publicKey.export({ format: 'der', type: 'spki' });
	return { publicKeyHex: spki.subarray(spki.length - 32).toString('hex'), privateKey };
}

/** A vector discord-interactions accepts: `body` signed with a fresh key pair, as Discord signs both endpoints. */
function discordVector(/** @type {string} */ body) {
	const keys = ed25519Pair();
	return {
		kind: 'library',
		source: 'discord-interactions@4.4.0 (github.com/discord/discord-interactions-js), verifyKey',
		secret: keys.publicKeyHex,
		otherSecret: ed25519Pair().publicKeyHex,
		genuine: async () => {
			const timestamp = String(nowSeconds());
			const signature = sign(null, Buffer.from(timestamp + body), keys.privateKey);
			return {
				body,
				headers: {
					'Content-Type': 'application/json',
					'X-Signature-Ed25519': signature.toString('hex'),
					'X-Signature-Timestamp': timestamp,
				},
				nowSeconds: Number(timestamp),
			};
		},
		accepts: async ({ body: sent, headers }, secret) => {
			const signature = header(headers, 'X-Signature-Ed25519');
			const timestamp = header(headers, 'X-Signature-Timestamp');
			if (signature === undefined || timestamp === undefined) return false;
			try {
				return await verifyKey(sent, signature, timestamp, secret);
			} catch {
				return false;
			}
		},
	};
}

module.exports = {
	// An application command (type 2), not a PING (type 1): a PING is a handshake the nodes answer
	// themselves and pass on to no output (test/integration/handshakes.test.js).
	discord: discordVector(
		'{"application_id":"1199999999999999999","id":"1200000000000000001","token":"aW50ZXJhY3Rpb246MTIwMDAwMDAwMDAwMDAwMDAwMQ","type":2,"data":{"id":"1","name":"hello","type":1},"version":1}',
	),
	// A Webhook Event (WebhookType.EVENT = 1), not the PING (0): Discord's documented example shape.
	discordWebhookEvents: discordVector(
		'{"version":1,"application_id":"1199999999999999999","type":1,"event":{"type":"APPLICATION_AUTHORIZED","timestamp":"2024-10-18T14:42:53.064834","data":{"integration_type":1,"scopes":["applications.commands"],"user":{"id":"111178765189277770","username":"nelly"}}}}',
	),

	twilio: {
		kind: 'documented',
		// The example Twilio's SDKs all test against (twilio-php and twilio-csharp hold the same one).
		source:
			'https://github.com/twilio/twilio-node/blob/45d3d65a4ea87652f4c7973af0e0998f3af31322/spec/validation.spec.js, "Request validation: should succeed with the correct signature" (token 12345, defaultParams, requestUrl, defaultSignature)',
		// The same file's "should validate request body with multiple params and values" checks repeated
		// names: Sid=CA123&SidAccount=AC123&Digits=5678&Digits=1234&Digits=1234 at the same URL signs as
		// IK+Dwps556ElfBT0I3Rgjkr1wJU= (a repeated name's values deduplicated, then sorted).
		secret: '12345',
		otherSecret: '54321',
		genuine: async () => ({
			// defaultParams as Twilio posts them (form-encoded, `+` as %2B), deliberately not sorted.
			body: 'To=%2B18005551212&From=%2B14158675309&CallSid=CA1234567890ABCDE&Digits=1234&Caller=%2B14158675309',
			headers: {
				'Content-Type': 'application/x-www-form-urlencoded',
				'X-Twilio-Signature': 'RSOYDt4T1cUTdK1PDd93/VVr8B8=',
			},
			url: 'https://mycompany.com/myapp.php?foo=1&bar=2',
			// Twilio's signature has no timestamp: any moment will do.
			nowSeconds: 1700000000,
		}),
	},

	sendGrid: {
		kind: 'documented',
		// SendGrid's own fixture: a real verification key, signature and delivery (also shipped in the npm
		// package as @sendgrid/eventwebhook@8.0.0 src/eventwebhook.spec.js).
		source:
			'https://github.com/sendgrid/sendgrid-nodejs/blob/8cbfaeb3ef2efdc78e8ef6f4ca899f119d976ee5/packages/eventwebhook/src/eventwebhook.spec.js, "should verify a valid single event signature" (PUBLIC_KEY, SIGNATURE, TIMESTAMP, PAYLOAD)',
		secret:
			'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE83T4O/n84iotIvIW4mdBgQ/7dAfSmpqIM8kF9mN1flpVKS3GRqe62gw+2fNNRaINXvVpiglSI8eNEc6wEA3F+g==',
		// The key the same file's "should reject for invalid key" uses.
		otherSecret:
			'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEqTxd43gyp8IOEto2LdIfjRQrIbsd4SXZkLW6jDutdhXSJCWHw8REntlo7aNDthvj+y7GjUuFDb/R1NGe1OPzpA==',
		genuine: async () => ({
			// PAYLOAD: JSON.stringify of the one-event array, then the CRLF SendGrid sends.
			body: '[{"email":"hello@world.com","event":"dropped","reason":"Bounced Address","sg_event_id":"ZHJvcC0xMDk5NDkxOS1MUnpYbF9OSFN0T0doUTRrb2ZTbV9BLTA","sg_message_id":"LRzXl_NHStOGhQ4kofSm_A.filterdrecv-p3mdw1-756b745b58-kmzbl-18-5F5FC76C-9.0","smtp-id":"<LRzXl_NHStOGhQ4kofSm_A@ismtpd0039p1iad1.sendgrid.net>","timestamp":1600112492}]\r\n',
			headers: {
				'Content-Type': 'application/json',
				'X-Twilio-Email-Event-Webhook-Signature':
					'MEUCIGHQVtGj+Y3LkG9fLcxf3qfI10QysgDWmMOVmxG0u6ZUAiEAyBiXDWzM+uOe5W0JuG+luQAbPIqHh89M15TluLtEZtM=',
				'X-Twilio-Email-Event-Webhook-Timestamp': '1600112502',
			},
			nowSeconds: 1600112502,
		}),
	},

	zoom: {
		kind: 'library',
		// Rivet verifies and does not sign, so the delivery is signed here with the scheme Rivet checks
		// (HMAC-SHA256 hex of `v0:{x-zm-request-timestamp}:{body}`), and Rivet's verdict is the proof.
		source:
			'@zoom/rivet@0.4.0 (github.com/zoom/rivet-javascript), @zoom/rivet/meetings AwsLambdaReceiver (CommonHttpRequest.isEventVerified)',
		secret: 'xmE1c2VjcmV0LXRva2VuLWZvci10ZXN0cw',
		otherSecret: 'AnotherSecretTokenForZoomTests00',
		genuine: async () => {
			const timestamp = String(nowSeconds());
			// Compact JSON, as Zoom sends it: Rivet checks the signature over JSON.stringify(JSON.parse(body)).
			const body =
				'{"event":"meeting.started","event_ts":1733400000000,"payload":{"account_id":"AAAAAAAAAAAAAAAAAAAAAA","object":{"id":"85746065432","uuid":"4444AAAiAAAAAiAiAiiAii==","host_id":"z8yAAAAA8bbbQ","topic":"Weekly sync","type":2,"start_time":"2024-12-05T12:00:00Z","timezone":"UTC","duration":30}}}';
			const signature = createHmac('sha256', 'xmE1c2VjcmV0LXRva2VuLWZvci10ZXN0cw')
				.update(`v0:${timestamp}:${body}`)
				.digest('hex');
			return {
				body,
				headers: {
					'Content-Type': 'application/json',
					'x-zm-signature': `v0=${signature}`,
					'x-zm-request-timestamp': timestamp,
				},
				nowSeconds: Number(timestamp),
			};
		},
		accepts: async ({ body, headers }, secret) => {
			const receiver = new AwsLambdaReceiver({ webhooksSecretToken: secret });
			// Only emit is called, after a verified event; the rest of Rivet's EventManager is not needed.
			receiver.init({ eventEmitter: /** @type {any} */ ({ emit: async () => undefined }) });
			// Rivet logs every event it handles at debug level.
			const debug = console.debug;
			console.debug = () => undefined;
			try {
				const answer = await receiver.start()({ body, headers: { ...headers } }, {});
				return answer.statusCode === 200;
			} catch {
				return false;
			} finally {
				console.debug = debug;
			}
		},
	},

	line: {
		kind: 'documented',
		// The fixture of LINE's own Node.js SDK: a body without events, so the key falls back to the body hash.
		source:
			'https://github.com/line/line-bot-sdk-nodejs/blob/3c0a10c71692fc877fc97b9fcc8fd911fd5c7c04/test/validate-signature.spec.ts, validateSignature "success" (body JSON.stringify({ hello: "world" }), secret test_secret, validSignature)',
		secret: 'test_secret',
		otherSecret: 'other_test_secret',
		genuine: async () => ({
			body: '{"hello":"world"}',
			headers: {
				'Content-Type': 'application/json',
				'x-line-signature': 't7Hn4ZDHqs6e+wdvI5TyQIvzie0DmMUmuXEBqyyE/tM=',
			},
			// LINE's signature has no timestamp: any moment will do.
			nowSeconds: 1700000000,
		}),
	},

	pusher: {
		kind: 'documented',
		// pusher-http-node's own fixture (Pusher's Node.js server library).
		source:
			'https://github.com/pusher/pusher-http-node/blob/7492d8db91463cbcb591bcbebadb8ea3767bf0ba/tests/integration/webhook.js, WebHook #isValid "should return true for a webhook with correct signature" (Token("123456789", "tofu"), the x-pusher-signature and JSON.stringify rawBody printed there)',
		secret: 'tofu',
		otherSecret: 'beef',
		genuine: async () => ({
			body: '{"time_ms":1403175510755,"events":[{"channel":"test_channel","name":"channel_vacated"}]}',
			headers: {
				'Content-Type': 'application/json',
				'X-Pusher-Key': '123456789',
				'X-Pusher-Signature': 'c17257e92037cd7de407ebc1ed174ceb7b2e518db127f44411b9ffc4f5b28cc5',
			},
			// Pusher signs no timestamp: the body's time_ms, for the record.
			nowSeconds: 1403175510,
		}),
	},

	streamChat: {
		kind: 'documented',
		// The fixed fixture of Stream's own JavaScript SDK (its other webhook tests sign with a helper).
		source:
			'https://github.com/GetStream/stream-chat-js/blob/77fb9c875e5d27896c563a51c86a56db24ebed16/test/unit/signing.test.js, Signing CheckSignature "validates correct json body and signature" (MOCK_SECRET, JSON.stringify(MOCK_JSON_BODY), MOCK_JSON_SHA256)',
		secret: 'porewqKAFDSAKZssecretsercretfads',
		otherSecret: 'anotherStreamApiSecretForTests00',
		genuine: async () => ({
			body: '{"a":1}',
			headers: {
				'Content-Type': 'application/json',
				'X-Signature': 'e527a6ad4993a4c9a30680c8be4b3eda1c36ab104f1f7d39c744bd27016a9624',
			},
			// Stream signs no timestamp: any moment will do.
			nowSeconds: 1700000000,
		}),
	},

	typeform: {
		kind: 'documented',
		// Typeform publishes no signed example on a released branch or docs page: this is the fixture of
		// its official JavaScript client (@typeform/api-client), on the unmerged `middleware` branch only.
		source:
			'https://github.com/Typeform/js-api-client/blob/187327c25dbb62ea28b06288d702b3bd5a7a077f/tests/unit/verify-signature.test.ts, #verifySignature "should return true" (payload JSON.stringify({ foo: "bar" }), secret my-webook-secret, the sha256= signature printed there). Unmerged branch `middleware` of Typeform\'s official JavaScript client, in no release; the same commit\'s tests/unit/express-middleware.test.ts uses custom-secret as another secret.',
		secret: 'my-webook-secret',
		otherSecret: 'custom-secret',
		genuine: async () => ({
			body: '{"foo":"bar"}',
			headers: {
				'Content-Type': 'application/json',
				'Typeform-Signature': 'sha256=X2b3nUhiGjaWHxmPO/YQzUvHXBNac4gPjZ5/bjXrhQY=',
			},
			// Typeform signs no timestamp: any moment will do.
			nowSeconds: 1700000000,
		}),
	},
};
