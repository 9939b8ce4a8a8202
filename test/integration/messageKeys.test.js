// The RabbitMQ Message key source, through the engine: items shaped as n8n's RabbitMQ Trigger emits
// them (n8n-nodes-base RabbitMQ/GenericFunctions parseMessage: amqplib's message with `content` as
// text, parsed JSON, or moved to binary `data`), keys checked in the table.
const { describe, test, expect } = require('@jest/globals');
const { createHash } = require('node:crypto');
const { useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');

const db = useTestDatabase();

/** @param {string} text */
const sha256 = (text) => createHash('sha256').update(text).digest('hex');

/**
 * An item of the RabbitMQ Trigger for a message published with `body` and `properties`.
 * @param {string} body the bytes published, as text
 * @param {{ messageId?: unknown }} [properties]
 * @param {'text' | 'json' | 'binary'} [as] the trigger's options: none, JSON Parse Body, Content Is Binary
 */
function triggerItem(body, properties = {}, as = 'text') {
	const message = {
		fields: {
			consumerTag: 'amq.ctag-test',
			deliveryTag: 1,
			redelivered: false,
			exchange: '',
			routingKey: 'orders',
		},
		properties: { contentType: undefined, headers: {}, messageId: undefined, ...properties },
		content: as === 'json' ? JSON.parse(body) : as === 'text' ? body : undefined,
	};
	if (as !== 'binary') return { json: message };
	const bytes = Buffer.from(body);
	return {
		json: message,
		binary: {
			data: {
				data: bytes.toString('base64'),
				mimeType: 'text/plain',
				fileSize: String(bytes.length),
			},
		},
	};
}

const PRESET = { keySource: 'rabbitmqMessage', namespace: 'orders' };

/** @param {Record<string, unknown>} parameters @param {object[]} items */
async function keysFor(parameters, items) {
	const run = await runWorkflow(reserveWorkflow, items, {
		credentials: db.credential(),
		nodeOverrides: { 'Idempotency Reserve': { parameters } },
	});
	expect(run.error).toBeUndefined();
	const keys = [...run.output('Idempotency Reserve', 0), ...run.output('Idempotency Reserve', 1)]
		.sort((a, b) => a.pairedItem.item - b.pairedItem.item)
		.map((item) => item.json.idempotency.key);
	const { rows } = await db.query('SELECT key FROM processed_events WHERE key = ANY($1)', [keys]);
	expect(rows.map((row) => row.key).sort()).toEqual([...new Set(keys)].sort());
	return keys;
}

/** @param {Record<string, unknown>} parameters @param {object[]} items */
async function errorFor(parameters, items) {
	const run = await runWorkflow(reserveWorkflow, items, {
		credentials: db.credential(),
		nodeOverrides: { 'Idempotency Reserve': { parameters } },
	});
	expect(run.status).toBe('error');
	return run.error;
}

describe('RabbitMQ Message key source', () => {
	test('the message-id property is the id, in the queue namespace', async () => {
		expect(await keysFor(PRESET, [triggerItem('{"order":1}', { messageId: 'm-1' })])).toEqual([
			'orders:evt:m-1',
		]);
	});

	test('without a message-id (absent or empty) the key is the SHA-256 of the content', async () => {
		const text = 'plain text order 7';
		expect(
			await keysFor(PRESET, [triggerItem(text), triggerItem(text, { messageId: '' })]),
		).toEqual([`orders:sha256:${sha256(text)}`, `orders:sha256:${sha256(text)}`]);
	});

	test('JSON content keys the same as text, parsed, or binary, and in another key order', async () => {
		const canonical = '{"amount":5,"order":"o-9"}';
		const keys = await keysFor(PRESET, [
			triggerItem('{ "order": "o-9", "amount": 5 }'),
			triggerItem('{"order":"o-9","amount":5}', {}, 'json'),
			triggerItem('{"amount": 5, "order": "o-9"}', {}, 'binary'),
		]);
		expect(keys).toEqual(Array(3).fill(`orders:sha256:${sha256(canonical)}`));
	});

	test('different content, different keys; an integer beyond 2^53 as text is hashed exactly', async () => {
		const a = '{"id":98765432101234567891}';
		const b = '{"id":98765432101234567892}';
		expect(await keysFor(PRESET, [triggerItem(a), triggerItem(b)])).toEqual([
			`orders:sha256:${sha256(a)}`,
			`orders:sha256:${sha256(b)}`,
		]);
	});

	test('a webhook item or an "Only Content" item is an item error that says why', async () => {
		const error = await errorFor(PRESET, [
			triggerItem('x', { messageId: 'fine' }),
			{ json: { order: 1 } },
		]);
		expect(error.message).toMatch(/not a RabbitMQ message/);
		expect(error.description).toMatch(/Only Content/);
		expect(error.context.itemIndex).toBe(1);
	});

	test('a message-id that is not text is an item error', async () => {
		const error = await errorFor(PRESET, [triggerItem('x', { messageId: { id: 1 } })]);
		expect(error.message).toMatch(/message-id property is object/);
	});

	test('parsed content with a rounded integer and no message-id is refused, never guessed', async () => {
		const error = await errorFor(PRESET, [triggerItem('{"id":98765432101234567891}', {}, 'json')]);
		expect(error.message).toMatch(/beyond 2\^53/);
		expect(error.description).toMatch(/JSON Parse Body/);
	});

	test('binary content without the binary property is an item error', async () => {
		const item = triggerItem('x', {}, 'binary');
		delete item.binary;
		const error = await errorFor(PRESET, [item]);
		expect(error.message).toMatch(/no content to hash/);
	});
});
