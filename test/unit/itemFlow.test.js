// The steps every keyed node takes in its own code (nodes/shared/run/itemFlow.ts): items with their
// targets, failed items set aside; then each item routed to an output. And the one raw-body reader
// (nodes/shared/delivery/rawBody.ts) Reserve and the signature check share.
const { describe, test, expect } = require('@jest/globals');
const {
	answeredFor,
	readItemTargets,
	routeItems,
} = require('../../dist/nodes/shared/run/itemFlow');
const { KeyError } = require('../../dist/nodes/shared/keys/KeyError');
const {
	readRawBody,
	readRequestBytes,
	sha256Hex,
} = require('../../dist/nodes/shared/delivery/rawBody');

const node = {
	id: 'n1',
	name: 'Node',
	type: 'test',
	typeVersion: 1,
	position: [0, 0],
	parameters: {},
};

/**
 * As much of n8n's IExecuteFunctions as the item steps use.
 * @param {import('n8n-workflow').INodeExecutionData[]} items
 * @param {{ continueOnFail?: boolean, getBinaryDataBuffer?: (itemIndex: number, property: string) => Promise<Buffer> }} [options]
 */
function contextOf(items, { continueOnFail = false, getBinaryDataBuffer = undefined } = {}) {
	return /** @type {import('n8n-workflow').IExecuteFunctions} */ (
		/** @type {unknown} */ ({
			getInputData: () => items,
			getNode: () => node,
			continueOnFail: () => continueOnFail,
			helpers: { getBinaryDataBuffer },
		})
	);
}

/** Bytes the reader gave synchronously. @param {unknown} bytes */
const textOf = (bytes) => Buffer.from(/** @type {Uint8Array} */ (bytes)).toString();

const items = [{ json: { n: 0 } }, { json: { n: 1 } }, { json: { n: 2 } }];
const keyOf = (item) => {
	if (item.json.n === 1) throw new KeyError('bad key', 'fix it');
	return `k${item.json.n}`;
};

describe('readItemTargets', () => {
	test('sets a failed item aside with its own error when continuing on error', async () => {
		const targets = await readItemTargets(contextOf(items, { continueOnFail: true }), keyOf);
		expect(targets.byItem).toEqual(['k0', undefined, 'k2']);
		expect(targets.present).toEqual(['k0', 'k2']);
		expect([...targets.failed.keys()]).toEqual([1]);
		expect(targets.failed.get(1).message).toBe('bad key');
		expect(targets.failed.get(1).description).toBe('fix it');
	});

	test('throws the first bad item otherwise', async () => {
		await expect(readItemTargets(contextOf(items), keyOf)).rejects.toThrow('bad key');
	});

	test('reads only the items in `only`, and awaits asynchronous targets', async () => {
		const read = [];
		const targets = await readItemTargets(
			contextOf(items),
			(item, itemIndex) => {
				read.push(itemIndex);
				return Promise.resolve(`k${item.json.n}`);
			},
			new Set([0, 2]),
		);
		expect(read).toEqual([0, 2]);
		expect(targets.byItem).toEqual(['k0', undefined, 'k2']);
		expect(targets.present).toEqual(['k0', 'k2']);
	});
});

