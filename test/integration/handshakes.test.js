// Endpoint handshakes (docs/signatures.md, "Handshakes: connecting a sender") through n8n-core's WorkflowExecute:
// every provider of the table with a handshake gets its documented example, signed with
// test/support/signDelivery.js as the sender signs it, through Reserve (signature set to the
// provider) and through Verify Webhook Signature. The node answers it itself (the exact answer in
// webhookResponses, Zoom's encryptedToken against an HMAC computed here), nothing is reserved (the
// key table), nothing reaches a node after it; a forged one is refused like any delivery (invalid,
// nothing answered). Meta's GET is checked against the credential's Verify Token (403 otherwise).
const { describe, test, expect } = require('@jest/globals');
const { useTestDatabase } = require('../support/database');
const { registerTestNode, runWorkflow } = require('../support/engine');
const { signDelivery, signerFor } = require('../support/signDelivery');
const {
	EVENT_TYPES,
	SIGNED_EXAMPLES,
	UNSIGNED_EXAMPLES,
	META_VERIFICATION,
	GRAPH_VALIDATION_TOKEN,
	oktaVerification,
	TEXT_TYPE,
} = require('../support/handshakeExamples');
const { VECTORS } = require('../vectors');
const { deliveryItem, webhookItem } = require('../support/webhookItems');
const { PROVIDERS } = require('../../dist/nodes/shared/webhook/providers');

const db = useTestDatabase();

const { RESERVE, VERIFY, reserveNode, verifyNode } = require('../support/signatureNodes');

// Whatever reaches a node after the one under test: the business step that must not run.
registerTestNode('afterHandshake', async function () {
	return [this.getInputData()];
});

/** @type {readonly any[]} */
const TABLE = PROVIDERS;
const withHandshake = TABLE.filter((provider) => provider.handshake !== undefined);
const signedOnes = withHandshake.filter((provider) => provider.handshake.signed);
const unsignedOnes = withHandshake.filter((provider) => !provider.handshake.signed);

// Adding a provider with a handshake is its table entry plus its example in
// test/support/handshakeExamples.js (SIGNED_EXAMPLES or UNSIGNED_EXAMPLES, by `handshake.signed`):
// every test below takes its cases from the table, so this fails until the example is there.
test('every handshake of the table has its example, and every example a handshake of the table', () => {
	expect(signedOnes.map(({ value }) => value).sort()).toEqual(Object.keys(SIGNED_EXAMPLES).sort());
	expect(unsignedOnes.map(({ value }) => value).sort()).toEqual(
		Object.keys(UNSIGNED_EXAMPLES).sort(),
	);
});

/** The node under test with every output it has wired to a node of its own. */
function workflowFor(node, outputCount) {
	const after = Array.from({ length: outputCount }, (_, index) => ({
		id: `after-${index}`,
		name: `After ${index}`,
		type: 'test.afterHandshake',
		typeVersion: 1,
		position: [300, index * 100],
		parameters: {},
	}));
	return {
		name: `${node.name} (handshake test)`,
		nodes: [node, ...after],
		connections: {
			[node.name]: {
				main: after.map(({ name }) => [{ node: name, type: 'main', index: 0 }]),
			},
		},
		settings: { executionOrder: 'v1' },
	};
}

async function throughReserve(provider, items, credential) {
	const { node, outputs } = reserveNode(provider.value);
	const run = await runWorkflow(workflowFor(node, outputs.count), items, {
		credentials: db.credential(),
		credentialsByType: { webhookSigningSecretApi: credential },
	});
	return { run, outputs, node: RESERVE };
}

async function throughVerify(provider, items, credential) {
	const { node, outputs } = verifyNode(provider.value);
	const run = await runWorkflow(workflowFor(node, outputs.count), items, {
		credentialsByType: { webhookSigningSecretApi: credential },
	});
	return { run, outputs, node: VERIFY };
}

/** @type {Array<[string, (provider: any, items: object[], credential: object) => Promise<any>]>} */
const NODES = [
	['Reserve', throughReserve],
	['Verify Webhook Signature', throughVerify],
];

