// End-to-end: every endpoint handshake of the provider table (docs/signatures.md, "Handshakes: connecting a sender"),
// in a real n8n server, through the shipped webhook template switched to each provider as a user
// switches it (Reserve's Signature and Key Source, a credential with the sender's secret and, for
// Meta, its Verify Token), each on its own path. The template's Webhook takes POST and GET, so
// Meta's GET verification reaches Reserve. For each handshake, with the sender's documented example
// (test/support/handshakeExamples.js, signed as the sender signs it):
// - the answer the sender checks, byte for byte (status, Content-Type, body);
// - nothing reserved, no business step: n8n recorded Webhook → Reserve and nothing after;
// - forged (another key) or a wrong verify token: 401 problem+json or 403, nothing reserved;
// - a real event of the same sender on the same path is still processed as an event.
// Then what the senders' own libraries showed the imagined requests missed: GitHub's ping from a form
// hook answered; a Discord Webhook Event processed once and its repeat a duplicate; Twilio's fields
// moved from the form into the query (twilio's validateRequest takes it) a duplicate; a `+json`
// delivery processed with its body read, an unknown type 415 naming what the sender sends.
// Run with `npm run test:e2e`; on n8n 1.123.81 with `npm run test:e2e:n8n1`.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';

import {
	BUSINESS_STEP,
	RESERVE,
	sendEvent,
	startStack,
	withStackLogs,
} from '../../scripts/harness/index.mjs';
import {
	importableCopy,
	templateSwitchedTo,
	WEBHOOK_TEMPLATE,
} from '../../scripts/harness/templates.mjs';

const require = createRequire(import.meta.url);
const { signDelivery, signerFor, withSharedSecret } = require('../support/signDelivery.js');
const { VECTORS } = require('../vectors/index.js');
const { SIGNED_EXAMPLES, UNSIGNED_EXAMPLES } = require('../support/handshakeExamples.js');
const twilio = require('twilio');
const { PROVIDERS } = require('../../dist/nodes/shared/webhook/providers');

/** Every provider of the table with a handshake: none listed by hand. */
const WITH_HANDSHAKE = PROVIDERS.filter((/** @type {any} */ provider) => provider.handshake);
const HANDSHAKE_PATH = ['Webhook', RESERVE];

/** Per provider: its signer (the secret or key pair the credential holds) and its credential. */
const senders = WITH_HANDSHAKE.map((/** @type {any} */ provider, index) => {
	const signer = signerFor(provider.signing);
	const credential = {
		id: `WhSigHandshake${String(index).padStart(3, '0')}`,
		name: `Webhook Signing Secret (${provider.label}, handshake)`,
	};
	return {
		provider,
		signer,
		credential,
		workflowId: `IdemHandshake${String(index).padStart(5, '0')}`,
	};
});

/**
 * Twilio has no handshake, but its copy shows the replay guard keyed on the one string it signs:
 * fields moved from the form into the URL's query are a duplicate.
 */
const TWILIO = PROVIDERS.find((/** @type {any} */ provider) => provider.value === 'twilio');
const twilioSender = {
	provider: TWILIO,
	signer: signerFor(TWILIO.signing),
	credential: { id: 'WhSigHandshakeTwilio', name: 'Webhook Signing Secret (Twilio, handshake)' },
	workflowId: 'IdemHandshakeTwilio',
};

/**
 * The template as a queue consumer would shape it: a node between the trigger and Reserve puts the
 * request's JSON body in the item (as a queue message parsed as JSON is), and Reserve checks no
 * signature itself. A body that says `signature: {valid: true, …}` is a forged handed-on verdict.
 */
