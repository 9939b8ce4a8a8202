// The key store credential read once per execution (nodes/shared/run/executionCredentials.ts): the
// same execution and credential id reuse it; another execution, another credential id, or the same
// after KEEP_MS ask n8n again; a run without an execution or credential id is never held.
const { describe, test, expect } = require('@jest/globals');
const { keyStoreCredential } = require('../../dist/nodes/shared/run/executionCredentials');

/**
 * A node run as keyStoreCredential sees it, counting what it asks n8n.
 * @returns {any} the few IExecuteFunctions it calls
 */
function runOf(executionId, credentialId, asked) {
	const node = {
		name: 'n',
		typeVersion: 1,
		credentials:
			credentialId === undefined ? {} : { idempotencyPostgresApi: { id: credentialId, name: 'c' } },
	};
	return {
		getExecutionId: () => executionId,
		getNode: () => node,
		getCredentials: async (type) => {
			asked.push(type);
			return { host: `db-${asked.length}`, password: 'p' };
		},
	};
}

describe('keyStoreCredential', () => {
	test('one execution, one credential id: asked once, the same credential after', async () => {
		const asked = [];
		const first = await keyStoreCredential(runOf('e1', 'c1', asked), 1000);
		const again = await keyStoreCredential(runOf('e1', 'c1', asked), 2000);
		expect(again).toBe(first);
		expect(asked).toEqual(['idempotencyPostgresApi']);
	});

	test('another execution or another credential id: asked again', async () => {
		const asked = [];
		const a = await keyStoreCredential(runOf('e2', 'c1', asked), 1000);
		const b = await keyStoreCredential(runOf('e3', 'c1', asked), 1000);
		const c = await keyStoreCredential(runOf('e2', 'c2', asked), 1000);
		expect(new Set([a.host, b.host, c.host]).size).toBe(3);
		expect(asked).toHaveLength(3);
	});

	test('held 30 s at most: the same execution asks again after that', async () => {
		const asked = [];
		const first = await keyStoreCredential(runOf('e4', 'c1', asked), 1000);
		const inside = await keyStoreCredential(runOf('e4', 'c1', asked), 30_999);
		const after = await keyStoreCredential(runOf('e4', 'c1', asked), 31_000);
		expect(inside).toBe(first);
		expect(after).not.toBe(first);
		expect(asked).toHaveLength(2);
	});

	test('no execution id or no credential id: never held', async () => {
		const asked = [];
		for (const [executionId, credentialId] of [
			[undefined, 'c1'],
			['', 'c1'],
			['e5', undefined],
		]) {
			await keyStoreCredential(runOf(executionId, credentialId, asked), 1000);
			await keyStoreCredential(runOf(executionId, credentialId, asked), 1000);
		}
		expect(asked).toHaveLength(6);
	});
});