/** Keys in the key table (none when it was never created). */
async function keyCount() {
	const { rows } = await db.query(
		"SELECT to_regclass('public.processed_events') IS NOT NULL AS present",
	);
	if (!rows[0].present) return 0;
	const counted = await db.query('SELECT count(*)::int AS n FROM processed_events');
	return counted.rows[0].n;
}

/** Every output of the node under test, as [output, pairedItem] pairs. */
function routed({ run, outputs, node }) {
	const pairs = [];
	for (let output = 0; output < outputs.count; output++)
		for (const item of run.output(node, output)) pairs.push([output, item.pairedItem.item]);
	return pairs;
}

const hintsOf = ({ run, node }) =>
	(run.run.data.resultData.runData[node]?.[0]?.hints ?? []).map(({ message }) => message);

const afterRan = ({ run, outputs }) =>
	Array.from({ length: outputs.count }, (_, index) => `After ${index}`).filter((name) =>
		run.ran(name),
	);

/** A bodiless request as n8n's Webhook node emits it with Raw Body on: `{}`, no bytes. */
function bodilessItem(query, headers = {}) {
	const item = webhookItem({ body: {}, rawBody: '' });
	delete item.json.headers['content-type'];
	Object.assign(item.json.headers, headers);
	item.json.query = query;
	return item;
}

/** The node answered `answer` itself: nothing routed, nothing after it ran, nothing reserved; `hint` said. */
async function expectAnsweredAlone(result, answer, hint = undefined) {
	expect(result.run.status).toBe('success');
	expect(result.run.webhookResponses).toEqual([answer]);
	expect(routed(result)).toEqual([]);
	expect(afterRan(result)).toEqual([]);
	expect(await keyCount()).toBe(0);
	if (hint !== undefined) expect(hintsOf(result)).toEqual([hint]);
}

function signedItem(provider, signer, body, headers) {
	const bytes = Buffer.from(body);
	const nowSeconds = Math.floor(Date.now() / 1000);
	const signedHeaders = signDelivery(provider, signer, { bytes, headers, nowSeconds });
	return deliveryItem(provider, { rawBody: bytes, headers: signedHeaders });
}

/** @type {Array<[string, any]>} */
const SIGNED_CASES = signedOnes.map((provider) => [provider.value, provider]);

describe.each(SIGNED_CASES)('%s: its signed handshake', (value, provider) => {
	const example = SIGNED_EXAMPLES[value];
	describe.each(NODES)('through %s', (_name, through) => {
		test('answered by the node, byte for byte; nothing reserved; nothing after it ran', async () => {
			await db.query('DROP TABLE IF EXISTS processed_events');
			const signer = signerFor(provider.signing);
			const item = signedItem(provider, signer, example.body, example.headers);
			const result = await through(provider, [item], { secret: signer.secret });
			expect(result.run.status).toBe('success');
			expect(result.run.webhookResponses).toEqual([example.expected(signer.secret)]);
			expect(routed(result)).toEqual([]);
			expect(afterRan(result)).toEqual([]);
			expect(await keyCount()).toBe(0);
			expect(hintsOf(result)).toEqual([
				`Answered ${provider.label}'s ${provider.handshake.name} handshake (${example.expected(signer.secret).statusCode}): nothing reserved, no business step`,
			]);
		});

		test('forged (signed with another key): refused as invalid, nothing answered or reserved', async () => {
			await db.query('DROP TABLE IF EXISTS processed_events');
			const signer = signerFor(provider.signing);
			const forger = signerFor(provider.signing);
			const item = signedItem(provider, forger, example.body, example.headers);
			const result = await through(provider, [item], { secret: signer.secret });
			expect(result.run.webhookResponses).toEqual([]);
			expect(routed(result)).toEqual([[result.outputs.invalidSignature, 0]]);
			const [refused] = result.run.output(result.node, result.outputs.invalidSignature);
			expect(refused.json.signature).toEqual({
				valid: false,
				provider: value,
				reason: 'mismatch',
			});
			expect(await keyCount()).toBe(0);
			expect(hintsOf(result)).toEqual([]);
		});

		test('a real event of the same sender is an event, not a handshake', async () => {
			await db.query('DROP TABLE IF EXISTS processed_events');
			const signer = signerFor(provider.signing);
			// GitHub's event name header is not signed: a real event sent as "ping" stays an event.
			const item = signedItem(provider, signer, example.event, example.headers);
			const result = await through(provider, [item], { secret: signer.secret });
			expect(result.run.webhookResponses).toEqual([]);
			expect(routed(result)).toEqual([[0, 0]]);
			expect(await keyCount()).toBe(result.node === RESERVE ? 1 : 0);
		});
	});
});