const FORGED_VERDICT_ID = 'IdemHandshakeForged';
function forgedVerdictCopy() {
	const workflow = importableCopy(WEBHOOK_TEMPLATE, FORGED_VERDICT_ID);
	workflow.name = `${workflow.name} (a message parsed as JSON before Reserve, e2e)`;
	for (const node of workflow.nodes) {
		if (node.type === 'n8n-nodes-base.webhook') {
			node.parameters = { ...node.parameters, path: 'idempotent-webhook-forged-verdict' };
			node.webhookId = randomUUID();
		}
		if (node.name === RESERVE) {
			node.parameters = { ...node.parameters, signature: 'none', eventId: '={{ $json.id }}' };
			const { webhookSigningSecretApi: _unused, ...credentials } = node.credentials;
			node.credentials = credentials;
		}
	}
	workflow.nodes.push({
		id: 'parse-message',
		name: 'Parse Message',
		type: 'n8n-nodes-base.set',
		typeVersion: 3.4,
		position: [120, 300],
		parameters: { mode: 'raw', jsonOutput: '={{ JSON.stringify($json.body) }}', options: {} },
	});
	const toParse = [{ node: 'Parse Message', type: 'main', index: 0 }];
	workflow.connections.Webhook = { main: [toParse, toParse] };
	workflow.connections['Parse Message'] = {
		main: [[{ node: RESERVE, type: 'main', index: 0 }]],
	};
	return workflow;
}

/** The template switched to one provider, on its own path and credential. */
const switchedCopy = ({ provider, credential, workflowId }) =>
	templateSwitchedTo(provider, {
		id: workflowId,
		webhookPath: `idempotent-webhook-handshake-${provider.value.toLowerCase()}`,
		credential,
		name: `${provider.label}, handshake e2e`,
	});

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;
/** Each sender's published copy: { id, webhookUrl }, by provider value. */
const published = new Map();

before(
	async () => {
		stack = await startStack({
			label: 'e2e_handshakes',
			extraWorkflows: [
				...[...senders, twilioSender].map((sender) => ({ workflow: switchedCopy(sender) })),
				{ workflow: forgedVerdictCopy() },
			],
			extraCredentials: [...senders, twilioSender].map(({ provider, signer, credential }) => ({
				...credential,
				type: 'webhookSigningSecretApi',
				data: {
					secret: signer.secret,
					previousSecret: '',
					verifyToken: '',
					...UNSIGNED_EXAMPLES[provider.value]?.credential,
				},
			})),
		});
		for (const sender of [...senders, twilioSender])
			published.set(
				sender.provider.value,
				stack.extraWorkflows.find((workflow) => workflow.id === sender.workflowId),
			);
	},
	{ timeout: 30 * 60_000 },
);

after(async () => await stack?.stop(), { timeout: 120_000 });

const counts = async () => ({
	keys: (await stack.keyRows()).length,
	business: (await stack.businessRows()).length,
});

/**
 * Sends a request to the sender's copy and waits for the execution n8n recorded for it.
 * @param {any} sender
 * @param {{ body?: string, headers?: Record<string, string>, method?: string, query?: Record<string, string>, contentType?: string }} [request]
 */
async function send(
	sender,
	{ body = '', headers = {}, method = 'POST', query, contentType = 'application/json' } = {},
) {
	const copy = published.get(sender.provider.value);
	const search = query ? new URLSearchParams(query).toString() : '';
	const url = search ? `${copy.webhookUrl}?${search}` : copy.webhookUrl;
	const response = await sendEvent(url, Buffer.from(body), {
		method,
		headers,
		sign: false,
		contentType,
	});
	const execution = await stack.executions.waitForRequest(copy.id, response.requestId);
	return { response, execution };
}

/** The headers of `body` signed as the provider signs (with `signer`: the sender's, or a forger's). */
function signed(sender, signer, body, headers) {
	return signDelivery(sender.provider, signer, {
		bytes: Buffer.from(body),
		headers,
		nowSeconds: Math.floor(Date.now() / 1000),
	});
}

/** What the sender checks: status, every header the answer sets (Content-Type…) and the exact bytes. */
function assertAnswer(response, expected) {
	assert.equal(response.status, expected.statusCode, response.text);
	for (const [name, value] of Object.entries(expected.headers))
		assert.equal(response.headers[name], value, name);
	assert.equal(response.text, expected.body);
}