describe('routeItems', () => {
	const binary = { data: { data: 'AA==', mimeType: 'application/octet-stream' } };
	const withBinary = [{ json: { n: 0 }, binary }, { json: { n: 1 } }, { json: { n: 2 } }];

	test('passes json and binary on with pairedItem, error items on output 0, in item order', async () => {
		const context = contextOf(withBinary, { continueOnFail: true });
		const targets = await readItemTargets(context, keyOf);
		const order = [];
		const outputs = routeItems(context, targets, 2, (key, itemIndex) => {
			order.push(itemIndex);
			return { output: itemIndex === 0 ? 0 : 1, idempotency: { key } };
		});
		expect(order).toEqual([0, 2]);
		expect(outputs).toEqual([
			[
				{ json: { n: 0, idempotency: { key: 'k0' } }, pairedItem: { item: 0 }, binary },
				{ json: { error: 'bad key', message: 'fix it' }, pairedItem: { item: 1 } },
			],
			[{ json: { n: 2, idempotency: { key: 'k2' } }, pairedItem: { item: 2 } }],
		]);
		expect('binary' in outputs[1][0]).toBe(false);
	});

	test('an item may be replaced by items of its own', async () => {
		const context = contextOf(items.slice(0, 1));
		const targets = await readItemTargets(context, keyOf);
		const rows = [{ json: { row: 1 } }, { json: { row: 2 } }];
		expect(routeItems(context, targets, 1, () => ({ output: 0, items: rows }))).toEqual([rows]);
	});

	test('a route returning an Error fails just that item when continuing on error', async () => {
		const context = contextOf([items[0], items[2]], { continueOnFail: true });
		const targets = await readItemTargets(context, keyOf);
		const outputs = routeItems(context, targets, 1, (key) =>
			key === 'k0' ? new KeyError('lost', 'lease') : { output: 0, idempotency: { key } },
		);
		expect(outputs).toEqual([
			[
				{ json: { error: 'lost', message: 'lease' }, pairedItem: { item: 0 } },
				{ json: { n: 2, idempotency: { key: 'k2' } }, pairedItem: { item: 1 } },
			],
		]);
	});

	test('and throws it, with the item index, otherwise', async () => {
		const context = contextOf([items[0], items[2]]);
		const targets = await readItemTargets(context, keyOf);
		let thrown;
		try {
			routeItems(context, targets, 1, (key) =>
				key === 'k2' ? new KeyError('lost', 'lease') : { output: 0, idempotency: { key } },
			);
		} catch (error) {
			thrown = error;
		}
		expect(thrown.message).toBe('lost');
		expect(thrown.description).toBe('lease');
		expect(thrown.context.itemIndex).toBe(1);
	});

	test('leaves out the items outside `only`', async () => {
		const context = contextOf(items, { continueOnFail: true });
		const targets = await readItemTargets(context, keyOf, new Set([2]));
		const outputs = routeItems(context, targets, 1, (key) => ({ output: 0, idempotency: { key } }));
		expect(outputs).toEqual([
			[{ json: { n: 2, idempotency: { key: 'k2' } }, pairedItem: { item: 2 } }],
		]);
	});
});

test("answeredFor keeps a failed step's error items to the items answered for", () => {
	const error = (item) => ({ json: { error: 'down' }, pairedItem: { item } });
	const outputs = [[error(0), error(1), error(2)], []];
	expect(answeredFor(outputs, new Set([0, 2]))).toEqual([[error(0), error(2)], []]);
	expect(answeredFor(outputs, undefined)).toBe(outputs);
});

describe('the raw body reader', () => {
	const bytes = Buffer.from('{"id":1}');
	const inMemory = {
		json: {},
		binary: { data: { data: bytes.toString('base64'), mimeType: 'x' } },
	};
	const stored = {
		json: {},
		binary: { data: { id: 'filesystem-v2:abc', data: '', mimeType: 'x' } },
	};

	test('decodes a binary kept in memory on the spot, without the helper', () => {
		const raw = readRawBody(contextOf([inMemory]), inMemory, 0, 'data');
		expect(raw).not.toBeInstanceOf(Promise);
		expect(textOf(raw)).toBe('{"id":1}');
	});

	test("reads a binary stored elsewhere through n8n's helper", async () => {
		/** @type {Array<[number, string]>} */
		const asked = [];
		const context = contextOf([stored], {
			getBinaryDataBuffer: async (itemIndex, property) => {
				asked.push([itemIndex, property]);
				return bytes;
			},
		});
		const raw = readRawBody(context, stored, 0, 'data');
		expect(raw).toBeInstanceOf(Promise);
		expect(await raw).toBe(bytes);
		expect(asked).toEqual([[0, 'data']]);
	});

	test('is undefined without the binary; the request bytes then fall back to the body', () => {
		const textBody = { json: { body: 'plain' } };
		const jsonBody = { json: { body: { id: 1 } } };
		expect(readRawBody(contextOf([textBody]), textBody, 0, 'data')).toBeUndefined();
		expect(textOf(readRequestBytes(contextOf([textBody]), textBody, 0, 'data'))).toBe('plain');
		expect(textOf(readRequestBytes(contextOf([jsonBody]), jsonBody, 0, 'data'))).toBe('{"id":1}');
		expect(readRequestBytes(contextOf([{ json: {} }]), { json: {} }, 0, 'data')).toBeUndefined();
	});

	test('sha256Hex hashes bytes and text alike', () => {
		expect(sha256Hex('abc')).toBe(sha256Hex(Buffer.from('abc')));
		expect(sha256Hex('abc')).toBe(
			'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
		);
	});
});
