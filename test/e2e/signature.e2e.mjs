// End-to-end: the template's signature check (Idempotency Reserve verifying before it reserves), in
// a real n8n 2.41.1 server. Genuine
// Stripe-signed deliveries go through; forged ones and stale replays are answered 401 and reserve
// nothing, so a forgery can never block the genuine event. Run with `npm run test:e2e`; every test
// of this file also runs on n8n 1.123.81 with `npm run test:e2e:n8n1` (N8N_LINE=1).
// Signatures are made here the way Stripe makes them (HMAC-SHA256 of "<t>.<raw body>" with the
// stack's secret, scripts/harness/http.mjs); the unit tests check that scheme against Stripe's library.
// Two attacks by someone holding one genuine signed delivery: the captured body sent as a multipart
// file part named `data` beside forged form fields, and (on a copy of the template switched to
// GitHub, imported beside it) a GitHub delivery resent under a new X-GitHub-Delivery. Beside them, a
// copy of the template switched to each provider added since (the provider table says which; those
// signed with an HMAC, which test/support/signAs.js can sign fresh, in the media type the table
// gives the provider: JSON, or a form for a form-only sender such as Twilio), each with its own
// secret: a genuine delivery processed once, its repeat a duplicate, one signed with another secret 401.
import assert from 'node:assert/strict';
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';

import {
	BUSINESS_STEP,
	RESERVE,
	RESERVE_OUTPUTS,
	runSeedSequence,
	startStack,
	withStackLogs,
} from '../../scripts/harness/index.mjs';
import { templateSwitchedTo } from '../../scripts/harness/templates.mjs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { signAs } = require('../support/signAs.js');
const { PROVIDERS, verifiableFrom } = require('../../dist/nodes/shared/webhook/providers');
const {
	CLIENT_ERRORS,
	CLIENT_ERROR_DOCS,
	INVALID_SIGNATURE_DETAIL,
} = require('../../dist/nodes/shared/keys/clientErrors');
const { ESTABLISHED } = require('../../dist/nodes/shared/webhook/providers/established');

/** The providers added after the first six whose deliveries signAs can sign (HMAC), from the table. */
const ADDED_PROVIDERS = verifiableFrom(PROVIDERS).filter(
	(/** @type {any} */ p) =>
		!ESTABLISHED.some((/** @type {any} */ e) => e.value === p.value) &&
		['sha1', 'sha256', 'sha512'].includes(p.signing.algorithm),
);
/** A secret of the provider's form: text, or whsec_ and base64 for Standard Webhooks and Svix senders. */
const secretOf = (/** @type {any} */ provider) =>
	provider.signing.secret === 'text'
		? `e2e-${provider.value}-secret`
		: `whsec_${Buffer.from(`e2e-${provider.value}-secret-bytes`).toString('base64')}`;
const credentialOf = (/** @type {number} */ index) => ({
	id: `WhSigAdded${String(index).padStart(7, '0')}`,
	name: `Webhook Signing Secret (added ${index})`,
});
/** The template switched to one provider, as a user switches it, on its own path and credential. */
const providerCopy = (/** @type {any} */ provider, /** @type {number} */ index) =>
	templateSwitchedTo(provider, {
		id: `IdemAdded${String(index).padStart(8, '0')}`,
		webhookPath: `idempotent-webhook-${provider.value.toLowerCase()}`,
		credential: credentialOf(index),
	});
/** @type {any[]} the published copies, in ADDED_PROVIDERS' order */
let added = [];

// Reserve 2.3 answers the 401 itself (Answer Problems): nothing runs after it.
const REFUSED_PATH = ['Webhook', RESERVE];

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;
/** The GitHub copy of the template, once published: { id, webhookUrl }. */
let github;

const GITHUB_SECRET = "e2e-github-webhook-secret: It's a Secret to Everybody";
// Referred to by id too: n8n's import matches a credential given by name alone by its type, and the
// stack has two of this type.
const GITHUB_CREDENTIAL = { id: 'WhSigGitHubE2E001', name: 'Webhook Signing Secret (GitHub)' };

/**
 * The webhook template as a GitHub user switches it (docs/signatures.md, "Switching the provider"):
 * Reserve verifies GitHub's signature and keys on the GitHub preset, with a credential holding the
 * GitHub secret; the Webhook listens on its own path. Everything else is the template's.
 */
function githubCopy() {
	return templateSwitchedTo(
		{ value: 'github', label: 'GitHub' },
		{
			id: 'IdemWebhookGitHub',
			webhookPath: 'idempotent-webhook-github',
			credential: GITHUB_CREDENTIAL,
		},
	);
}