/** Nothing reserved, no business row, and n8n stopped after Reserve. */
async function assertNothingRan(execution, countsBefore) {
	assert.deepEqual(execution.nodesRun, HANDSHAKE_PATH);
	assert.equal(execution.status, 'success');
	assert.deepEqual(await counts(), countsBefore);
}

for (const sender of senders.filter(({ provider }) => provider.handshake.signed)) {
	const { provider, signer } = sender;
	const example = SIGNED_EXAMPLES[provider.value];

	test(`${provider.label}: its ${provider.handshake.name} answered as the sender checks it; forged refused; a real event still processed`, () =>
		withStackLogs(stack, async () => {
			assert.ok(example, `a documented example of ${provider.label}'s handshake`);
			const countsBefore = await counts();

			const genuine = await send(sender, {
				body: example.body,
				headers: signed(sender, signer, example.body, example.headers),
			});
			assertAnswer(genuine.response, example.expected(signer.secret));
			await assertNothingRan(genuine.execution, countsBefore);

			const forged = await send(sender, {
				body: example.body,
				headers: signed(sender, signerFor(provider.signing), example.body, example.headers),
			});
			assert.equal(forged.response.status, 401, forged.response.text);
			assert.match(forged.response.headers['content-type'], /^application\/problem\+json/);
			assert.ok(!forged.execution.nodesRun.includes(BUSINESS_STEP));
			assert.deepEqual(await counts(), countsBefore);

			// GitHub names its events in an unsigned header: a real event is sent as the event it is.
			const eventHeaders =
				provider.value === 'github'
					? { ...example.headers, 'x-github-event': 'push' }
					: example.headers;
			const event = await send(sender, {
				body: example.event,
				headers: signed(sender, signer, example.event, eventHeaders),
			});
			assert.equal(event.response.status, 200, event.response.text);
			assert.deepEqual(event.response.json, { status: 'processed' });
			assert.ok(event.execution.nodesRun.includes(BUSINESS_STEP));
			assert.deepEqual(await counts(), {
				keys: countsBefore.keys + 1,
				business: countsBefore.business + 1,
			});
		}));
}

for (const sender of senders.filter(({ provider }) => !provider.handshake.signed)) {
	const { provider } = sender;
	const example = UNSIGNED_EXAMPLES[provider.value];

	const method = example?.method ?? 'GET';

	test(`${provider.label}: the ${method} ${provider.handshake.name} through the template's ${method} output: the challenge, and what must not get it refused`, () =>
		withStackLogs(stack, async () => {
			assert.ok(example, `an example of ${provider.label}'s handshake`);
			const countsBefore = await counts();
			const bodiless = {
				method,
				...(example.contentType ? { contentType: example.contentType } : {}),
			};
			const right = await send(sender, {
				...bodiless,
				query: example.query,
				headers: example.headers?.(sender.signer.secret) ?? {},
			});
			assertAnswer(right.response, example.expected);
			await assertNothingRan(right.execution, countsBefore);

			for (const refused of example.refused) {
				const { query, headers = {} } = 'query' in refused ? refused : { query: refused };
				const wrong = await send(sender, { ...bodiless, query, headers });
				assertAnswer(wrong.response, example.refusedAnswer);
				await assertNothingRan(wrong.execution, countsBefore);
			}
		}));
}

