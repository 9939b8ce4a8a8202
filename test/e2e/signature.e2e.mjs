// End-to-end: the template's signature check (Idempotency Reserve verifying before it reserves), in
// a real n8n 2.41.1 server. Genuine
// Stripe-signed deliveries go through; forged ones and stale replays are answered 401 and reserve
// nothing, so a forgery can never block the genuine event. Run with `npm run test:e2e`.
// Signatures are made here the way Stripe makes them (HMAC-SHA256 of "<t>.<raw body>" with the
// stack's secret, scripts/harness/http.mjs); the unit tests check that scheme against Stripe's library.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import {
	BUSINESS_STEP,
	RESERVE,
	RESERVE_OUTPUTS,
	runSeedSequence,
	startStack,
	withStackLogs,
} from '../../scripts/harness/index.mjs';

const RESPOND_401 = 'Respond 401';
const REFUSED_PATH = ['Webhook', RESERVE, RESPOND_401];

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Runs a check; on failure prints the tail of n8n's log, where the cause usually is. */
const withN8nLog = (fn) => withStackLogs(stack, fn);

/** Sends a delivery the template must refuse and checks everything a refusal means. */
async function assertRefused(event, headers, reason, { sign = true } = {}) {
	const key = `evt:${event.id}`;
	const businessBefore = (await stack.businessRows()).length;
	const keysBefore = (await stack.keyRows(key)).length;
	const refused = await stack.deliver(event, { headers, sign });
	assert.equal(refused.response.status, 401, refused.response.text);
	assert.deepEqual(refused.response.json, { status: 'invalid signature', reason });
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
		stack = await startStack({ label: 'e2e_sig' });
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