/** @type {Array<[string, any]>} */
const UNSIGNED_CASES = unsignedOnes.map((provider) => [provider.value, provider]);

describe.each(UNSIGNED_CASES)('%s: its unsigned handshake', (value, provider) => {
	const example = UNSIGNED_EXAMPLES[value];
	/** The bodiless request the sender sends (a GET, or Graph's POST with a Content-Type). */
	const request = (query, headers = {}) =>
		bodilessItem(query, {
			...(example.contentType === undefined ? {} : { 'content-type': example.contentType }),
			...headers,
		});

	describe.each(NODES)('through %s', (_name, through) => {
		test('answered by the node as the sender checks it; nothing reserved; nothing after it ran', async () => {
			await db.query('DROP TABLE IF EXISTS processed_events');
			const secret = signerFor(provider.signing).secret;
			const headers = example.headers?.(secret) ?? {};
			const result = await through(provider, [request(example.query, headers)], {
				secret,
				...example.credential,
			});
			await expectAnsweredAlone(
				result,
				example.expected,
				`Answered ${provider.label}'s ${provider.handshake.name} handshake (${example.expected.statusCode}): nothing reserved, no business step`,
			);
		});

		test('what must not get the challenge back is refused as the example says; nothing reserved', async () => {
			await db.query('DROP TABLE IF EXISTS processed_events');
			const secret = signerFor(provider.signing).secret;
			for (const refused of example.refused) {
				const { query, headers = {} } = 'query' in refused ? refused : { query: refused };
				const result = await through(provider, [request(query, headers)], {
					secret,
					...example.credential,
				});
				await expectAnsweredAlone(result, example.refusedAnswer);
			}
		});
	});
});

// Each signed handshake's sender, over its real event types (EVENT_TYPES: its library's enum, or its
// docs), through Reserve and Verify Webhook Signature: a real event is reserved (Reserve) or valid
// (Verify), never answered; the documented handshake is answered, never reserved. Never the other way.
describe('every signed handshake against its sender’s real event types', () => {
	const fc = require('fast-check');

	test('the senders with event types are the ones with a signed handshake', () => {
		expect(Object.keys(EVENT_TYPES).sort()).toEqual(signedOnes.map(({ value }) => value).sort());
	});

	test.each(SIGNED_CASES)(
		'%s: events reserved, its handshake answered, never the other way',
		async (value, provider) => {
			await db.query('DROP TABLE IF EXISTS processed_events');
			const { types, event } = EVENT_TYPES[value];
			const example = SIGNED_EXAMPLES[value];
			const signer = signerFor(provider.signing);
			const delivery = fc.record({
				handshake: fc.boolean(),
				type: fc.constantFrom(...(await types())),
				id: fc.uuid(),
			});
			await fc.assert(
				fc.asyncProperty(delivery, async ({ handshake, type, id }) => {
					const { body, headers } = handshake ? example : event(type, id);
					for (const [, through] of NODES) {
						const before = await keyCount();
						const item = signedItem(provider, signer, body, headers);
						const result = await through(provider, [item], { secret: signer.secret });
						const reserving = result.node === RESERVE;
						if (handshake) {
							expect(result.run.webhookResponses).toEqual([example.expected(signer.secret)]);
							expect(routed(result)).toEqual([]);
							expect(await keyCount()).toBe(before);
						} else {
							expect([type, result.run.webhookResponses]).toEqual([type, []]);
							expect([type, routed(result)]).toEqual([type, [[0, 0]]]);
							expect(await keyCount()).toBe(before + (reserving ? 1 : 0));
						}
					}
				}),
				{ numRuns: 12 },
			);
			// The tests after this one count keys from none.
			await db.query('DROP TABLE IF EXISTS processed_events');
		},
		120_000,
	);
});

