// Property-based (fast-check), through the real Idempotency Reserve node (n8n-core's WorkflowExecute,
// real PostgreSQL): for generated ids (text, numbers in every JSON form), namespaces, custom keys,
// header sets and bodies,
// - two different events never get one key, and the same bytes always get the same key;
// - each key is what the README's rules say (exact number text, one id per header, `<namespace>:`,
//   a provider preset's `<provider>:` key space, Stripe's `evt:`);
// - what cannot be keyed faithfully is an item error, and nothing else is;
// - routing follows the keys: the first item of a key is new, later ones and a redelivery are
//   duplicates, an error is never a duplicate.
// Each generated case is one execution of many items, then the same bytes again as a redelivery.
const { describe, test, expect } = require('@jest/globals');
const fc = require('fast-check');

const { useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const { sha256Hex, webhookItem } = require('../support/webhookItems');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');
const { PROVIDERS } = require('../../dist/nodes/shared/webhook/providers');

const db = useTestDatabase(async (database) => {
	await database.query(
		'CREATE TABLE processed_events (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())',
	);
});

const NAMESPACE_HEADER = 'x-test-namespace';
const RUNS_PER_SOURCE = Number(process.env.KEY_PROPERTY_RUNS ?? 40);

// ---- generators -------------------------------------------------------------------------------

const space = fc.stringMatching(/^[ \t\r\n]{0,2}$/);

/** Number texts in every JSON form: safe and unsafe integers, fractions, exponents, the pairs. */
const numberToken = fc.oneof(
	fc.maxSafeInteger().map(String),
	fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
	fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
	fc
		.tuple(
			fc.constantFrom('', '-'),
			fc.oneof(fc.constant('0'), fc.stringMatching(/^[1-9][0-9]{0,22}$/)),
			fc.option(fc.stringMatching(/^\.[0-9]{1,6}$/), { nil: '' }),
			fc.option(fc.stringMatching(/^[eE][+-]?[0-9]{1,2}$/), { nil: '' }),
		)
		.map((parts) => parts.join('')),
	fc.constantFrom(
		'1e21',
		'1000000000000000000000',
		'1E+21',
		'98765432101234567891',
		'98765432101234567892',
		'-0',
		'0',
		'12345',
		'12345.0',
	),
);

const surrogateHalf = fc
	.integer({ min: 0xd800, max: 0xdfff })
	.map((code) => String.fromCharCode(code));
/** Text ids: typical ones (with ":" too), any code point, NUL, surrogate halves and pairs, look-alikes of numbers. */
const textId = fc.oneof(
	fc.stringMatching(/^[A-Za-z0-9_:.-]{1,24}$/),
	fc.string({ minLength: 1, maxLength: 6, unit: 'binary' }),
	fc.string({
		minLength: 1,
		maxLength: 3,
		unit: fc.oneof(surrogateHalf, fc.constantFrom('a', '\u0000', '🎉')),
	}),
	fc.constantFrom('12345', '1e21', '98765432101234567891', ' evt_1 ', 'a, b', 'evt:x', 'sha256:00'),
);

/** A JSON body with an id (text or number) at `field`, sometimes after an earlier member of that name, sometimes with a BOM. */
function bodyWithId(field) {
	return fc
		.record({
			id: fc.oneof(
				textId.map((text) => /** @type {{ text?: string, token?: string }} */ ({ text })),
				numberToken.map((token) => /** @type {{ text?: string, token?: string }} */ ({ token })),
			),
			shadow: fc.option(fc.oneof(numberToken, fc.constant('"shadowed"')), { nil: undefined }),
			pad: fc.tuple(space, space, space),
			bom: fc.boolean(),
			type: fc.stringMatching(/^[a-z.]{0,8}$/),
		})
		.map(({ id, shadow, pad, bom, type }) => {
			const members = [`"type":${pad[0]}${JSON.stringify(type)}`];
			// JSON.parse keeps the last member of a name: the shadowed one must not count.
			if (shadow !== undefined) members.push(`"${field}":${shadow}`);
			members.push(
				`${pad[1]}"${field}"${pad[2]}:${id.text !== undefined ? JSON.stringify(id.text) : id.token}`,
			);
			return { raw: `${bom ? '\ufeff' : ''}{${pad[0]}${members.join(',')}${pad[2]}}`, id };
		});
}

const bodyWithoutId = fc
	.record({ type: fc.string({ maxLength: 10 }), pad: space })
	.map(({ type, pad }) => ({ raw: `{${pad}"type":${JSON.stringify(type)}${pad}}`, id: undefined }));

const headerId = fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/);
/** A header as n8n may hand it over: missing, empty, padded, repeated with one id, repeated with two. */
const headerValue = fc.oneof(
	fc.constant(undefined),
	fc.constantFrom('', ' ', ' , '),
	headerId,
	headerId.map((id) => ` ${id}\t`),
	headerId.map((id) => `${id}, ${id}`),
	headerId.map((id) => [id, ` ${id}`]),
	fc.tuple(headerId, headerId).map(([a, b]) => `${a}, ${b}`),
	fc.tuple(headerId, headerId).map(([a, b]) => [a, b]),
);

