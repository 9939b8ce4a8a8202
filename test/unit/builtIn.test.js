// The planner's built-in-nodes workflow (planner/builtIn/builtIn.ts, bundled to dist/planner/builtIn.cjs):
// only n8n-nodes-base nodes, the package's own statements with their values as query parameters,
// the settings applied, and the providers the Crypto node cannot check refused with the reason.
// Real n8n runs it in test/e2e/builtin.e2e.mjs; this checks the JSON for every setting.
const { describe, test, expect } = require('@jest/globals');

const { builtIn, settings, node } = require('../support/builtInWorkflow');
const sql = require('../../dist/nodes/shared/store/sql');
const { tableRef } = require('../../dist/nodes/shared/store/identifiers');

const { builtInWorkflow, BuiltInError } = builtIn;

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
	expect(stripe.parameters.value).toContain('+ "." + $json.rawBody');
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
	// With the replay guard off (below), the header presets read their headers.
	const unguarded = (/** @type {string} */ provider) =>
		node(
			builtInWorkflow(settings({ keySource: provider }), { provider, replayGuard: 'off' }),
			'Key',
		).parameters.assignments.assignments[0].value;
	expect(unguarded('github')).toContain('$json.headers["x-github-delivery"]');
	// A provider's preset keys its ids under its own value, as the package does; Stripe keeps evt:.
	expect(unguarded('github')).toContain(`"github:" + String(id)`);
	expect(keyOf({})).toContain(`"evt:" + String(id)`);
	expect(keyOf({ keySource: 'slack' }, 'slack')).toContain(`"slack:" + String(id)`);
	expect(unguarded('shopify')).toContain(
		'$json.headers["x-shopify-event-id"] || $json.headers["x-shopify-webhook-id"]',
	);
	expect(keyOf({ keySource: 'bodyHash' })).toBe(`={{ "" + 'sha256:' + $json.bodySha256 }}`);
	expect(
		keyOf({ keySource: 'eventIdOrBodyHash', eventIdPath: '{{ $json.body.data.object.id }}' }),
	).toContain('($json.body.data.object.id\n)');
});

const { PROVIDERS } = require('../../dist/nodes/shared/webhook/providers');
const { SIGNATURE_SCHEMES } = require('../../dist/nodes/shared/webhook/signatureSchemes');
const builtInSignatureSupported = (/** @type {string} */ value) =>
	builtIn.BUILT_IN_SIGNATURES.some(
		(/** @type {any} */ s) => s.supported && s.signature.provider === value,
	);

test('Standard Webhooks and Svix are refused: their secret is base64-decoded bytes', () => {
	for (const provider of ['standardWebhooks', 'svix']) {
		expect(() => builtInWorkflow(settings({ keySource: provider }), { provider })).toThrow(
			BuiltInError,
		);
		expect(() => builtInWorkflow(settings({ keySource: provider }), { provider })).toThrow(
			/bytes given as base64 \(whsec_… or plain base64\).*UTF-8/,
		);
	}
	// The rule, read from each provider's description: an HMAC keyed by the secret's text, over content
	// n8n expressions can rebuild (not sorted form parameters), is expressible; nothing else is.
	const expressible = ({ signing }) =>
		!('unverifiable' in signing) &&
		['sha1', 'sha256', 'sha512'].includes(signing.algorithm) &&
		signing.secret === 'text' &&
		!signing.signs.includes('{form}');
	expect(
		builtIn.BUILT_IN_SIGNATURES.map((/** @type {any} */ s) =>
			s.supported ? `${s.signature.provider}: yes` : `${s.provider}: no`,
		),
	).toEqual(PROVIDERS.map((p) => `${p.value}: ${expressible(p) ? 'yes' : 'no'}`));
	for (const refused of builtIn.BUILT_IN_SIGNATURES.filter((/** @type {any} */ s) => !s.supported))
		expect(refused.reason).toMatch(/^.+ cannot be checked with built-in nodes: .{40,}/);
});

