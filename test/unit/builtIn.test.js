// The planner's built-in-nodes workflow (planner/builtIn.ts, bundled to dist/planner/builtIn.cjs):
// only n8n-nodes-base nodes, the package's own statements with their values as query parameters,
// the settings applied, and the providers the Crypto node cannot check refused with the reason.
// Real n8n runs it in test/e2e/builtin.e2e.mjs; this checks the JSON for every setting.
const { describe, test, expect } = require('@jest/globals');
const path = require('node:path');

const builtIn = require(path.join(__dirname, '..', '..', 'dist', 'planner', 'builtIn.cjs'));
const sql = require('../../dist/nodes/shared/store/sql');
const { tableRef } = require('../../dist/nodes/shared/store/identifiers');

const { builtInWorkflow, BuiltInError, DEFAULT_SETTINGS } = builtIn;

/** @param {Record<string, unknown>} [changes] */
function settings(changes = {}) {
	return { ...DEFAULT_SETTINGS, keySource: 'stripe', ...changes };
}

/** @param {any} workflow @param {string} name */
function node(workflow, name) {
	const found = workflow.nodes.find((/** @type {any} */ n) => n.name === name);
	if (!found) throw new Error(`no node ${name}`);
	return found;
}

/** @param {any} workflow @param {string} from */
function targets(workflow, from) {
	return workflow.connections[from].main.map((/** @type {any[]} */ output) =>
		output.map((c) => c.node),
	);
}

const SUPPORTED = ['stripe', 'github', 'shopify', 'slack'];

describe.each(SUPPORTED)('%s', (provider) => {
	test.each(['lease', 'simple'])('%s mode: every node is n8n-nodes-base, no Code node', (mode) => {
		const workflow = builtInWorkflow(settings({ keySource: provider, mode }), { provider });
		for (const n of workflow.nodes) {
			expect(n.type.startsWith('n8n-nodes-base.')).toBe(true);
			expect(n.type).not.toBe('n8n-nodes-base.code');
		}
		// Every connection names a node of the workflow.
		const names = new Set(workflow.nodes.map((/** @type {any} */ n) => n.name));
		for (const [from, { main }] of Object.entries(workflow.connections)) {
			expect(names.has(from)).toBe(true);
			for (const output of main) for (const c of output) expect(names.has(c.node)).toBe(true);
		}
	});
});

