// Every key source, preset and namespace, through the engine, with keys checked in the table.
const { useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { sha256Hex, webhookItem } = require('../support/webhookItems');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');

const db = useTestDatabase();

async function keysFor(parameters, items) {
	const run = await runWorkflow(reserveWorkflow, items, {
		credentials: db.credential(),
		nodeOverrides: { 'Idempotency Reserve': { parameters } },
	});
	expect(run.error).toBeUndefined();
	return [...run.output('Idempotency Reserve', 0), ...run.output('Idempotency Reserve', 1)]
		.sort((a, b) => a.pairedItem.item - b.pairedItem.item)
		.map((item) => item.json.idempotency.key);
}

const raw = '{"type":"no.id.here"}';
const rawHash = `sha256:${sha256Hex(Buffer.from(raw))}`;

test.each([
	['default: body.id', {}, { body: { id: 'evt_1' } }, 'evt:evt_1'],
	['default: a numeric id becomes text', {}, { body: { id: 12345 } }, 'evt:12345'],
	['default: id 0 is an id', {}, { body: { id: 0 } }, 'evt:0'],
	['default: an empty id falls back to the body hash', {}, { body: { id: '' }, rawBody: raw }, rawHash],
	['default: a null id falls back to the body hash', {}, { body: { id: null }, rawBody: raw }, rawHash],
	['default: an emoji id is kept as it is', {}, { body: { id: 'évt_🎉' } }, 'evt:évt_🎉'],
	['stripe: body.id', { keySource: 'stripe' }, { body: { id: 'evt_3Nstripe' } }, 'evt:evt_3Nstripe'],
	['stripe: no id, body hash', { keySource: 'stripe' }, { body: JSON.parse(raw), rawBody: raw }, rawHash],
	[
		'github: X-GitHub-Delivery',
		{ keySource: 'github' },
		{ body: { id: 'ignored' }, headers: { 'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958' } },
		'evt:72d3162e-cc78-11e3-81ab-4c9367dc0958',
	],
	['github: no header, body hash', { keySource: 'github' }, { body: { id: 'x' }, rawBody: raw }, rawHash],
	[
		'shopify: X-Shopify-Webhook-Id in any case',
		{ keySource: 'shopify' },
		{ body: {}, headers: { 'X-Shopify-Webhook-Id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043' } },
		'evt:b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
	],
	[
		'standard webhooks: webhook-id',
		{ keySource: 'standardWebhooks' },
		{ body: {}, headers: { 'webhook-id': 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W' } },
		'evt:msg_2KWPBgLlAfxdpx2AI54pPJ85f4W',
	],
	['body hash only ignores the id', { keySource: 'bodyHash' }, { body: { id: 'evt_x' }, rawBody: raw }, rawHash],
	[
		'custom: the expression, no prefix',
		{ keySource: 'custom', customKey: '={{ "order-" + $json.body.order.number }}' },
		{ body: { order: { number: 1001 } } },
		'order-1001',
	],
	['custom: a number', { keySource: 'custom', customKey: '={{ $json.body.seq }}' }, { body: { seq: 77 } }, '77'],
	['namespace is prepended', { namespace: 'orders' }, { body: { id: 'evt_ns' } }, 'orders:evt:evt_ns'],
	[
		'namespace from an expression, with the body hash',
		{ namespace: '={{ $json.headers["x-tenant"] }}' },
		{ body: JSON.parse(raw), rawBody: raw, headers: { 'x-tenant': 'acme' } },
		`acme:${rawHash}`,
	],
])('%s', async (_label, parameters, itemSpec, expectedKey) => {
	expect(await keysFor(parameters, [webhookItem(itemSpec)])).toEqual([expectedKey]);
	const { rows } = await db.query('SELECT 1 FROM processed_events WHERE key = $1', [expectedKey]);
	expect(rows).toHaveLength(1);
});

test('without the raw body binary, a JSON body is hashed as its JSON serialisation', async () => {
	const body = { type: 'no.raw', nested: { a: [1, 2] } };
	const [key] = await keysFor({}, [webhookItem({ body, withRawBody: false })]);
	expect(key).toBe(`sha256:${sha256Hex(Buffer.from(JSON.stringify(body)))}`);
});

test('without the raw body binary, a text body is hashed as the text itself', async () => {
	const body = 'plain text delivery\n';
	const [key] = await keysFor({}, [webhookItem({ body, withRawBody: false })]);
	expect(key).toBe(`sha256:${sha256Hex(Buffer.from(body))}`);
});

test('the raw body property name is configurable', async () => {
	const item = webhookItem({ body: {}, rawBody: raw });
	item.binary = { payload: item.binary.data };
	const [key] = await keysFor({ rawBodyProperty: 'payload' }, [item]);
	expect(key).toBe(rawHash);
});

test('a plain $json path (read directly) gives the same keys as n8n evaluating an equivalent expression', async () => {
	const bodies = [{ id: 'evt_same' }, { id: 42 }, { id: '' }, { other: true }, { id: null }, 'text body', [1, 2]];
	const items = () => bodies.map((body) => webhookItem({ body, rawBody: JSON.stringify(body) }));
	const direct = await keysFor({ eventId: '={{ $json.body.id }}' }, items());
	await db.query('TRUNCATE processed_events');
	const evaluated = await keysFor({ eventId: '={{ $json.body?.id ?? "" }}' }, items());
	expect(direct).toEqual(evaluated);
	expect(direct[1]).toBe('evt:42');
	// A property of a string is n8n's to evaluate: `$json.body.length` of a text body is its length.
	await db.query('TRUNCATE processed_events');
	expect(await keysFor({ eventId: '={{ $json.body.length }}' }, [webhookItem({ body: 'four' })])).toEqual(['evt:4']);
});