/** X-Hub-Signature-256 for these bytes, as GitHub signs: HMAC-SHA256 hex of the body. */
const githubSignature = (bytes) =>
	`sha256=${createHmac('sha256', GITHUB_SECRET).update(bytes).digest('hex')}`;
const sha256Hex = (bytes) => createHash('sha256').update(bytes).digest('hex');

/** A multipart/form-data body: text fields, then one file part. */
function multipartBody(boundary, fields, file) {
	const parts = Object.entries(fields).map(
		([name, value]) =>
			`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
	);
	return Buffer.concat([
		Buffer.from(parts.join('')),
		Buffer.from(
			`--${boundary}\r\nContent-Disposition: form-data; name="${file.name}"; filename="${file.filename}"\r\nContent-Type: application/json\r\n\r\n`,
		),
		file.bytes,
		Buffer.from(`\r\n--${boundary}--\r\n`),
	]);
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Runs a check; on failure prints the tail of n8n's log, where the cause usually is. */
const withN8nLog = (fn) => withStackLogs(stack, fn);

/**
 * The template's answer to any failed signature: 401 problem+json of kind invalid-signature, the
 * same detail whatever failed (docs/errors.md#invalid-signature); the reason is not in it.
 */
function assertInvalidSignatureAnswer(/** @type {any} */ response) {
	assert.match(response.headers['content-type'] ?? '', /^application\/problem\+json/);
	assert.deepEqual(response.json, {
		type: `${CLIENT_ERROR_DOCS}#invalid-signature`,
		title: CLIENT_ERRORS['invalid-signature'].title,
		status: 401,
		detail: INVALID_SIGNATURE_DETAIL,
	});
}

/** Sends a delivery the template must refuse and checks everything a refusal means. */
async function assertRefused(event, headers, reason, { sign = true } = {}) {
	const key = `evt:${event.id}`;
	const businessBefore = (await stack.businessRows()).length;
	const keysBefore = (await stack.keyRows(key)).length;
	const refused = await stack.deliver(event, { headers, sign });
	assert.equal(refused.response.status, 401, refused.response.text);
	assertInvalidSignatureAnswer(refused.response);
	assert.deepEqual(refused.execution.nodesRun, REFUSED_PATH);
	assert.equal(refused.execution.status, 'success');
	assert.deepEqual(
		refused.execution
			.items(RESERVE, RESERVE_OUTPUTS.invalidSignature)
			.map((item) => item.signature),
		[{ valid: false, provider: 'stripe', reason }],
	);
	assert.equal(
		(await stack.keyRows(key)).length,
		keysBefore,
		'the refused delivery reserved nothing',
	);
	assert.equal(
		(await stack.businessRows()).length,
		businessBefore,
		'the refused delivery wrote no business row',
	);
	return refused;
}

before(
	async () => {
		stack = await startStack({
			label: 'e2e_sig',
			extraWorkflows: [
				{ workflow: githubCopy() },
				...ADDED_PROVIDERS.map((provider, index) => ({ workflow: providerCopy(provider, index) })),
			],
			extraCredentials: [
				{
					...GITHUB_CREDENTIAL,
					type: 'webhookSigningSecretApi',
					data: { secret: GITHUB_SECRET, previousSecret: '' },
				},
				...ADDED_PROVIDERS.map((provider, index) => ({
					...credentialOf(index),
					type: 'webhookSigningSecretApi',
					data: { secret: secretOf(provider), previousSecret: '' },
				})),
			],
		});
		[github, ...added] = stack.extraWorkflows;
	},
	{ timeout: 60 * 60_000 },
);

after(
	async () => {
		await stack?.stop();
	},
	{ timeout: 120_000 },
);

test(
	"seed sequence signed by Stripe's scheme: A, A re-signed with a later timestamp, B → 3 executions, 2 business rows",
	{ timeout: 180_000 },
	() =>
		withN8nLog(async () => {
			const steps = await runSeedSequence(stack);
			assert.deepEqual(
				steps.map((step) => [step.status, step.answer]),
				[
					[200, { status: 'processed' }],
					[200, { status: 'duplicate', key: 'evt:evt_A' }],
					[200, { status: 'processed' }],
				],
			);
			const [first, repeat] = steps;
			assert.notEqual(first.signature, repeat.signature, 'the retry carries a new signature');
			assert.equal(repeat.execution.trigger.headers['stripe-signature'], repeat.signature);
			for (const step of steps) {
				assert.deepEqual(step.execution.items(RESERVE, RESERVE_OUTPUTS.invalidSignature), []);
				assert.equal(step.execution.nodesRun[1], RESERVE);
			}
			assert.ok(!repeat.execution.nodesRun.includes(BUSINESS_STEP));
			assert.equal(
				(await stack.executions.list({ workflowId: stack.webhookWorkflowId })).length,
				3,
			);
			assert.deepEqual(
				(await stack.businessRows()).map((row) => row.event_key),
				['evt:evt_A', 'evt:evt_B'],
			);
			assert.deepEqual(
				(await stack.keyRows()).map((row) => row.key),
				['evt:evt_A', 'evt:evt_B'],
			);
		}),
);

