// What answer first stores of a delivery (nodes/shared/delivery/storedDelivery.ts), for any headers
// a sender or an attacker sends: only the allow-listed names, never a credential whatever its case,
// the body and query as the workflow reads them, within the record cap; and the item a redrive runs.
const { test, expect } = require('@jest/globals');
const fc = require('fast-check');

const {
	forbiddenStoredHeader,
	NEVER_STORED_HEADERS,
	redrivenJson,
	storedDeliveryOf,
	storedHeaderNames,
	storedMessageOf,
} = require('../../dist/nodes/shared/delivery/storedDelivery');

const headerName = fc.oneof(
	fc.constantFrom(...NEVER_STORED_HEADERS, 'content-type', 'x-github-event', 'webhook-id'),
	fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
);
/** A header name in any case, as senders spell them. */
const anyCase = (name) =>
	fc
		.array(fc.boolean(), { minLength: name.length, maxLength: name.length })
		.map((upper) => [...name].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''));

test('only the named headers are stored, lower-cased; a credential is never among them', () => {
	fc.assert(
		fc.property(
			fc.dictionary(headerName, fc.string({ maxLength: 30 })),
			// Even a list that names a credential (the node refuses such a setting before this).
			fc.array(fc.constantFrom('x-github-event', 'webhook-id', 'authorization', 'cookie'), {
				maxLength: 3,
			}),
			fc.jsonValue(),
			(headers, extra, body) => {
				const names = storedHeaderNames(extra);
				/** @type {any} */
				const outcome = storedDeliveryOf({ headers, body, query: { a: '1' } }, names);
				expect('delivery' in outcome).toBe(true);
				const stored = outcome.delivery;
				for (const name of Object.keys(stored.headers)) {
					expect(names).toContain(name);
					expect(name).toBe(name.toLowerCase());
					expect(NEVER_STORED_HEADERS).not.toContain(name);
				}
				expect(stored.body).toEqual(body);
				expect(stored.query).toEqual({ a: '1' });
			},
		),
	);
});

test('a setting naming a credential or a signature header is refused, in any case', () => {
	fc.assert(
		fc.property(
			fc.constantFrom(...NEVER_STORED_HEADERS, 'stripe-signature').chain(anyCase),
			(name) => {
				expect(forbiddenStoredHeader(['x-ok', name], ['Stripe-Signature'])).toBe(name);
			},
		),
	);
	expect(forbiddenStoredHeader(['x-github-event', 'webhook-id'], ['Stripe-Signature'])).toBe(
		undefined,
	);
});

test('over the record cap: not stored, said how large', () => {
	/** @type {any} */
	const outcome = storedDeliveryOf({ headers: {}, body: 'x'.repeat(300), query: {} }, [], {}, 200);
	expect(outcome).toEqual({ tooLarge: { bytes: expect.any(Number), limit: 200 } });
	expect(outcome.tooLarge.bytes).toBeGreaterThan(200);
});

test("a redrive's item is the delivery as n8n's Webhook hands it", () => {
	const stored = /** @type {any} */ (
		storedDeliveryOf(
			{ headers: { 'Content-Type': 'application/json' }, body: { id: 'evt_1' }, query: {} },
			storedHeaderNames([]),
		)
	).delivery;
	expect(redrivenJson(JSON.parse(JSON.stringify(stored)))).toEqual({
		headers: { 'content-type': 'application/json' },
		params: {},
		query: {},
		body: { id: 'evt_1' },
	});
});

test('an email is stored as the trigger emitted it and redriven as it is, within the cap (docs/email.md)', () => {
	const email = {
		subject: 'Réclamation',
		textPlain: 'Where is my order?',
		metadata: { 'message-id': '<a@example.com>' },
		attributes: { uid: 7 },
	};
	const outcome = /** @type {any} */ (storedMessageOf(email, { workflowId: 'wf1' }));
	expect(outcome.delivery).toMatchObject({ v: 1, message: email, workflowId: 'wf1' });
	expect(redrivenJson(outcome.delivery)).toEqual(email);
	// A stored webhook delivery without `message` is still redriven as a Webhook item.
	expect(redrivenJson({ v: 1, headers: {}, body: { id: 1 }, query: {} })).toMatchObject({
		body: { id: 1 },
	});
	const large = /** @type {any} */ (
		storedMessageOf({ ...email, textPlain: 'x'.repeat(300) }, {}, 200)
	);
	expect(large).toEqual({ tooLarge: { bytes: expect.any(Number), limit: 200 } });
});