test.each([
	[{ provider: 'nope' }, {}, /Unknown provider "nope"/],
	[{ provider: 'stripe' }, { keySource: 'idempotencyKeyHeader' }, /Idempotency-Key header/],
	[{ provider: 'stripe' }, { keySource: 'rabbitmqMessage' }, /RabbitMQ Trigger item/],
	[
		{ provider: 'stripe' },
		{ keySource: 'imapEmail' },
		/Email Trigger \(IMAP\) or Gmail Trigger item/,
	],
	[{ provider: 'stripe' }, { keySource: 'gmailMessage' }, /this workflow starts with a Webhook/],
	[{ provider: 'stripe' }, { namespace: 'a:b' }, /contains ":"/],
	[{ provider: 'stripe' }, { namespace: '{{ $json.x }}' }, /^The namespace .* contains "{{"/],
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

describe('multipart forgery: a request n8n does not hand as raw bytes is refused 401 first', () => {
	const { expressionsOf } = require('../support/n8nExpressions');
	const RAW = { data: { data: '', mimeType: 'application/json' } };

	test.each(SUPPORTED)(
		'%s: Webhook → Raw Body Only? → the signature check, or Respond 401',
		(provider) => {
			const workflow = builtInWorkflow(settings({ keySource: provider }), { provider });
			expect(targets(workflow, 'Webhook')).toEqual([['Raw Body Only?']]);
			expect(targets(workflow, 'Raw Body Only?')).toEqual([
				['Raw Body as Text'],
				['Respond 401 invalid signature'],
			]);
		},
	);

	test.each([
		['JSON', 'application/json', RAW, true],
		['text', 'text/plain; charset=utf-8', RAW, true],
		["form-urlencoded (Slack's slash commands)", 'application/x-www-form-urlencoded', RAW, true],
		['no content type', undefined, RAW, true],
		[
			'multipart/form-data with a file part "data"',
			'multipart/form-data; boundary=x',
			{ data: { data: '', mimeType: 'application/json', fileName: 'body.json' } },
			false,
		],
		['multipart/form-data with fields only', 'multipart/form-data; boundary=x', undefined, false],
		['Multipart/Mixed, any case and spacing', '  Multipart/Mixed; boundary=x', RAW, false],
		[
			'a file name on the raw body',
			'application/json',
			{ data: { data: '', mimeType: 'application/json', fileName: 'x.json' } },
			false,
		],
		['no binary at all', 'application/json', undefined, false],
	])('%s → %s', (_what, contentType, binary, passes) => {
		const workflow = builtInWorkflow(settings(), { provider: 'stripe' });
		const condition = node(workflow, 'Raw Body Only?').parameters.conditions.conditions[0];
		const item = {
			json: { headers: contentType === undefined ? {} : { 'content-type': contentType }, body: {} },
			...(binary ? { binary } : {}),
		};
		expect(expressionsOf(workflow).evaluate('Raw Body Only?', condition.leftValue, item)).toBe(
			passes,
		);
	});
});

describe('replay under a fresh unsigned id: GitHub and Shopify keyed on the signed body', () => {
	test('the decision comes from the provider table: who signs the event id', () => {
		const signs = builtIn.BUILT_IN_SIGNATURES.filter((/** @type {any} */ s) => s.supported).map(
			(/** @type {any} */ s) => `${s.signature.provider}: ${s.signature.signsEventId}`,
		);
		// Read another way than the generator does: through the compiled scheme's signed headers.
		const expected = PROVIDERS.filter(
			(p) => builtInSignatureSupported(p.value) && SIGNATURE_SCHEMES[p.value] !== undefined,
		).map((p) => {
			const signed = SIGNATURE_SCHEMES[p.value].signedHeaders.map((h) => h.toLowerCase());
			const signsId =
				p.eventId.kind !== 'headers'
					? SIGNATURE_SCHEMES[p.value].signsBody
					: p.eventId.names.every((name) => signed.includes(name.toLowerCase()));
			return `${p.value}: ${signsId}`;
		});
		expect(signs).toEqual(expected);
		expect(signs).toEqual(expect.arrayContaining(['stripe: true', 'github: false']));
	});

	test.each(['github', 'shopify'])(
		'%s: sha256: of the body by default, the header with --replay-guard off',
		(provider) => {
			const keyOf = (/** @type {any} */ options) =>
				node(builtInWorkflow(settings({ keySource: provider }), { provider, ...options }), 'Key')
					.parameters.assignments.assignments[0].value;
			expect(keyOf({})).toBe(`={{ "" + 'sha256:' + $json.bodySha256 }}`);
			expect(keyOf({ replayGuard: 'on' })).toBe(keyOf({}));
			expect(keyOf({ replayGuard: 'off' })).toContain('$json.headers[');
			const note = node(
				builtInWorkflow(settings({ keySource: provider }), { provider }),
				'What this workflow cannot promise',
			).parameters.content;
			expect(note).toMatch(
				/does not sign that header, so the key is the SHA-256 of the signed body/,
			);
		},
	);

	test.each(['stripe', 'slack'])('%s signs its id: the guard changes nothing', (provider) => {
		const on = builtInWorkflow(settings({ keySource: provider }), { provider });
		const off = builtInWorkflow(settings({ keySource: provider }), {
			provider,
			replayGuard: 'off',
		});
		expect(off).toEqual(on);
		expect(node(on, 'Key').parameters.assignments.assignments[0].value).toContain('$json.body?.[');
	});

	test('an Event ID expression reading a header of an unsigning sender is refused, a body one kept', () => {
		const github = (/** @type {string} */ eventIdPath, replayGuard = 'on') =>
			builtInWorkflow(settings({ keySource: 'eventIdOrBodyHash', eventIdPath }), {
				provider: 'github',
				replayGuard,
			});
		expect(() => github(`{{ $json.headers['x-github-delivery'] }}`)).toThrow(
			/reads a header, which this sender does not sign/,
		);
		expect(() => github(`{{ $json.headers['x-github-delivery'] }}`, 'off')).not.toThrow();
		expect(
			node(github('{{ $json.body.hook_id }}'), 'Key').parameters.assignments.assignments[0].value,
		).toContain('$json.body.hook_id');
	});
});

describe('a signature that cannot be checked or does not match: 401 problem+json, the same for every reason', () => {
	const { expressionsOf } = require('../support/n8nExpressions');
	const {
		CLIENT_ERROR_DOCS,
		INVALID_SIGNATURE_DETAIL,
	} = require('../../dist/nodes/shared/keys/clientErrors');

	test.each(SUPPORTED)(
		'%s: both checks answer through one Respond node: 401, application/problem+json, the invalid-signature kind',
		(provider) => {
			for (const mode of ['lease', 'simple']) {
				const workflow = builtInWorkflow(settings({ keySource: provider, mode }), { provider });
				expect(targets(workflow, 'Signature Valid?')[1]).toEqual(['Respond 401 invalid signature']);
				const respond = node(workflow, 'Respond 401 invalid signature');
				expect(respond.parameters.respondWith).toBe('text');
				expect(respond.parameters.options).toEqual({
					responseCode: 401,
					responseHeaders: {
						entries: [{ name: 'Content-Type', value: 'application/problem+json' }],
					},
				});
				// A multipart request and a forged HMAC get the very same bytes: nothing tells them apart.
				const { evaluate } = expressionsOf(workflow);
				const answers = [
					{ json: { headers: { 'content-type': 'multipart/form-data; boundary=x' }, body: {} } },
					{ json: { body: { id: 'evt_1' }, expectedSignature: 'aa', rawBody: '{}' } },
				].map((item) =>
					evaluate('Respond 401 invalid signature', respond.parameters.responseBody, item),
				);
				expect(answers[1]).toBe(answers[0]);
				expect(JSON.parse(answers[0])).toEqual({
					type: `${CLIENT_ERROR_DOCS}#invalid-signature`,
					title: 'The signature of the request could not be verified',
					status: 401,
					detail: INVALID_SIGNATURE_DETAIL,
				});
			}
		},
	);
});

describe('an event id that cannot be a key: 400 problem+json before the reservation', () => {
	const { expressionsOf } = require('../support/n8nExpressions');

	test.each(SUPPORTED)(
		'%s: Key → Key Storable? → Reserve Key, or Respond 400 invalid key',
		(provider) => {
			for (const mode of ['lease', 'simple']) {
				const workflow = builtInWorkflow(settings({ keySource: provider, mode }), { provider });
				expect(targets(workflow, 'Key')).toEqual([['Key Storable?']]);
				expect(targets(workflow, 'Key Storable?')).toEqual([
					['Reserve Key'],
					['Respond 400 invalid key'],
				]);
			}
		},
	);

	test('the answer: status 400, application/problem+json, the invalid-key type, title and the reason', () => {
		const workflow = builtInWorkflow(settings(), { provider: 'stripe' });
		const respond = node(workflow, 'Respond 400 invalid key');
		expect(respond.parameters.options).toEqual({
			responseCode: 400,
			responseHeaders: { entries: [{ name: 'Content-Type', value: 'application/problem+json' }] },
		});
		const { evaluate } = expressionsOf(workflow);
		const item = { json: { body: { id: { nested: true } }, bodySha256: 'ab' } };
		const fields = Object.fromEntries(
			node(workflow, 'Key').parameters.assignments.assignments.map((/** @type {any} */ a) => [
				a.name,
				evaluate('Key', a.value, item),
			]),
		);
		const keyed = { json: { ...item.json, ...fields } };
		const storable = node(workflow, 'Key Storable?').parameters.conditions.conditions[0].leftValue;
		expect(evaluate('Key Storable?', storable, keyed)).toBe(false);
		expect(
			JSON.parse(evaluate('Respond 400 invalid key', respond.parameters.responseBody, keyed)),
		).toEqual({
			type: 'https://github.com/n8n-nodes-idempotency/n8n-nodes-idempotency/blob/main/docs/errors.md#invalid-key',
			title: 'The event id cannot be an idempotency key',
			status: 400,
			detail: 'The event id is an object, not a text or number',
		});
		const good = { json: { body: { id: 'evt_1' }, bodySha256: 'ab' } };
		const goodFields = Object.fromEntries(
			node(workflow, 'Key').parameters.assignments.assignments.map((/** @type {any} */ a) => [
				a.name,
				evaluate('Key', a.value, good),
			]),
		);
		expect(goodFields).toEqual({ key: 'evt:evt_1', keyProblem: '' });
		expect(evaluate('Key Storable?', storable, { json: { ...good.json, ...goodFields } })).toBe(
			true,
		);
	});
});