test(
	'a forged A and a stale replay are answered 401 and reserve nothing',
	{ timeout: 180_000 },
	() =>
		withN8nLog(async () => {
			const bytesOf = (event) => Buffer.from(JSON.stringify(event));
			// Forged: signed with a secret that is not the endpoint's.
			const fakeA = { id: 'evt_A', type: 'payment_intent.succeeded' };
			await assertRefused(
				fakeA,
				{ 'stripe-signature': stack.stripeSignature(bytesOf(fakeA), { secret: 'whsec_attacker' }) },
				'mismatch',
			);
			// A header in Stripe's format with a made-up signature.
			const fakeNew = { id: 'evt_forged_new', type: 'payment_intent.succeeded' };
			await assertRefused(
				fakeNew,
				{ 'stripe-signature': stack.fakeStripeSignature('forged') },
				'mismatch',
			);
			assert.deepEqual(await stack.keyRows('evt:evt_forged_new'), []);
			// A replay: genuinely signed, 10 minutes ago (tolerance 300 s).
			const replay = { id: 'evt_replayed', type: 'payment_intent.succeeded' };
			const stale = stack.stripeSignature(bytesOf(replay), { timestamp: nowSeconds() - 600 });
			await assertRefused(replay, { 'stripe-signature': stale }, 'timestamp_out_of_tolerance');
			assert.deepEqual(
				await stack.keyRows('evt:evt_replayed'),
				[],
				'no row in the key table for the replayed event',
			);
			// One body byte changed after signing.
			const signedFor = { id: 'evt_tampered', type: 'payment_intent.succeeded', amount: 1 };
			const tampered = { ...signedFor, amount: 9 };
			await assertRefused(
				tampered,
				{ 'stripe-signature': stack.stripeSignature(bytesOf(signedFor)) },
				'mismatch',
			);
			// No signature at all (the harness signs every request unless told not to).
			await assertRefused({ id: 'evt_unsigned' }, {}, 'missing_header', { sign: false });
		}),
);

test(
	'a forged delivery for an event never seen does not block the genuine one that follows',
	{ timeout: 180_000 },
	() =>
		withN8nLog(async () => {
			const event = { id: 'evt_after_forgery', type: 'invoice.paid' };
			const key = `evt:${event.id}`;
			await assertRefused(
				event,
				{ 'stripe-signature': stack.fakeStripeSignature('first-forgery') },
				'mismatch',
			);
			const genuine = await stack.deliver(event);
			assert.equal(genuine.response.status, 200);
			assert.deepEqual(genuine.response.json, { status: 'processed' });
			assert.deepEqual(genuine.execution.nodesRun, [
				'Webhook',
				RESERVE,
				BUSINESS_STEP,
				'Complete Key',
			]);
			assert.equal((await stack.businessRows(key)).length, 1);
			assert.equal((await stack.keyRows(key)).length, 1);
		}),
);

