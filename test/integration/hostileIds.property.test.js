// Hostile event ids through Idempotency Reserve as the webhook template has it (On Error: continue
// using error output), in n8n's engine against PostgreSQL, next to honest deliveries in the same
// execution. Whatever a sender puts in `id` (an object, an array, NUL, a lone surrogate, more than
// 1,000 bytes, deep nesting, a megabyte), its item lands on the error output with the client-error
// kind the template answers 400, never on new or duplicate; the honest items beside it are reserved
// (new) or recognised (duplicate) as if it were not there. Text that merely looks like an expression
// (`}}`, `{{ $json }}`) is an honest id, stored as it is.
// Cases: 60 mixed batches of 2–8 items (each up to 4 hostile), then 3 batches with a 1–2 MB id;
// about 3 s on this machine.
const { test, expect } = require('@jest/globals');
const fc = require('fast-check');
const { CLIENT_ERROR_DOCS } = require('../../dist/nodes/shared/keys/clientErrors');
const { useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { webhookItem } = require('../support/webhookItems');

const template = require('../../workflows/idempotent-webhook.json');

const db = useTestDatabase();

const reserveNode = template.nodes.find(
	(node) => node.type === 'n8n-nodes-idempotency.idempotencyReserve',
);
// The template's Reserve, signatures off so each generated body needs no signing, continuing on its
// error output (a batch of items has no single webhook answer): new, duplicate, in flight, then the
// error output.
const workflow = {
	name: 'Reserve as in the webhook template',
	nodes: [
		{
			...reserveNode,
			onError: 'continueErrorOutput',
			parameters: { ...reserveNode.parameters, signature: 'none' },
		},
	],
	connections: {},
	settings: { executionOrder: 'v1' },
};
const [NEW, DUPLICATE, IN_FLIGHT, ERROR] = [0, 1, 2, 3];

function nested(depth, leaf) {
	let value = leaf;
	for (let level = 0; level < depth; level++) value = level % 2 ? [value] : { a: value };
	return value;
}

/** Ids that can never be a key: each is an `invalid-key` client error. */
const hostileId = fc.oneof(
	fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 4 }),
	fc.array(fc.jsonValue(), { maxLength: 4 }),
	fc.boolean(),
	fc.tuple(fc.string(), fc.string()).map(([before, after]) => `${before}\u0000${after}`),
	fc
		.tuple(fc.string(), fc.integer({ min: 0xd800, max: 0xdfff }), fc.string())
		.map(([before, half, after]) => `${before}${String.fromCharCode(half)}${after}`),
	fc.string({ unit: 'grapheme', minLength: 1001, maxLength: 1600 }),
	fc.constantFrom('é', '€', '😀').map((char) => char.repeat(1001 / char.length)),
	fc.integer({ min: 20, max: 400 }).map((depth) => nested(depth, 'evt')),
);

/** Ids that are keys, some of them looking like n8n expressions. */
const honestText = fc.oneof(
	fc.string({ unit: 'grapheme', minLength: 1, maxLength: 24 }),
	fc.constantFrom('}}', '{{ $json }}', '{{ 1 + 1 }}', "'); DROP TABLE processed_events; --"),
);

let batch = 0;

async function reservedKeys(keys) {
	const { rows } = await db.query('SELECT key FROM processed_events WHERE key = ANY($1)', [keys]);
	return new Set(rows.map((row) => row.key));
}

/** Runs one execution of `ids` (hostile or honest, in the given order) and checks every route. */
async function checkBatch(entries, repeatPrevious) {
	batch++;
	const items = [];
	const honestAt = [];
	const hostileAt = [];
	for (const entry of entries) {
		if (entry.hostile) hostileAt.push(items.length);
		else honestAt.push(items.length);
		// Unique per batch and position, so a fresh honest id is new unless repeated on purpose.
		const id = entry.hostile ? entry.id : `b${batch}_${items.length}_${entry.id}`;
		items.push(webhookItem({ body: { id, type: 'x' } }));
	}
	const repeatAt = repeatPrevious === undefined ? undefined : items.length;
	if (repeatPrevious !== undefined)
		items.push(webhookItem({ body: { id: repeatPrevious, type: 'x' } }));

	const result = await runWorkflow(workflow, items, { credentials: db.credential() });
	expect(result.status).toBe('success');
	const at = (output) => result.output(reserveNode.name, output);
	const indexes = (output) => at(output).map((item) => item.pairedItem.item);

	// Every hostile item, and only those, on the error output, each a 400 invalid-key.
	expect(indexes(ERROR)).toEqual(hostileAt);
	for (const item of at(ERROR)) {
		expect(item.json.details).toEqual({
			kind: 'invalid-key',
			status: 400,
			title: 'The event id cannot be an idempotency key',
			type: `${CLIENT_ERROR_DOCS}#invalid-key`,
		});
		expect(typeof item.json.error).toBe('string');
		expect(item.json.idempotency).toBeUndefined();
	}
	// The honest ones reserved beside them. The repeat of an id reserved by an earlier execution
	// (lease mode, not completed) is in flight: known, never new.
	expect(indexes(NEW)).toEqual(honestAt);
	expect(indexes(IN_FLIGHT)).toEqual(repeatAt === undefined ? [] : [repeatAt]);
	expect(indexes(DUPLICATE)).toEqual([]);
	const newKeys = at(NEW).map((item) => item.json.idempotency.key);
	for (const [position, key] of newKeys.entries())
		expect(key).toBe(`evt:${items[honestAt[position]].json.body.id}`);
	expect([...(await reservedKeys(newKeys))].sort()).toEqual([...newKeys].sort());
}

/** An id an earlier execution reserved, for later batches to repeat. */
const EARLIER = 'reserved_before_the_property';

test('hostile ids go to the error output as invalid-key (400), honest ones beside them are reserved', async () => {
	const entry = fc.oneof(
		hostileId.map((id) => ({ hostile: true, id })),
		honestText.map((id) => ({ hostile: false, id })),
	);
	const batches = fc
		.tuple(fc.array(entry, { minLength: 2, maxLength: 8 }), fc.boolean())
		.filter(([entries]) => entries.filter((e) => e.hostile).length <= 4);
	const before = await runWorkflow(workflow, [webhookItem({ body: { id: EARLIER, type: 'x' } })], {
		credentials: db.credential(),
	});
	expect(before.output(reserveNode.name, NEW)).toHaveLength(1);
	await fc.assert(
		fc.asyncProperty(batches, async ([entries, repeat]) => {
			await checkBatch(entries, repeat ? EARLIER : undefined);
		}),
		{ numRuns: 60 },
	);
}, 60_000);

test('a megabyte-sized id is refused like any other too-long id, the honest item beside it reserved', async () => {
	const huge = fc
		.tuple(fc.integer({ min: 1_000_000, max: 2_000_000 }), fc.constantFrom('x', 'é', '😀'))
		.map(([bytes, char]) => char.repeat(Math.ceil(bytes / Buffer.byteLength(char))));
	await fc.assert(
		fc.asyncProperty(huge, async (id) => {
			await checkBatch([
				{ hostile: false, id: 'beside_huge' },
				{ hostile: true, id },
			]);
		}),
		{ numRuns: 3 },
	);
}, 60_000);