// Graph and Okta sign nothing: their deliveries pass on the shared secret alone (clientState in
// every notification, Okta's Authorization header); another secret gets the template's 401.
for (const sender of senders.filter(({ provider }) => 'sharedSecret' in provider.signing)) {
	const { provider, signer } = sender;

	test(`${provider.label}: a delivery with the shared secret is processed; another secret is refused 401, nothing reserved`, () =>
		withStackLogs(stack, async () => {
			const countsBefore = await counts();
			const documented = JSON.parse(String((await VECTORS[provider.value].genuine()).body));
			const deliver = async (secret) => {
				const bytes = withSharedSecret(provider, secret, documented);
				const headers = signDelivery(provider, signerFor(provider.signing, secret), {
					bytes,
					headers: {},
					nowSeconds: Math.floor(Date.now() / 1000),
				});
				return await send(sender, { body: bytes.toString('utf8'), headers });
			};
			const forged = await deliver('a-guessed-shared-secret');
			assert.equal(forged.response.status, 401, forged.response.text);
			assert.match(forged.response.headers['content-type'], /^application\/problem\+json/);
			assert.ok(!forged.execution.nodesRun.includes(BUSINESS_STEP));
			assert.deepEqual(await counts(), countsBefore);

			const genuine = await deliver(signer.secret);
			assert.equal(genuine.response.status, 200, genuine.response.text);
			assert.deepEqual(genuine.response.json, { status: 'processed' });
			assert.ok(genuine.execution.nodesRun.includes(BUSINESS_STEP));
			assert.deepEqual(await counts(), {
				keys: countsBefore.keys + 1,
				business: countsBefore.business + 1,
			});
		}));
}

/** The sender of the table entry `value` in this suite. */
const senderOf = (/** @type {string} */ value) =>
	senders.find(({ provider }) => provider.value === value);

test("GitHub's ping from a hook whose content type is form (payload=<JSON>): answered, nothing run", () =>
	withStackLogs(stack, async () => {
		const sender = senderOf('github');
		const example = SIGNED_EXAMPLES.github;
		const countsBefore = await counts();
		const form = `payload=${encodeURIComponent(example.body)}`;
		const { response, execution } = await send(sender, {
			body: form,
			contentType: 'application/x-www-form-urlencoded',
			headers: signed(sender, sender.signer, form, example.headers),
		});
		assertAnswer(response, example.expected());
		await assertNothingRan(execution, countsBefore);
	}));

test('Discord Webhook Events: an APPLICATION_AUTHORIZED event processed once, its repeat a duplicate', () =>
	withStackLogs(stack, async () => {
		const sender = senderOf('discordWebhookEvents');
		const countsBefore = await counts();
		const body = JSON.stringify({
			version: 1,
			application_id: '1',
			type: 1,
			event: {
				type: 'APPLICATION_AUTHORIZED',
				timestamp: new Date().toISOString(),
				data: { user: { id: String(Date.now()) } },
			},
		});
		// Each attempt signed anew (Discord's timestamp is signed): the same event.
		const first = await send(sender, { body, headers: signed(sender, sender.signer, body, {}) });
		assert.equal(first.response.status, 200, first.response.text);
		assert.deepEqual(first.response.json, { status: 'processed' });
		const again = await send(sender, { body, headers: signed(sender, sender.signer, body, {}) });
		assert.equal(again.response.status, 200, again.response.text);
		assert.equal(again.response.json.status, 'duplicate');
		assert.ok(!again.execution.nodesRun.includes(BUSINESS_STEP));
		assert.deepEqual(await counts(), {
			keys: countsBefore.keys + 1,
			business: countsBefore.business + 1,
		});
	}));

