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
// Run with `npm run test:e2e`; on n8n 1.123.81 with `npm run test:e2e:n8n1`.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';

import {
	BUSINESS_STEP,
	RESERVE,
	sendEvent,
	startStack,
	withStackLogs,
} from '../../scripts/harness/index.mjs';
import { templateSwitchedTo } from '../../scripts/harness/templates.mjs';

const require = createRequire(import.meta.url);
const { signDelivery, signerFor, withSharedSecret } = require('../support/signDelivery.js');
const { VECTORS } = require('../vectors/index.js');
const { SIGNED_EXAMPLES, UNSIGNED_EXAMPLES } = require('../support/handshakeExamples.js');
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
			extraWorkflows: senders.map((sender) => ({ workflow: switchedCopy(sender) })),
			extraCredentials: senders.map(({ provider, signer, credential }) => ({
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
		for (const sender of senders)
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
