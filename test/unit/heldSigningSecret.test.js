// The Webhook Signing Secret held between deliveries (nodes/shared/signatureNode/heldSigningSecret.ts):
// asked of n8n once per credential id and KEEP_MS (10 s), again when asked `fresh`; a node without a
// credential id, or a run bound to an end user's identity, is never held. What a held copy refuses
// is checked afresh: test/integration/heldSigningSecret.test.js.
const { describe, test, expect } = require('@jest/globals');
const {
	signingSecretCredential,
} = require('../../dist/nodes/shared/signatureNode/heldSigningSecret');
const { ExpiringEntries } = require('../../dist/nodes/shared/run/expiringEntries');

/**
 * A node run as signingSecretCredential sees it, counting what it asks n8n.
 * @returns {any} the few IExecuteFunctions it calls
 */
function runOf(credentialId, asked, executionContext = undefined) {
	const node = {
		name: 'n',
		typeVersion: 1,
		credentials:
			credentialId === undefined
				? {}
				: { webhookSigningSecretApi: { id: credentialId, name: 'Signing secret' } },
	};
	return {
		getNode: () => node,
		getExecutionContext: () => executionContext,
		getCredentials: async (type) => {
			asked.push(type);
			return { secret: `whsec_${asked.length}` };
		},
	};
}

describe('signingSecretCredential', () => {
	test('asked once per credential id for 10 s, across executions; held: true after the first', async () => {
		const asked = [];
		const first = await signingSecretCredential(runOf('s1', asked), { now: 1000 });
		const inside = await signingSecretCredential(runOf('s1', asked), { now: 10_999 });
		const after = await signingSecretCredential(runOf('s1', asked), { now: 11_000 });
		expect(first.held).toBe(false);
		expect(inside).toEqual({ credential: first.credential, held: true });
		expect(after.held).toBe(false);
		expect(after.credential).not.toBe(first.credential);
		expect(asked).toEqual(['webhookSigningSecretApi', 'webhookSigningSecretApi']);
	});

	test('fresh: asked again, and what it read is held from then on', async () => {
		const asked = [];
		await signingSecretCredential(runOf('s2', asked), { now: 1000 });
		const fresh = await signingSecretCredential(runOf('s2', asked), { fresh: true, now: 2000 });
		const next = await signingSecretCredential(runOf('s2', asked), { now: 3000 });
		expect(fresh.held).toBe(false);
		expect(next).toEqual({ credential: fresh.credential, held: true });
		expect(asked).toHaveLength(2);
	});

	test('another credential id is another credential; no id is never held', async () => {
		const asked = [];
		const a = await signingSecretCredential(runOf('s3', asked), { now: 1000 });
		const b = await signingSecretCredential(runOf('s4', asked), { now: 1000 });
		const c = await signingSecretCredential(runOf(undefined, asked), { now: 1000 });
		const d = await signingSecretCredential(runOf(undefined, asked), { now: 1000 });
		expect(new Set([a, b, c, d].map(({ credential }) => credential.secret)).size).toBe(4);
		expect([a, b, c, d].map(({ held }) => held)).toEqual([false, false, false, false]);
		expect(asked).toHaveLength(4);
	});

	test('never held in a run that resolves credentials for an end user (n8n dynamic credentials)', async () => {
		const asked = [];
		// n8n keeps the identity encrypted in the execution context's `credentials`.
		const identity = { version: 1, establishedAt: 1, source: 'webhook', credentials: 'encrypted' };
		const plain = { version: 1, establishedAt: 1, source: 'webhook' };
		await signingSecretCredential(runOf('s5', asked), { now: 1000 });
		const bound = await signingSecretCredential(runOf('s5', asked, identity), { now: 2000 });
		const boundAgain = await signingSecretCredential(runOf('s5', asked, identity), { now: 2001 });
		const withoutIdentity = await signingSecretCredential(runOf('s5', asked, plain), { now: 2002 });
		expect([bound.held, boundAgain.held, withoutIdentity.held]).toEqual([false, false, true]);
		// An identity's secret is neither served from nor left in the hold.
		expect(withoutIdentity.credential.secret).toBe('whsec_1');
		expect(asked).toHaveLength(3);
	});
});

describe('ExpiringEntries', () => {
	test('a value until its time, then gone; set again moves it to the end; a past time holds nothing', () => {
		const entries = new ExpiringEntries(100);
		entries.set('a', 1, 2000, 1000);
		expect(entries.get('a', 1999)).toBe(1);
		expect(entries.get('a', 2000)).toBeUndefined();
		entries.set('b', 2, 3000, 1000);
		entries.set('b', 3, 500, 1000);
		expect(entries.get('b', 1000)).toBeUndefined();
		entries.set('c', 4, 3000, 1000);
		entries.delete('c');
		expect(entries.get('c', 1000)).toBeUndefined();
	});

	test('swept from the oldest once sweepAt are held, up to the first live one', () => {
		const entries = new ExpiringEntries(3);
		entries.set('old1', 1, 1500, 1000);
		entries.set('live', 2, 9000, 1000);
		entries.set('old2', 3, 1500, 1000);
		// Three held at 2000: old1 goes; the sweep stops at 'live', so old2 stays until read.
		entries.set('new', 4, 9000, 2000);
		expect(entries.get('live', 2000)).toBe(2);
		expect(entries.get('new', 2000)).toBe(4);
		expect(entries.get('old1', 1000)).toBeUndefined();
		expect(entries.get('old2', 1000)).toBe(3);
	});
});