test(
	'the multipart forgery: a captured signed body as file part `data`, forged fields → 401, nothing reserved',
	{ timeout: 180_000 },
	() =>
		withN8nLog(async () => {
			const captured = Buffer.from(
				JSON.stringify({ id: 'evt_captured_multipart', type: 'charge.succeeded' }),
			);
			const signature = stack.stripeSignature(captured);
			const boundary = `----e2eFormBoundary${randomUUID().replaceAll('-', '')}`;
			const businessBefore = await stack.businessRows();
			const keysBefore = await stack.keyRows();
			const forged = await stack.deliver(
				multipartBody(
					boundary,
					{ id: 'evt_forged', type: 'payout.paid' },
					{ name: 'data', filename: 'event.json', bytes: captured },
				),
				{
					contentType: `multipart/form-data; boundary=${boundary}`,
					headers: { 'stripe-signature': signature },
					sign: false,
				},
			);
			assert.equal(forged.response.status, 401, forged.response.text);
			assertInvalidSignatureAnswer(forged.response);
			assert.deepEqual(
				forged.execution
					.items(RESERVE, RESERVE_OUTPUTS.invalidSignature)
					.map((item) => item.signature?.reason),
				['unsigned_body'],
			);
			assert.deepEqual(forged.execution.nodesRun, REFUSED_PATH);
			// What n8n made of it: the forged fields as the body, the captured bytes as an upload.
			assert.deepEqual(forged.execution.trigger.body, { id: 'evt_forged', type: 'payout.paid' });
			assert.deepEqual(await stack.keyRows('evt:evt_forged'), []);
			assert.deepEqual(await stack.keyRows(), keysBefore, 'the forgery reserved nothing');
			assert.deepEqual(await stack.businessRows(), businessBefore, 'business_log unchanged');

			// The same captured bytes and signature, delivered as Stripe sent them, are genuine.
			const honest = await stack.deliver(captured, { headers: { 'stripe-signature': signature } });
			assert.equal(honest.response.status, 200, honest.response.text);
			assert.deepEqual(honest.response.json, { status: 'processed' });
			assert.equal((await stack.businessRows('evt:evt_captured_multipart')).length, 1);
		}),
);

test(
	'GitHub: the same bytes and signature under a new X-GitHub-Delivery → 200 duplicate, business step once',
	{ timeout: 180_000 },
	() =>
		withN8nLog(async () => {
			const bytes = Buffer.from(
				JSON.stringify({ ref: 'refs/heads/main', after: randomUUID(), pusher: { name: 'e2e' } }),
			);
			const key = `sha256:${sha256Hex(bytes)}`;
			const send = async (deliveryId) =>
				await stack.deliver(bytes, {
					to: github,
					sign: false,
					headers: {
						'x-github-event': 'push',
						'x-github-delivery': deliveryId,
						'x-hub-signature-256': githubSignature(bytes),
					},
				});
			const first = await send(randomUUID());
			assert.equal(first.response.status, 200, first.response.text);
			assert.deepEqual(first.response.json, { status: 'processed' });
			assert.equal(
				first.execution.items(RESERVE, RESERVE_OUTPUTS.new)[0].idempotency.keyFrom,
				'signedContent',
			);

			const replayId = randomUUID();
			const replay = await send(replayId);
			assert.equal(replay.response.status, 200, replay.response.text);
			assert.deepEqual(replay.response.json, { status: 'duplicate', key });
			assert.ok(!replay.execution.nodesRun.includes(BUSINESS_STEP), 'business step not run again');
			assert.equal((await stack.businessRows(key)).length, 1, 'one business_log row');
			assert.equal((await stack.keyRows(key)).length, 1, 'one key row');
			assert.deepEqual(await stack.keyRows(`evt:${replayId}`), []);
		}),
);

test(
	'the template switched to each added provider: genuine processed once, then duplicate; another secret 401',
	{ timeout: 300_000 },
	() =>
		withN8nLog(async () => {
			assert.ok(ADDED_PROVIDERS.length >= 5, 'at least five added providers in a real n8n');
			const outcomes = [];
			for (const [index, provider] of ADDED_PROVIDERS.entries()) {
				const to = added[index];
				const sign = (/** @type {string} */ secret) =>
					signAs(provider, {
						body: { type: 'e2e.added', provider: provider.value },
						secret,
						url: to.webhookUrl,
					});
				const send = async (/** @type {{ body: Buffer, headers: Record<string, string> }} */ d) =>
					(await stack.deliver(d.body, { to, sign: false, headers: d.headers })).response;
				const genuine = sign(secretOf(provider));
				const first = await send(genuine);
				const again = await send(genuine);
				const other = sign(secretOf({ ...provider, value: `${provider.value}-other` }));
				const refused = await stack.deliver(other.body, {
					to,
					sign: false,
					headers: other.headers,
				});
				const forged = refused.response;
				assertInvalidSignatureAnswer(forged);
				// Why it was refused is in the execution, not in the answer.
				const [verdict] = refused.execution
					.items(RESERVE, RESERVE_OUTPUTS.invalidSignature)
					.map((item) => item.signature?.reason);
				outcomes.push([
					provider.value,
					first.status,
					first.json?.status,
					again.json?.status,
					forged.status,
					verdict,
				]);
			}
			process.stderr.write(`[e2e_sig] added providers: ${JSON.stringify(outcomes)}\n`);
			assert.deepEqual(
				outcomes,
				ADDED_PROVIDERS.map((p) => [p.value, 200, 'processed', 'duplicate', 401, 'mismatch']),
			);
		}),
);
