// Every key source, preset and namespace, through the engine, with keys checked in the table.
const { describe, test, expect } = require('@jest/globals');
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

/** How many keys the table holds (0 before any execution made it). */
async function storedKeyCount() {
	try {
		return (await db.query('SELECT count(*)::int AS n FROM processed_events')).rows[0].n;
	} catch {
		return 0;
	}
}

/** Runs one Reserve and returns the run's error (the node must have failed, reserving nothing). */
async function errorFor(parameters, items) {
	const before = await storedKeyCount();
	const run = await runWorkflow(reserveWorkflow, items, {
		credentials: db.credential(),
		nodeOverrides: { 'Idempotency Reserve': { parameters } },
	});
	expect(run.status).toBe('error');
	expect(await storedKeyCount()).toBe(before);
	return run.error;
}

/** An item as n8n's Webhook node makes it from these exact bytes: JSON.parse'd body, raw bytes in binary. */
function delivered(rawBody, headers = {}) {
	return webhookItem({ body: JSON.parse(rawBody), rawBody, headers });
}

const raw = '{"type":"no.id.here"}';
const rawHash = `sha256:${sha256Hex(Buffer.from(raw))}`;

test.each([
	['default: body.id', {}, { body: { id: 'evt_1' } }, 'evt:evt_1'],
	['default: a numeric id becomes text', {}, { body: { id: 12345 } }, 'evt:12345'],
	['default: id 0 is an id', {}, { body: { id: 0 } }, 'evt:0'],
	[
		'default: an empty id falls back to the body hash',
		{},
		{ body: { id: '' }, rawBody: raw },
		rawHash,
	],
	[
		'default: a null id falls back to the body hash',
		{},
		{ body: { id: null }, rawBody: raw },
		rawHash,
	],
	['default: an emoji id is kept as it is', {}, { body: { id: 'évt_🎉' } }, 'evt:évt_🎉'],
	[
		'stripe: body.id',
		{ keySource: 'stripe' },
		{ body: { id: 'evt_3Nstripe' } },
		'evt:evt_3Nstripe',
	],
	[
		'stripe: no id, body hash',
		{ keySource: 'stripe' },
		{ body: JSON.parse(raw), rawBody: raw },
		rawHash,
	],
	[
		'github: X-GitHub-Delivery',
		{ keySource: 'github' },
		{
			body: { id: 'ignored' },
			headers: { 'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958' },
		},
		'github:72d3162e-cc78-11e3-81ab-4c9367dc0958',
	],
	[
		'github: no header, body hash',
		{ keySource: 'github' },
		{ body: { id: 'x' }, rawBody: raw },
		rawHash,
	],
	[
		'shopify: X-Shopify-Event-Id first',
		{ keySource: 'shopify' },
		{
			body: {},
			headers: {
				'x-shopify-event-id': '98f2ab30-9f2a-4c4e-8b1f-2d1f0a7c9e11',
				'x-shopify-webhook-id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
			},
		},
		'shopify:98f2ab30-9f2a-4c4e-8b1f-2d1f0a7c9e11',
	],
	[
		'shopify: else X-Shopify-Webhook-Id, in any case',
		{ keySource: 'shopify' },
		{ body: {}, headers: { 'X-Shopify-Webhook-Id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043' } },
		'shopify:b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
	],
	[
		'shopify: neither header, body hash',
		{ keySource: 'shopify' },
		{ body: JSON.parse(raw), rawBody: raw },
		rawHash,
	],
	[
		'svix: svix-id',
		{ keySource: 'svix' },
		{ body: {}, headers: { 'svix-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek' } },
		'svix:msg_p5jXN8AQM9LWM0D4loKWxJek',
	],
	[
		'standard webhooks does not read svix-id',
		{ keySource: 'standardWebhooks' },
		{ body: JSON.parse(raw), rawBody: raw, headers: { 'svix-id': 'msg_1' } },
		rawHash,
	],
	[
		'slack: body.event_id',
		{ keySource: 'slack' },
		{ body: { event_id: 'Ev08MFMKH6' } },
		'slack:Ev08MFMKH6',
	],
	[
		'slack: no event_id, body hash',
		{ keySource: 'slack' },
		{ body: JSON.parse(raw), rawBody: raw },
		rawHash,
	],
	[
		'github: a header repeated with one id counts once',
		{ keySource: 'github' },
		{ body: {}, headers: { 'x-github-delivery': 'd-1, d-1' } },
		'github:d-1',
	],
	[
		'github: surrounding spaces are not part of the id',
		{ keySource: 'github' },
		{ body: {}, headers: { 'x-github-delivery': ' d-2\t' } },
		'github:d-2',
	],
	[
		'github: an empty header falls back to the body hash',
		{ keySource: 'github' },
		{ body: JSON.parse(raw), rawBody: raw, headers: { 'x-github-delivery': ' ' } },
		rawHash,
	],
	[
		'standard webhooks: webhook-id',
		{ keySource: 'standardWebhooks' },
		{ body: {}, headers: { 'webhook-id': 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W' } },
		'standardWebhooks:msg_2KWPBgLlAfxdpx2AI54pPJ85f4W',
	],
	[
		'body hash only ignores the id',
		{ keySource: 'bodyHash' },
		{ body: { id: 'evt_x' }, rawBody: raw },
		rawHash,
	],
	[
		'custom: the expression, no prefix',
		{ keySource: 'custom', customKey: '={{ "order-" + $json.body.order.number }}' },
		{ body: { order: { number: 1001 } } },
		'order-1001',
	],
	[
		'custom: a number',
		{ keySource: 'custom', customKey: '={{ $json.body.seq }}' },
		{ body: { seq: 77 } },
		'77',
	],
	[
		'a preset keeps its key space under a namespace',
		{ keySource: 'svix', namespace: 'orders' },
		{ body: {}, headers: { 'svix-id': 'msg_ns' } },
		'orders:svix:msg_ns',
	],
	[
		'namespace is prepended',
		{ namespace: 'orders' },
		{ body: { id: 'evt_ns' } },
		'orders:evt:evt_ns',
	],
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
	const bodies = [
		{ id: 'evt_same' },
		{ id: 42 },
		{ id: '' },
		{ other: true },
		{ id: null },
		'text body',
		[1, 2],
	];
	const items = () => bodies.map((body) => webhookItem({ body, rawBody: JSON.stringify(body) }));
	const direct = await keysFor({ eventId: '={{ $json.body.id }}' }, items());
	await db.query('TRUNCATE processed_events');
	const evaluated = await keysFor({ eventId: '={{ $json.body?.id ?? "" }}' }, items());
	expect(direct).toEqual(evaluated);
	expect(direct[1]).toBe('evt:42');
	// A property of a string is n8n's to evaluate: `$json.body.length` of a text body is its length.
	await db.query('TRUNCATE processed_events');
	expect(
		await keysFor({ eventId: '={{ $json.body.length }}' }, [webhookItem({ body: 'four' })]),
	).toEqual(['evt:4']);
});

describe('large numbers: the exact digits from the raw body, or an item error', () => {
	test('the two deliveries of issue 15 get two keys with their exact digits', async () => {
		const items = [
			delivered('{"id": 98765432101234567891}'),
			delivered('{"id": 98765432101234567892}'),
		];
		expect(items[0].json.body.id).toBe(items[1].json.body.id); // what JSON.parse made of them
		expect(await keysFor({}, items)).toEqual([
			'evt:98765432101234567891',
			'evt:98765432101234567892',
		]);
	});

	test('1e21 and 1000000000000000000000 are two ids; fractions keep their text', async () => {
		const items = [
			delivered('{"id":1e21}'),
			delivered('{"id":1000000000000000000000}'),
			delivered('{"id":0.10}'),
			delivered('{"id":1E+21}'),
		];
		expect(await keysFor({}, items)).toEqual([
			'evt:1e21',
			'evt:1000000000000000000000',
			'evt:0.10',
			'evt:1E+21',
		]);
	});

	test('safe integers keep the keys they had', async () => {
		expect(await keysFor({}, [delivered('{"id":12345}'), delivered('{ "id" : -42 }')])).toEqual([
			'evt:12345',
			'evt:-42',
		]);
		const withoutRaw = webhookItem({ body: { id: 12345 }, withRawBody: false });
		expect(await keysFor({ namespace: 'n' }, [withoutRaw])).toEqual(['n:evt:12345']);
	});

	test('duplicate names, nesting, escapes and a BOM are read as n8n parsed them', async () => {
		const bodies = [
			'{"id": 1, "data": {"id": 2}, "id": 98765432101234567891}',
			'\ufeff{"\\u0069d": 98765432101234567893}',
			'{"data":{"object":{"id":98765432101234567894}}}',
		];
		const items = bodies.map((body) =>
			webhookItem({ body: JSON.parse(body.replace(/^\ufeff/, '')), rawBody: body }),
		);
		expect(await keysFor({}, items.slice(0, 2))).toEqual([
			'evt:98765432101234567891',
			'evt:98765432101234567893',
		]);
		expect(await keysFor({ eventId: '={{ $json.body.data.object.id }}' }, items.slice(2))).toEqual([
			'evt:98765432101234567894',
		]);
	});

	test('presets and Custom read the exact digits of their own field', async () => {
		expect(
			await keysFor({ keySource: 'stripe' }, [delivered('{"id":98765432101234567895}')]),
		).toEqual(['evt:98765432101234567895']);
		expect(
			await keysFor({ keySource: 'slack' }, [delivered('{"event_id":98765432101234567896}')]),
		).toEqual(['slack:98765432101234567896']);
		const custom = {
			keySource: 'custom',
			customKey: '={{ $json.body.order.n }}',
			namespace: 'orders',
		};
		expect(await keysFor(custom, [delivered('{"order":{"n":98765432101234567897}}')])).toEqual([
			'orders:98765432101234567897',
		]);
	});

	test('without the raw body: an item error with the index and the hint', async () => {
		const items = [
			webhookItem({ body: { id: 'fine' } }),
			webhookItem({ body: JSON.parse('{"id":98765432101234567891}'), withRawBody: false }),
		];
		const error = await errorFor({}, items);
		expect(error.name).toBe('NodeOperationError');
		expect(error.context.itemIndex).toBe(1);
		expect(error.message).toMatch(/98765432101234570000 .*no raw body/);
		expect(error.description).toMatch(/Raw Body/);
		const { rows } = await db.query(`SELECT key FROM processed_events WHERE key LIKE 'evt:fine%'`);
		expect(rows).toEqual([]);
	});

	test('an expression that is not a plain $json.body path cannot be looked up: an item error', async () => {
		const error = await errorFor({ keySource: 'custom', customKey: '={{ $json.body.n + 0 }}' }, [
			delivered('{"n":98765432101234567891}'),
		]);
		expect(error.message).toMatch(/plain \{\{ \$json\.body/);
		expect(error.description).toMatch(/plain path/);
	});

	test('a body changed after the Webhook node (raw body disagrees): an item error', async () => {
		const item = webhookItem({ body: { id: 2 ** 60 }, rawBody: '{"id":"text"}' });
		expect((await errorFor({}, [item])).message).toMatch(/no number at id/);
	});
});

describe('headers and namespaces that could join two things into one key', () => {
	test('a preset header with two different ids is an item error, not "evt:a, b"', async () => {
		const item = webhookItem({ body: {}, headers: { 'x-github-delivery': 'd-1, d-2' } });
		const error = await errorFor({ keySource: 'github' }, [item]);
		expect(error.message).toMatch(/X-GitHub-Delivery header has 2 different values/);
		expect(error.context.itemIndex).toBe(0);
	});

	test.each([
		['a:b', /contains ":"/],
		['evt', /reserved/],
		['sha256', /reserved/],
		// A verified delivery's digest and every provider preset's event ids start with these.
		['signed', /reserved/],
		['idk', /reserved/],
		['svix', /reserved/],
		['standardWebhooks', /reserved/],
	])('namespace %j is refused with a clear error', async (namespace, message) => {
		const error = await errorFor({ namespace }, [webhookItem({ body: { id: 'x' } })]);
		expect(error.message).toMatch(message);
		expect(error.description).toBeTruthy();
	});
});