test('the reservation, completion and release are the package statements, values as query parameters', () => {
	const ref = tableRef('billing', 'keys');
	const lease = builtInWorkflow(settings({ schema: 'billing', table: 'keys', leaseSeconds: 90 }), {
		provider: 'stripe',
	});
	expect(node(lease, 'Reserve Key').parameters.query).toBe(sql.reserveLeaseSql(ref));
	expect(node(lease, 'Complete Key').parameters.query).toBe(sql.completeSql(ref));
	expect(node(lease, 'Release Key').parameters.query).toBe(sql.releaseOwnedSql(ref));
	expect(node(lease, 'Reserve Key').parameters.options.queryReplacement).toMatch(
		/^=\{\{ \[.*\$json\.key.*, \$json\.ownerToken, 90\] \}\}$/,
	);
	// Nothing of the request is spliced into the SQL text.
	for (const name of ['Reserve Key', 'Complete Key', 'Release Key'])
		expect(node(lease, name).parameters.query).not.toMatch(/\{\{/);

	const simple = builtInWorkflow(settings({ mode: 'simple', schema: 'billing', table: 'keys' }), {
		provider: 'stripe',
	});
	expect(node(simple, 'Reserve Key').parameters.query).toBe(sql.reserveWithFirstSeenSql(ref));
	expect(node(simple, 'Release Key').parameters.query).toBe(sql.releaseSql(ref));
	expect(simple.nodes.map((/** @type {any} */ n) => n.name)).not.toContain('Complete Key');
	expect(simple.nodes.map((/** @type {any} */ n) => n.name)).not.toContain('Respond 409 in flight');
	expect(targets(simple, 'New, Duplicate or In Flight?')).toEqual([
		['Business Step (insert business_log)'],
		['Respond 200 duplicate'],
	]);
});

test('the statements are the planner page SQL for the same settings', () => {
	const s = settings({ table: 'events', leaseSeconds: 120 });
	const statements = builtIn.builtInStatements(s);
	const ref = tableRef('public', 'events');
	expect(statements.reserve).toBe(sql.reserveLeaseSql(ref));
	expect(statements.createTable).toBe(sql.createTableSql(ref, { lease: true, fingerprint: false }));
	const note = node(
		builtInWorkflow(s, { provider: 'stripe' }),
		'What this workflow cannot promise',
	);
	expect(note.parameters.content).toContain(statements.createTable);
	for (const line of builtIn.BUILT_IN_NOTES) expect(note.parameters.content).toContain(line);
});

test('the signature: Stripe over "t." + body text, GitHub and Shopify over the raw bytes, secret in a Crypto credential', () => {
	const stripe = node(builtInWorkflow(settings(), { provider: 'stripe' }), 'Signature HMAC');
	expect(stripe.parameters).toMatchObject({ action: 'hmac', binaryData: false, encoding: 'hex' });
	expect(stripe.parameters.value).toContain("+ '.' + $json.rawBody");
	expect(stripe.credentials).toEqual({ crypto: { name: 'Webhook Signing Secret (Crypto)' } });
	const github = node(
		builtInWorkflow(settings({ keySource: 'github' }), { provider: 'github' }),
		'Signature HMAC',
	);
	expect(github.parameters).toMatchObject({
		binaryData: true,
		binaryPropertyName: 'data',
		encoding: 'hex',
	});
	const shopify = node(
		builtInWorkflow(settings({ keySource: 'shopify' }), { provider: 'shopify' }),
		'Signature HMAC',
	);
	expect(shopify.parameters).toMatchObject({ binaryData: true, encoding: 'base64' });
	// A timestamped provider checks the tolerance; an untimestamped one does not.
	const conditions = (/** @type {string} */ provider) =>
		node(builtInWorkflow(settings({ keySource: provider }), { provider }), 'Signature Valid?')
			.parameters.conditions.conditions.length;
	expect([
		conditions('stripe'),
		conditions('slack'),
		conditions('github'),
		conditions('shopify'),
	]).toEqual([2, 2, 1, 1]);
});

test('the key: evt: + id else sha256:, the namespace first, header presets and Body Hash Only', () => {
	const keyOf = (/** @type {Record<string, unknown>} */ changes, provider = 'stripe') =>
		node(builtInWorkflow(settings(changes), { provider }), 'Key').parameters.assignments
			.assignments[0].value;
	expect(keyOf({})).toContain(`$json.body?.["id"]`);
	expect(keyOf({})).toContain(`'sha256:' + $json.bodySha256`);
	expect(keyOf({ namespace: 'orders' })).toContain('"orders:" + ');
	expect(keyOf({ keySource: 'github' }, 'github')).toContain('$json.headers["x-github-delivery"]');
	expect(keyOf({ keySource: 'shopify' }, 'shopify')).toContain(
		'$json.headers["x-shopify-event-id"] || $json.headers["x-shopify-webhook-id"]',
	);
	expect(keyOf({ keySource: 'bodyHash' })).toBe(`={{ "" + 'sha256:' + $json.bodySha256 }}`);
	expect(
		keyOf({ keySource: 'eventIdOrBodyHash', eventIdPath: '{{ $json.body.data.object.id }}' }),
	).toContain('($json.body.data.object.id)');
});

test('Standard Webhooks and Svix are refused: their secret is base64-decoded bytes', () => {
	for (const provider of ['standardWebhooks', 'svix']) {
		expect(() => builtInWorkflow(settings({ keySource: provider }), { provider })).toThrow(
			BuiltInError,
		);
		expect(() => builtInWorkflow(settings({ keySource: provider }), { provider })).toThrow(
			/whsec_ followed by base64.*UTF-8/,
		);
	}
	const listed = builtIn.BUILT_IN_SIGNATURES.map((/** @type {any} */ s) =>
		s.supported ? `${s.signature.provider}: yes` : `${s.provider}: no`,
	);
	expect(listed).toEqual([
		'stripe: yes',
		'github: yes',
		'shopify: yes',
		'standardWebhooks: no',
		'svix: no',
		'slack: yes',
	]);
});

test.each([
	[{ provider: 'nope' }, {}, /Unknown provider "nope"/],
	[{ provider: 'stripe' }, { keySource: 'idempotencyKeyHeader' }, /Idempotency-Key header/],
	[{ provider: 'stripe' }, { keySource: 'rabbitmqMessage' }, /RabbitMQ Trigger item/],
	[{ provider: 'stripe' }, { namespace: 'a:b' }, /contains ":"/],
	[{ provider: 'stripe' }, { namespace: '{{ $json.x }}' }, /fixed namespace/],
	[{ provider: 'stripe' }, { table: 'bad"name' }, /./],
	[{ provider: 'stripe' }, { mode: 'lease', leaseSeconds: 0 }, /positive number of seconds/],
	[
		{ provider: 'stripe' },
		{ keySource: 'eventIdOrBodyHash', eventIdPath: 'x-{{ $json.a }}-{{ $json.b }}' },
		/mixes text and expressions/,
	],
])('refused: %j %j', (options, changes, message) => {
	expect(() => builtInWorkflow(settings(changes), options)).toThrow(BuiltInError);
	expect(() => builtInWorkflow(settings(changes), options)).toThrow(message);
});
