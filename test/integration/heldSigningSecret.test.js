// The Webhook Signing Secret held between deliveries (heldSigningSecret.ts), through n8n-core's
// WorkflowExecute with one credential id edited between executions: a held copy only ever accepts,
// so a corrected secret applies to the next delivery; a forgery is refused after a fresh read; while
// a held copy accepts, n8n is not asked. No database is involved.
const { test, expect } = require('@jest/globals');
const { runWorkflow } = require('../support/engine');
const { PROVIDERS } = require('../support/providerVectors');
const { webhookItem } = require('../support/webhookItems');
const verifyWorkflow = require('../fixtures/verify.workflow.json');

const NODE = 'Verify Webhook Signature';
const VALID = 0;
const INVALID = 1;
const FIRST = 'whsec_held_first_0123456789abcdef';
const EDITED = 'whsec_held_edited_0123456789abcdef';
const NEXT = 'whsec_held_next_0123456789abcdef';

async function signedWith(secret, id) {
	const body = { id, type: 'charge.succeeded' };
	const raw = JSON.stringify(body);
	return webhookItem({ body, rawBody: raw, headers: await PROVIDERS.stripe.sign(raw, { secret }) });
}

/** The credential's data as n8n hands it over, counting how often a node reads its secret. */
function credential(secret) {
	const reads = { count: 0 };
	const data = new Proxy(
		{ secret },
		{
			get(target, property) {
				if (property === 'secret') reads.count++;
				return Reflect.get(target, property);
			},
		},
	);
	return { data, reads };
}

/** One delivery through Verify Webhook Signature, its credential id kept as the fixture writes it. */
async function deliver(item, data) {
	const run = await runWorkflow(verifyWorkflow, [item], {
		credentialsByType: { webhookSigningSecretApi: data },
		editedCredentials: true,
	});
	expect(run.status).toBe('success');
	if (run.output(NODE, VALID).length === 1) return 'valid';
	const [refused] = run.output(NODE, INVALID);
	return refused.json.signature.reason;
}

test('one credential id edited between deliveries: the new secret applies at once, forgeries stay refused, a held copy spares the read', async () => {
	const first = credential(FIRST);
	expect(await deliver(await signedWith(FIRST, 'evt_held_1'), first.data)).toBe('valid');
	expect(first.reads.count).toBeGreaterThan(0);

	// Edited: the held copy (FIRST) refuses the delivery signed with EDITED, so it is read afresh.
	const edited = credential(EDITED);
	expect(await deliver(await signedWith(EDITED, 'evt_held_2'), edited.data)).toBe('valid');
	expect(edited.reads.count).toBeGreaterThan(0);

	// The next delivery under the same secret is accepted from the held copy: n8n is not asked.
	const again = credential(EDITED);
	expect(await deliver(await signedWith(EDITED, 'evt_held_3'), again.data)).toBe('valid');
	expect(again.reads.count).toBe(0);

	// A forgery: refused by the held copy, then by a fresh read of the credential.
	const forgedRun = credential(EDITED);
	expect(
		await deliver(await signedWith('whsec_attacker_0123456789', 'evt_held_4'), forgedRun.data),
	).toBe('mismatch');
	expect(forgedRun.reads.count).toBeGreaterThan(0);

	// The secret replaced again: what the old one signed is refused once the fresh read has it.
	const next = credential(NEXT);
	expect(await deliver(await signedWith(NEXT, 'evt_held_5'), next.data)).toBe('valid');
	expect(await deliver(await signedWith(EDITED, 'evt_held_6'), credential(NEXT).data)).toBe(
		'mismatch',
	);
});

test('a held secret that does not decode is read afresh: the corrected credential verifies the next delivery', async () => {
	const kit = PROVIDERS.standardWebhooks;
	const body = { id: 'evt_held_decode', type: 'invoice.paid' };
	const raw = JSON.stringify(body);
	const item = webhookItem({
		body,
		rawBody: raw,
		headers: await kit.sign(raw, { secret: kit.secret }),
	});
	const run = (secret) =>
		runWorkflow(verifyWorkflow, [item], {
			credentialsByType: { webhookSigningSecretApi: { secret } },
			nodeOverrides: { [NODE]: { parameters: { provider: 'standardWebhooks' } } },
			editedCredentials: true,
		});
	const broken = await run('whsec_%%% not base64 %%%');
	expect(broken.status).not.toBe('success');
	expect(() => broken.output(NODE, VALID)).toThrow(/not a Standard Webhooks secret/);
	const corrected = await run(kit.secret);
	expect(corrected.status).toBe('success');
	expect(corrected.output(NODE, VALID)).toHaveLength(1);
});