const namespaces = [
	'',
	'a',
	'b',
	'tenant 1',
	'a:b',
	'evt',
	'sha256',
	'signed',
	'idk',
	'svix',
	'slack',
];

/**
 * What an empty namespace's keys start with, so no namespace may be one: evt, sha256, signed, idk,
 * and every provider's value (a provider's preset keys its events `<provider>:<id>`).
 */
const RESERVED_NAMESPACES = new Set([
	'evt',
	'sha256',
	'signed',
	'idk',
	...PROVIDERS.map(({ value }) => value),
]);

// ---- the model: what the README says the key is ----------------------------------------------

function isPlainInteger(n) {
	return Number.isSafeInteger(n) && !Object.is(n, -0);
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Where no raw body can be read, a number is only its String(n), and only for a safe integer. */
function numberWithoutRaw(token) {
	const value = Number(token);
	return isPlainInteger(value) ? { text: String(value) } : { error: 'number' };
}

/** The parts of one header: one id, none, or an error for two different ids. */
function headerModel(value) {
	if (value === undefined) return { none: true };
	const parts = (Array.isArray(value) ? value : [value])
		.flatMap((part) => part.split(','))
		.map((part) => part.trim());
	const ids = [...new Set(parts.filter((part) => part !== ''))];
	if (ids.length === 0) return { none: true };
	return ids.length === 1 ? { text: ids[0] } : { error: 'header' };
}

/**
 * The expected outcome of one event: `{ error }`, or `{ key, identity }` where identity names the
 * event (namespace, kind, the id's text or the hashed bytes) independently of the key.
 */
function expectedOutcome(event) {
	const { namespace, body, rawBody } = event;
	if (namespace.includes(':') || RESERVED_NAMESPACES.has(namespace)) return { error: 'namespace' };
	const prefix = namespace === '' ? '' : `${namespace}:`;
	let core;
	if (event.id.error) return { error: event.id.error };
	if (event.id.kind === 'hash') {
		const bytes = rawBody ?? JSON.stringify(body);
		core = {
			kind: 'hash',
			text: Buffer.from(bytes).toString('base64'),
			key: `sha256:${sha256Hex(Buffer.from(bytes))}`,
		};
	} else if (event.id.kind === 'custom') {
		core = { kind: 'custom', text: event.id.text, key: event.id.text };
	} else {
		// A provider's preset keys its event ids in its own key space; Stripe's and Event ID's are evt:.
		const keySpace = event.scope ?? 'evt';
		core = { kind: keySpace, text: event.id.text, key: `${keySpace}:${event.id.text}` };
	}
	const key = prefix + core.key;
	if (key.includes('\u0000') || LONE_SURROGATE.test(key)) return { error: 'storable' };
	return { key, identity: JSON.stringify([namespace, core.kind, core.text]) };
}

/** The id a body field gives: its text, the number's raw text (or what is left without it), or none. */
function bodyIdModel(id, { rawRead }) {
	if (id === undefined) return { kind: 'hash' };
	if (id.text !== undefined) return { kind: 'evt', text: id.text };
	if (rawRead) return { kind: 'evt', text: id.token };
	const number = numberWithoutRaw(id.token);
	return number.error ? { error: number.error } : { kind: 'evt', text: number.text };
}

// ---- scenarios: one per key source -------------------------------------------------------------

const namespaceFor = (choices) => fc.constantFrom(...choices);

/**
 * A Custom key read from the body's `k`, under a namespace that is never empty (without one a Custom
 * key is the whole key and may equal anything: README). `rawRead`: the expression is a plain body
 * path, so a number keeps the sender's digits from the raw body.
 */
function customKeyCase(customKey, { rawRead }) {
	return {
		parameters: { keySource: 'custom', customKey },
		event: fc
			.record({
				body: bodyWithId('k'),
				namespace: namespaceFor(['a', 'b', 'tenant 1', 'a:b', 'evt', 'signed', 'github']),
			})
			.map(({ body, namespace }) => {
				const id = bodyIdModel(body.id, { rawRead });
				return {
					rawText: body.raw,
					withRawBody: true,
					namespace,
					id: id.error ? id : { kind: 'custom', text: id.text },
				};
			}),
	};
}

/** Each scenario: the node's parameters and a generator of events with their model id. */
const scenarios = {
	'Event ID (default), raw body on or off': {
		parameters: {},
		event: fc
			.record({
				body: fc.oneof(bodyWithId('id'), bodyWithoutId),
				withRawBody: fc.boolean(),
				namespace: namespaceFor(namespaces),
			})
			.map(({ body, withRawBody, namespace }) => ({
				rawText: body.raw,
				withRawBody,
				namespace,
				id: bodyIdModel(body.id, { rawRead: withRawBody }),
			})),
	},
	Stripe: {
		parameters: { keySource: 'stripe' },
		event: fc
			.record({
				body: fc.oneof(bodyWithId('id'), bodyWithoutId),
				namespace: namespaceFor(namespaces),
			})
			.map(({ body, namespace }) => ({
				rawText: body.raw,
				withRawBody: true,
				namespace,
				id: bodyIdModel(body.id, { rawRead: true }),
			})),
	},
	Slack: {
		parameters: { keySource: 'slack' },
		event: fc
			.record({
				body: fc.oneof(bodyWithId('event_id'), bodyWithoutId),
				namespace: namespaceFor(namespaces),
			})
			.map(({ body, namespace }) => ({
				rawText: body.raw,
				withRawBody: true,
				namespace,
				scope: 'slack',
				id: bodyIdModel(body.id, { rawRead: true }),
			})),
	},
	...Object.fromEntries(
		[
			['GitHub', 'github', ['x-github-delivery']],
			['Shopify', 'shopify', ['x-shopify-event-id', 'x-shopify-webhook-id']],
			['Standard Webhooks', 'standardWebhooks', ['webhook-id']],
			['Svix', 'svix', ['svix-id']],
		].map(([label, keySource, names]) => [
			label,
			{
				parameters: { keySource },
				event: fc
					.record({
						// Other presets' headers too: each preset must read only its own.
						values: fc.tuple(
							...[
								'x-github-delivery',
								'x-shopify-event-id',
								'x-shopify-webhook-id',
								'webhook-id',
								'svix-id',
							].map(() => headerValue),
						),
						body: fc.oneof(bodyWithId('id'), bodyWithoutId),
						namespace: namespaceFor(namespaces),
					})
					.map(({ values, body, namespace }) => {
						const all = [
							'x-github-delivery',
							'x-shopify-event-id',
							'x-shopify-webhook-id',
							'webhook-id',
							'svix-id',
						];
						const headers = Object.fromEntries(
							all.map((name, i) => [name, values[i]]).filter(([, value]) => value !== undefined),
						);
						/** @type {{ kind?: string, text?: string, error?: string }} */
						let id = { kind: 'hash' };
						for (const name of names) {
							const header = headerModel(headers[name]);
							if (header.none) continue;
							id = header.error ? { error: header.error } : { kind: 'evt', text: header.text };
							break;
						}
						return {
							rawText: body.raw,
							withRawBody: true,
							namespace,
							headers,
							scope: keySource,
							id,
						};
					}),
			},
		]),
	),
	'Custom, plain body path': customKeyCase('={{ $json.body.k }}', { rawRead: true }),
	'Custom, an expression n8n evaluates': customKeyCase('={{ $json.body?.k }}', { rawRead: false }),
};

// ---- running an execution and reading where each item went -------------------------------------

function itemOf(event) {
	const text = event.rawText.replace(/^\ufeff/, '');
	return webhookItem({
		body: JSON.parse(text),
		rawBody: event.rawText,
		withRawBody: event.withRawBody,
		headers: { ...(event.headers ?? {}), [NAMESPACE_HEADER]: event.namespace },
	});
}

/** One execution; returns, per item index, `{ output: 'new' | 'duplicate' | 'error', key?, message? }`. */
async function reserve(parameters, events) {
	const run = await runWorkflow(reserveWorkflow, events.map(itemOf), {
		credentials: db.credential(),
		nodeOverrides: {
			'Idempotency Reserve': {
				parameters: { namespace: `={{ $json.headers["${NAMESPACE_HEADER}"] }}`, ...parameters },
				onError: 'continueErrorOutput',
			},
		},
	});
	expect(run.error).toBeUndefined();
	const routed = new Array(events.length);
	const record = (output, item) => {
		const index = item.pairedItem.item;
		if (routed[index] !== undefined) throw new Error(`item ${index} came out twice`);
		routed[index] = { output, key: item.json.idempotency?.key, message: item.json.error };
	};
	run.output('Idempotency Reserve', 0).forEach((item) => record('new', item));
	run.output('Idempotency Reserve', 1).forEach((item) => record('duplicate', item));
	run.output('Idempotency Reserve', 2).forEach((item) => record('error', item));
	return routed;
}

/** Checks one execution against the model; `redelivery` means every key was reserved before. */
function checkExecution(routed, expected, { redelivery }) {
	const firstItemOfKey = new Map();
	expected.forEach((outcome, index) => {
		const got = routed[index];
		expect(got).toBeDefined();
		if (outcome.error) {
			expect({ index, output: got.output }).toEqual({ index, output: 'error' });
			return;
		}
		expect({ index, output: got.output === 'error' ? got.message : 'keyed', key: got.key }).toEqual(
			{ index, output: 'keyed', key: outcome.key },
		);
		const first = !redelivery && !firstItemOfKey.has(got.key);
		if (!firstItemOfKey.has(got.key)) firstItemOfKey.set(got.key, index);
		expect({ index, output: got.output }).toEqual({ index, output: first ? 'new' : 'duplicate' });
	});
}

/** Two different events (identities) never share a key; one identity always has one key. */
function checkOneKeyPerEvent(routed, expected) {
	const identityOfKey = new Map();
	const keyOfIdentity = new Map();
	expected.forEach((outcome, index) => {
		if (outcome.error) return;
		const { key } = routed[index];
		expect(identityOfKey.get(key) ?? outcome.identity).toBe(outcome.identity);
		expect(keyOfIdentity.get(outcome.identity) ?? key).toBe(key);
		identityOfKey.set(key, outcome.identity);
		keyOfIdentity.set(outcome.identity, key);
	});
}

describe.each(Object.entries(scenarios))('%s', (_label, scenario) => {
	test('one key per event, the same bytes the same key, routing by key', async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.array(scenario.event, { minLength: 1, maxLength: 10 }),
				fc.array(fc.nat(), { maxLength: 4 }),
				async (events, repeats) => {
					// Some events twice in one execution (the same bytes again, later).
					const batch = [...events, ...repeats.map((r) => events[r % events.length])];
					const expected = batch.map((event) =>
						expectedOutcome({
							...event,
							body: JSON.parse(event.rawText.replace(/^\ufeff/, '')),
							rawBody: event.withRawBody ? event.rawText : undefined,
						}),
					);
					await db.query('TRUNCATE processed_events');
					const first = await reserve(scenario.parameters, batch);
					checkExecution(first, expected, { redelivery: false });
					checkOneKeyPerEvent(first, expected);
					// The provider delivers everything again: same bytes, same keys, all duplicates.
					const again = await reserve(scenario.parameters, batch);
					checkExecution(again, expected, { redelivery: true });
					// Every key is in the table, once; nothing else is.
					const byBytes = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b));
					const keys = [
						...new Set(expected.filter((outcome) => !outcome.error).map((outcome) => outcome.key)),
					].sort(byBytes);
					const { rows } = await db.query('SELECT key FROM processed_events');
					expect(rows.map((row) => row.key).sort(byBytes)).toEqual(keys);
				},
			),
			{ numRuns: RUNS_PER_SOURCE },
		);
	});
});