describe('a signed body that says otherwise is never answered as a handshake', () => {
	test("Slack: n8n's body claims url_verification, the signed bytes are an event: refused, not answered", async () => {
		const provider = TABLE.find(({ value }) => value === 'slack');
		const signer = signerFor(provider.signing);
		const item = signedItem(provider, signer, SIGNED_EXAMPLES.slack.event, {});
		item.json.body = { type: 'url_verification', challenge: 'forged' };
		for (const [, through] of NODES) {
			const result = await through(provider, [item], { secret: signer.secret });
			expect(result.run.webhookResponses).toEqual([]);
			expect(hintsOf(result)).toEqual([]);
		}
		expect(await keyCount()).toBe(0);
	});
});

describe('Meta (WhatsApp Cloud API): the GET verification request', () => {
	const provider = TABLE.find(({ value }) => value === 'whatsApp');
	const APP_SECRET = 'meta_app_secret';
	const TOKEN = META_VERIFICATION.token;

	const documented = META_VERIFICATION.query;

	describe.each(NODES)('through %s', (_name, through) => {
		test('the right token: 200 with hub.challenge as text; nothing reserved or run after', async () => {
			await db.query('DROP TABLE IF EXISTS processed_events');
			const result = await through(provider, [bodilessItem(documented)], {
				secret: APP_SECRET,
				verifyToken: TOKEN,
			});
			await expectAnsweredAlone(result, META_VERIFICATION.expected);
		});

		test.each([
			['a wrong token', { ...documented, 'hub.verify_token': 'meatyhamhocK' }, TOKEN],
			['no token', { 'hub.mode': 'subscribe', 'hub.challenge': '1158201444' }, TOKEN],
			['no Verify Token in the credential', documented, undefined],
		])('%s: 403, nothing echoed, nothing reserved', async (_case, query, verifyToken) => {
			const result = await through(provider, [bodilessItem(query)], {
				secret: APP_SECRET,
				...(verifyToken === undefined ? {} : { verifyToken }),
			});
			expect(result.run.webhookResponses).toEqual([META_VERIFICATION.refused]);
			expect(routed(result)).toEqual([]);
			expect(await keyCount()).toBe(0);
			expect(hintsOf(result)).toEqual([
				expect.stringMatching(/^Refused WhatsApp Cloud API \(Meta\)'s .* handshake \(403\): /),
			]);
		});

		test('a POST with a body and the same query is not the handshake: its signature decides', async () => {
			const signer = signerFor(provider.signing);
			const item = signedItem(
				provider,
				signer,
				'{"object":"whatsapp_business_account","entry":[]}',
				{},
			);
			item.json.query = documented;
			const forged = signedItem(provider, signerFor(provider.signing), '{"object":"x"}', {});
			forged.json.query = documented;
			const result = await through(provider, [item, forged], {
				secret: signer.secret,
				verifyToken: TOKEN,
			});
			expect(result.run.webhookResponses).toEqual([]);
			expect(routed(result)).toEqual([
				[0, 0],
				[result.outputs.invalidSignature, 1],
			]);
		});
	});
});

describe('Dropbox: the GET verification request, echoed without a token', () => {
	const provider = TABLE.find(({ value }) => value === 'dropbox');
	const REFLECTED = { 'content-type': TEXT_TYPE, 'x-content-type-options': 'nosniff' };

	describe.each(NODES)('through %s', (_name, through) => {
		// https://www.dropbox.com/developers/reference/webhooks (dropbox_hook.py's default challenge)
		test('?challenge=…: 200 with the challenge as text/plain, nosniff; nothing reserved or run after', async () => {
			await db.query('DROP TABLE IF EXISTS processed_events');
			const result = await through(provider, [bodilessItem({ challenge: 'challenge123' })], {
				secret: 'ABC123',
			});
			await expectAnsweredAlone(
				result,
				{ statusCode: 200, headers: REFLECTED, body: 'challenge123' },
				"Answered Dropbox's verification request handshake (200): nothing reserved, no business step",
			);
		});

		test('a challenge too long to echo: 400, not reflected, nothing reserved', async () => {
			const result = await through(provider, [bodilessItem({ challenge: 'x'.repeat(300) })], {
				secret: 'ABC123',
			});
			expect(result.run.webhookResponses).toEqual([
				{ statusCode: 400, headers: REFLECTED, body: 'challenge is longer than 256 characters' },
			]);
			expect(routed(result)).toEqual([]);
			expect(await keyCount()).toBe(0);
		});

		test('a POST with a body and the same query is not the handshake: its signature decides', async () => {
			const signer = signerFor(provider.signing);
			const item = signedItem(provider, signer, '{"list_folder": {"accounts": ["12345"]}}', {});
			item.json.query = { challenge: 'challenge123' };
			const forged = signedItem(
				provider,
				signerFor(provider.signing),
				'{"list_folder": {"accounts": ["67890"]}}',
				{},
			);
			forged.json.query = { challenge: 'challenge123' };
			const result = await through(provider, [item, forged], { secret: signer.secret });
			expect(result.run.webhookResponses).toEqual([]);
			expect(routed(result)).toEqual([
				[0, 0],
				[result.outputs.invalidSignature, 1],
			]);
		});
	});
});

describe('Microsoft Graph: the validation request (a bodiless POST), echoed without a secret', () => {
	const provider = TABLE.find(({ value }) => value === 'microsoftGraph');
	const example = UNSIGNED_EXAMPLES.microsoftGraph;
	const SECRET = VECTORS.microsoftGraph.secret;
	// Graph posts it as text/plain with no body: n8n's parse is then `{}` or '' and no bytes.
	const validation = (query) =>
		bodilessItem(query, { 'content-type': 'text/plain; charset=utf-8' });

	describe.each(NODES)('through %s', (_name, through) => {
		test('?validationToken=…: 200 text/plain with the decoded token, nosniff; nothing reserved or run after', async () => {
			await db.query('DROP TABLE IF EXISTS processed_events');
			const result = await through(
				provider,
				[validation({ validationToken: GRAPH_VALIDATION_TOKEN })],
				{ secret: SECRET },
			);
			await expectAnsweredAlone(
				result,
				example.expected,
				"Answered Microsoft Graph's validation request handshake (200): nothing reserved, no business step",
			);
		});

		test('a token too long to echo: 400, not reflected, nothing reserved', async () => {
			const result = await through(provider, [validation(example.refused[0])], {
				secret: SECRET,
			});
			expect(result.run.webhookResponses).toEqual([example.refusedAnswer]);
			expect(routed(result)).toEqual([]);
			expect(await keyCount()).toBe(0);
		});

		test('a notification POSTed with the same query is no handshake: its clientState decides', async () => {
			await db.query('DROP TABLE IF EXISTS processed_events');
			const genuine = await VECTORS.microsoftGraph.genuine();
			const item = deliveryItem(provider, { rawBody: Buffer.from(genuine.body), headers: {} });
			item.json.query = { validationToken: GRAPH_VALIDATION_TOKEN };
			const forged = deliveryItem(provider, {
				rawBody: Buffer.from(
					String(genuine.body).replace('secretClientValue', 'guessedClientValue'),
				),
				headers: {},
			});
			forged.json.query = { validationToken: GRAPH_VALIDATION_TOKEN };
			const result = await through(provider, [item, forged], { secret: SECRET });
			expect(result.run.webhookResponses).toEqual([]);
			expect(routed(result)).toEqual([
				[0, 0],
				[result.outputs.invalidSignature, 1],
			]);
			expect(await keyCount()).toBe(result.node === RESERVE ? 1 : 0);
		});
	});
});

describe('Okta Event Hooks: the one-time verification (a GET), answered once the shared secret holds', () => {
	const provider = TABLE.find(({ value }) => value === 'oktaEventHooks');
	const example = UNSIGNED_EXAMPLES.oktaEventHooks;
	const SECRET = VECTORS.oktaEventHooks.secret;

	describe.each(NODES)('through %s', (_name, through) => {
		test('the right Authorization: 200 {"verification": …} as Okta prints it; nothing reserved or run after', async () => {
			await db.query('DROP TABLE IF EXISTS processed_events');
			const result = await through(provider, [bodilessItem({}, oktaVerification(SECRET))], {
				secret: SECRET,
			});
			await expectAnsweredAlone(
				result,
				example.expected,
				"Answered Okta Event Hooks's one-time verification handshake (200): nothing reserved, no business step",
			);
		});

		test.each([
			[
				'a wrong secret',
				oktaVerification('my-shared-secret-but-not-yours'),
				/shared secret mismatch$/,
			],
			['no Authorization header', oktaVerification(undefined), /shared secret missing_header$/],
		])('%s: 401, the challenge not echoed, nothing reserved', async (_case, headers, why) => {
			await db.query('DROP TABLE IF EXISTS processed_events');
			const result = await through(provider, [bodilessItem({}, headers)], { secret: SECRET });
			await expectAnsweredAlone(result, example.refusedAnswer);
			const [hint] = hintsOf(result);
			expect(hint).toMatch(/^Refused Okta Event Hooks's one-time verification handshake \(401\): /);
			expect(hint).toMatch(why);
		});

		test('the header the user named in the credential (Shared Secret Header) is the one checked', async () => {
			const headers = { ...oktaVerification(undefined), 'x-okta-auth': SECRET };
			const named = await through(provider, [bodilessItem({}, headers)], {
				secret: SECRET,
				headerName: 'X-Okta-Auth',
			});
			expect(named.run.webhookResponses).toEqual([example.expected]);
			const unnamed = await through(provider, [bodilessItem({}, headers)], { secret: SECRET });
			expect(unnamed.run.webhookResponses).toEqual([example.refusedAnswer]);
		});
	});
});

describe("Discord's two endpoints, numbered oppositely (discord-interactions' own enums)", () => {
	const { InteractionType, WebhookType, WebhookEventType } = require('discord-interactions');
	const interactions = TABLE.find(({ value }) => value === 'discord');
	const webhookEvents = TABLE.find(({ value }) => value === 'discordWebhookEvents');
	const envelope = (type, event) =>
		JSON.stringify({ version: 1, application_id: '1', type, ...(event && { event }) });

	test('the numbering this block relies on is the library’s', () => {
		expect([InteractionType.PING, WebhookType.PING, WebhookType.EVENT]).toEqual([1, 0, 1]);
	});

	describe.each(NODES)('through %s', (_name, through) => {
		test('Webhook Events PING (WebhookType.PING): 204 with no body, nothing reserved', async () => {
			await db.query('DROP TABLE IF EXISTS processed_events');
			const signer = signerFor(webhookEvents.signing);
			const item = signedItem(webhookEvents, signer, envelope(WebhookType.PING), {});
			const result = await through(webhookEvents, [item], { secret: signer.secret });
			await expectAnsweredAlone(result, { statusCode: 204, headers: {}, body: '' });
		});

		test('a Webhook Event (WebhookType.EVENT, Interactions’ PING number) is an event, not a PING', async () => {
			await db.query('DROP TABLE IF EXISTS processed_events');
			const signer = signerFor(webhookEvents.signing);
			const body = envelope(WebhookType.EVENT, {
				type: WebhookEventType.APPLICATION_AUTHORIZED,
				timestamp: '2024-10-18T14:42:53.064834',
				data: { user: { id: '3' } },
			});
			const result = await through(webhookEvents, [signedItem(webhookEvents, signer, body, {})], {
				secret: signer.secret,
			});
			expect(result.run.webhookResponses).toEqual([]);
			expect(routed(result)).toEqual([[0, 0]]);
			expect(await keyCount()).toBe(result.node === RESERVE ? 1 : 0);
		});

		test('a Webhook Event signed to the Interactions entry by mistake is an event, never {"type":1}', async () => {
			await db.query('DROP TABLE IF EXISTS processed_events');
			const signer = signerFor(interactions.signing);
			const body = envelope(WebhookType.EVENT, {
				type: WebhookEventType.APPLICATION_AUTHORIZED,
				timestamp: '2024-10-18T14:42:53.064834',
			});
			const result = await through(interactions, [signedItem(interactions, signer, body, {})], {
				secret: signer.secret,
			});
			expect(result.run.webhookResponses).toEqual([]);
			expect(routed(result)).toEqual([[0, 0]]);
			expect(await keyCount()).toBe(result.node === RESERVE ? 1 : 0);
		});

		test('Interactions PING (InteractionType.PING): 200 {"type":1}', async () => {
			await db.query('DROP TABLE IF EXISTS processed_events');
			const signer = signerFor(interactions.signing);
			const body = JSON.stringify({ id: '2', token: 't', type: InteractionType.PING, version: 1 });
			const result = await through(interactions, [signedItem(interactions, signer, body, {})], {
				secret: signer.secret,
			});
			await expectAnsweredAlone(result, SIGNED_EXAMPLES.discord.expected());
		});
	});
});

describe('GitHub: the ping of a hook whose content type is form (payload=<JSON>)', () => {
	const provider = TABLE.find(({ value }) => value === 'github');
	const SECRET = 'It’s a Secret to Everybody';
	const example = SIGNED_EXAMPLES.github;

	/** The form GitHub posts, signed over its raw bytes with @octokit/webhooks-methods' sign. */
	async function formDelivery(json, event) {
		const { sign } = await import('@octokit/webhooks-methods');
		const form = `payload=${encodeURIComponent(json)}`;
		return deliveryItem(provider, {
			rawBody: Buffer.from(form),
			headers: {
				...example.headers,
				'x-github-event': event,
				'content-type': 'application/x-www-form-urlencoded',
				'x-hub-signature-256': await sign(SECRET, form),
			},
		});
	}

	describe.each(NODES)('through %s', (_name, through) => {
		test('answered as the JSON ping is; nothing reserved or run after', async () => {
			await db.query('DROP TABLE IF EXISTS processed_events');
			const item = await formDelivery(example.body, 'ping');
			const result = await through(provider, [item], { secret: SECRET });
			await expectAnsweredAlone(
				result,
				example.expected(),
				"Answered GitHub's ping handshake (200): nothing reserved, no business step",
			);
		});

		test('a form event sent as "ping" (the header is not signed) stays an event', async () => {
			await db.query('DROP TABLE IF EXISTS processed_events');
			const item = await formDelivery(example.event, 'ping');
			const result = await through(provider, [item], { secret: SECRET });
			expect(result.run.webhookResponses).toEqual([]);
			expect(routed(result)).toEqual([[0, 0]]);
			expect(await keyCount()).toBe(result.node === RESERVE ? 1 : 0);
		});
	});
});

describe('Zoom: the url_validation during a secret rotation', () => {
	const provider = TABLE.find(({ value }) => value === 'zoom');
	const example = SIGNED_EXAMPLES.zoom;

	describe.each(NODES)('through %s', (_name, through) => {
		test('signed with the previous secret: encryptedToken keyed with the previous secret', async () => {
			await db.query('DROP TABLE IF EXISTS processed_events');
			const previous = signerFor(provider.signing);
			const current = signerFor(provider.signing);
			const item = signedItem(provider, previous, example.body, example.headers);
			const result = await through(provider, [item], {
				secret: current.secret,
				previousSecret: previous.secret,
			});
			await expectAnsweredAlone(result, example.expected(previous.secret));
		});
	});
});

describe('every echoed handshake value: nosniff, and over the cap answered 400 with nothing reserved', () => {
	const TOO_LONG = 'x'.repeat(300);
	const refusal = (what) => ({
		statusCode: 400,
		headers: { 'content-type': TEXT_TYPE, 'x-content-type-options': 'nosniff' },
		body: `${what} is longer than 256 characters`,
	});

	describe.each(NODES)('through %s', (_name, through) => {
		test("Meta's hub.challenge (GET, the right token)", async () => {
			await db.query('DROP TABLE IF EXISTS processed_events');
			const provider = TABLE.find(({ value }) => value === 'whatsApp');
			const query = { ...META_VERIFICATION.query, 'hub.challenge': TOO_LONG };
			const result = await through(provider, [bodilessItem(query)], {
				secret: 'meta_app_secret',
				verifyToken: META_VERIFICATION.token,
			});
			await expectAnsweredAlone(result, refusal('hub.challenge'));
		});

		test("Twitch's signed challenge", async () => {
			await db.query('DROP TABLE IF EXISTS processed_events');
			const provider = TABLE.find(({ value }) => value === 'twitchEventSub');
			const example = SIGNED_EXAMPLES.twitchEventSub;
			const body = JSON.stringify({ ...JSON.parse(example.body), challenge: TOO_LONG });
			const signer = signerFor(provider.signing);
			const item = signedItem(provider, signer, body, example.headers);
			const result = await through(provider, [item], { secret: signer.secret });
			await expectAnsweredAlone(result, refusal('body challenge'));
		});
	});
});