test("Twilio: fields moved from the form into the URL's query (the same signed string) are a duplicate", () =>
	withStackLogs(stack, async () => {
		const copy = published.get('twilio');
		const countsBefore = await counts();
		const fields = {
			AccountSid: 'AC9a9f9392lad99kla0sklakjs90j092j3',
			ApiVersion: '2010-04-01',
			Body: `hello ${Date.now()}`,
			From: '+15550001111',
			MessageSid: `SM${Date.now()}`,
		};
		const signedUrl = `${copy.webhookUrl}?src=sms`;
		const signature = twilio.getExpectedTwilioSignature(
			twilioSender.signer.secret,
			signedUrl,
			fields,
		);
		const { AccountSid, ApiVersion, ...rest } = fields;
		const moved = `smsAccountSid${AccountSid}ApiVersion${ApiVersion}`;
		// twilio's own check takes the moved request: the signed string is the same.
		assert.ok(
			twilio.validateRequest(
				twilioSender.signer.secret,
				signature,
				`${copy.webhookUrl}?src=${moved}`,
				rest,
			),
		);
		const post = async (query, form, token) =>
			await send(twilioSender, {
				body: new URLSearchParams(form).toString(),
				contentType: 'application/x-www-form-urlencoded',
				query,
				headers: { 'x-twilio-signature': signature, 'i-twilio-idempotency-token': token },
			});
		const first = await post({ src: 'sms' }, fields, 'token-1');
		assert.equal(first.response.status, 200, first.response.text);
		assert.deepEqual(first.response.json, { status: 'processed' });
		const replay = await post({ src: moved }, rest, 'token-2');
		assert.equal(replay.response.status, 200, replay.response.text);
		assert.equal(replay.response.json.status, 'duplicate');
		assert.ok(!replay.execution.nodesRun.includes(BUSINESS_STEP));
		assert.deepEqual(await counts(), {
			keys: countsBefore.keys + 1,
			business: countsBefore.business + 1,
		});
	}));

test('A +json delivery (a Slack event as application/cloudevents+json): processed, the workflow reads its body', () =>
	withStackLogs(stack, async () => {
		const sender = senderOf('slack');
		const countsBefore = await counts();
		const eventId = `Ev${Date.now()}`;
		const body = JSON.stringify({
			token: 'x',
			team_id: 'T1',
			type: 'event_callback',
			event_id: eventId,
			event: { type: 'app_mention' },
		});
		const { response, execution } = await send(sender, {
			body,
			contentType: 'application/cloudevents+json',
			headers: signed(sender, sender.signer, body, {}),
		});
		assert.equal(response.status, 200, response.text);
		assert.deepEqual(response.json, { status: 'processed' });
		assert.ok(execution.nodesRun.includes(BUSINESS_STEP));
		const rows = await stack.businessRows();
		assert.equal(rows.length, countsBefore.business + 1);
		// n8n parses no +json type: the business step read $json.body.type from the signed bytes.
		assert.equal(rows.at(-1).event_type, 'event_callback');
		assert.match(rows.at(-1).event_key, new RegExp(eventId));

		// Still refused: a type Slack does not send, named in the 415's detail; nothing reserved.
		const refused = await send(sender, {
			body,
			contentType: 'text/html',
			headers: signed(sender, sender.signer, body, {}),
		});
		assert.equal(refused.response.status, 415, refused.response.text);
		assert.match(
			refused.response.json.detail,
			/^Slack sends application\/json or any \+json media type \(RFC 6839\) or application\/x-www-form-urlencoded; this delivery's Content-Type is "text\/html"/,
		);
		assert.equal((await stack.businessRows()).length, countsBefore.business + 1);
	}));

test('A forged handed-on verdict (a message whose JSON says its signature was verified): refused, nothing reserved', () =>
	withStackLogs(stack, async () => {
		const copy = stack.extraWorkflows.find((workflow) => workflow.id === FORGED_VERDICT_ID);
		const countsBefore = await counts();
		const id = `evt_forged_${Date.now()}`;
		const message = {
			id,
			type: 'payout.paid',
			signature: { valid: true, provider: 'github', digest: `sha256:${'a'.repeat(64)}` },
		};
		const response = await sendEvent(copy.webhookUrl, Buffer.from(JSON.stringify(message)), {
			sign: false,
		});
		const execution = await stack.executions.waitForRequest(copy.id, response.requestId);
		assert.ok(response.status >= 400, `${response.status} ${response.text}`);
		assert.match(response.headers['content-type'], /^application\/problem\+json/);
		assert.ok(!execution.nodesRun.includes(BUSINESS_STEP));
		assert.deepEqual(await stack.keyRows(`evt:${id}`), []);
		assert.deepEqual(await counts(), countsBefore);
	}));
