// Same key, same answer: request fingerprints (a key reused with another payload is flagged, never
// new), stored responses (every later duplicate of a completed key carries the first answer), and
// the Idempotency-Key request header as a key source. Real PostgreSQL, n8n's WorkflowExecute.
const { describe, test, expect } = require('@jest/globals');
const path = require('node:path');
const { useTestDatabase } = require('../support/database');
const { closeAllPools } = require('../../dist/nodes/shared/transport/poolCache');
const { runWorkflow } = require('../support/engine');
const { sha256Hex, webhookItem } = require('../support/webhookItems');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');
const completeWorkflow = require('../fixtures/complete.workflow.json');
const exactlyOnceWorkflow = require('../fixtures/exactly-once.workflow.json');

const { clientKeyFromHeader } = require(
	path.join(__dirname, '../../dist/nodes/shared/keys/idempotencyKeyHeader.js'),
);

const db = useTestDatabase(async (database) => {
	await database.query(`CREATE TABLE business_log (
		id bigserial PRIMARY KEY, event_key text NOT NULL, event_type text,
		created_at timestamptz NOT NULL DEFAULT now()
	)`);
});

/** Runs Reserve (lease mode unless told) on items; returns each item's route and `idempotency`. */
async function reserve(items, parameters = {}, table = 'processed_events') {
	const run = await runWorkflow(reserveWorkflow, items, {
		credentials: db.credential(),
		nodeOverrides: {
			'Idempotency Reserve': {
				parameters: { mode: 'lease', leaseSeconds: 60, table, ...parameters },
			},
		},
	});
	if (run.error) return { error: run.error, run };
	const routed = [
		...run.output('Idempotency Reserve', 0).map((item) => ({ route: 'new', item })),
		...run.output('Idempotency Reserve', 1).map((item) => ({ route: 'duplicate', item })),
	].sort((a, b) => a.item.pairedItem.item - b.item.pairedItem.item);
	return {
		run,
		routes: routed.map(({ route }) => route),
		idempotency: routed.map(({ item }) => item.json.idempotency),
	};
}

const body = (id, extra = {}) => webhookItem({ body: { id, ...extra } });

async function complete(idempotency, parameters = {}) {
	return await runWorkflow(completeWorkflow, [{ json: { idempotency } }], {
		credentials: db.credential(),
		nodeOverrides: { 'Complete Key': { parameters } },
	});
}

const STORED = {
	storeResponse: true,
	responseStatusCode: 201,
	responseHeaders: { entries: [{ name: 'Content-Type', value: 'application/json' }] },
	responseBody:
		'={{ JSON.stringify({ status: "created", note: "Grüße, 東京 🚀", key: $json.idempotency.key }) }}',
};

describe('fingerprints', () => {
	test('lease mode records the SHA-256 of the raw body with the key', async () => {
		const item = body('fp_stored', { amount: 5 });
		const first = await reserve([item]);
		expect(first.routes).toEqual(['new']);
		const { rows } = await db.query(
			`SELECT fingerprint FROM processed_events WHERE key = 'evt:fp_stored'`,
		);
		expect(rows[0].fingerprint).toBe(
			sha256Hex(Buffer.from(JSON.stringify({ id: 'fp_stored', amount: 5 }))),
		);
	});

	test('the same key with another body is a flagged duplicate (never new), in flight and completed alike', async () => {
		const first = await reserve([body('fp_mismatch', { amount: 5 })]);
		const other = await reserve([body('fp_mismatch', { amount: 500 })]);
		expect(other.routes).toEqual(['duplicate']);
		expect(other.idempotency[0]).toMatchObject({
			key: 'evt:fp_mismatch',
			isNew: false,
			status: 'in_progress',
			mismatch: true,
			fingerprint: expect.stringMatching(/^[0-9a-f]{12}…$/),
			storedFingerprint: expect.stringMatching(/^[0-9a-f]{12}…$/),
		});
		expect(other.idempotency[0].fingerprint).not.toBe(other.idempotency[0].storedFingerprint);

		await complete(first.idempotency[0]);
		const same = await reserve([body('fp_mismatch', { amount: 5 })]);
		expect(same.idempotency[0]).toEqual({
			key: 'evt:fp_mismatch',
			isNew: false,
			status: 'completed',
			firstSeenAt: expect.any(String),
		});
		const later = await reserve([body('fp_mismatch', { amount: 500 })]);
		expect(later.idempotency[0]).toMatchObject({ status: 'completed', mismatch: true });
	});

	test('a dead reservation is not taken over by a request with another payload', async () => {
		await reserve([body('fp_takeover', { v: 1 })]);
		await db.query(
			`UPDATE processed_events SET lease_until = now() - interval '1 second' WHERE key = 'evt:fp_takeover'`,
		);
		const other = await reserve([body('fp_takeover', { v: 2 })]);
		expect(other.routes).toEqual(['duplicate']);
		expect(other.idempotency[0]).toMatchObject({ mismatch: true, status: 'in_progress' });
		const same = await reserve([body('fp_takeover', { v: 1 })]);
		expect(same.routes).toEqual(['new']);
		expect(same.idempotency[0].attempt).toBe(2);
	});

	test('inside one batch: the first item of a key is new, a repeat with another body is flagged, an equal repeat is not', async () => {
		const result = await reserve([
			body('fp_batch', { v: 1 }),
			body('fp_batch', { v: 2 }),
			body('fp_batch', { v: 1 }),
			body('fp_batch_other'),
		]);
		expect(result.routes).toEqual(['new', 'duplicate', 'duplicate', 'new']);
		expect(result.idempotency.map((i) => i.mismatch === true)).toEqual([false, true, false, false]);
	});

	test('rows without a fingerprint (written before, by hand or simple mode) never mismatch', async () => {
		await db.query(
			`INSERT INTO processed_events (key, status) VALUES ('evt:fp_legacy', 'completed'), ('evt:fp_legacy_plain', NULL)`,
		);
		const result = await reserve([body('fp_legacy', { any: 1 }), body('fp_legacy_plain')]);
		expect(result.routes).toEqual(['duplicate', 'duplicate']);
		for (const idempotency of result.idempotency) {
			expect(idempotency.status).toBe('completed');
			expect(idempotency.mismatch).toBeUndefined();
		}
	});

	test('simple mode with a fingerprint: the column is added to a two-column table, and a mismatch is flagged', async () => {
		await db.query(
			`CREATE TABLE simple_keys (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())`,
		);
		const simple = { mode: 'simple', fingerprint: 'rawBody' };
		expect((await reserve([body('fp_simple', { v: 1 })], simple, 'simple_keys')).routes).toEqual([
			'new',
		]);
		const other = await reserve([body('fp_simple', { v: 2 })], simple, 'simple_keys');
		expect(other.idempotency[0]).toMatchObject({ isNew: false, mismatch: true });
		const same = await reserve([body('fp_simple', { v: 1 })], simple, 'simple_keys');
		expect(same.idempotency[0].mismatch).toBeUndefined();
		// Without a fingerprint (simple mode's default) the two-column table is all it needs.
		await db.query(
			`CREATE TABLE simple_plain (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())`,
		);
		await reserve([body('fp_plain')], { mode: 'simple' }, 'simple_plain');
		const { rows } = await db.query(
			`SELECT count(*)::int AS n FROM information_schema.columns WHERE table_name = 'simple_plain'`,
		);
		expect(rows[0].n).toBe(2);
	});

	test('a user who may not add the column gets the exact ALTER TABLE, and nothing is routed', async () => {
		await db.query(
			`CREATE TABLE locked_keys (key text PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())`,
		);
		const role = `idem_fp_${Math.random().toString(36).slice(2, 10)}`;
		await db.query(`CREATE ROLE ${role} LOGIN PASSWORD 'limited'`);
		await db.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON locked_keys TO ${role}`);
		const run = await runWorkflow(reserveWorkflow, [body('fp_locked')], {
			credentials: db.credential({ user: role, password: 'limited' }),
			nodeOverrides: {
				'Idempotency Reserve': {
					parameters: { mode: 'simple', fingerprint: 'rawBody', table: 'locked_keys' },
				},
			},
		});
		await closeAllPools();
		await db.query(`DROP OWNED BY ${role}`);
		await db.query(`DROP ROLE ${role}`);
		expect(run.error.message).toMatch(/lacks the fingerprint columns/);
		expect(run.error.description).toContain(
			'ALTER TABLE "public"."locked_keys"\n  ADD COLUMN IF NOT EXISTS fingerprint text;',
		);
		expect(run.error.description).toMatch(/Or set Fingerprint to None/);
		expect((await db.query(`SELECT key FROM locked_keys`)).rows).toHaveLength(0);
	});

	test('On Mismatch: Fail the Item makes it an item error that names the key', async () => {
		await reserve([body('fp_error', { v: 1 })]);
		const other = await reserve([body('fp_error', { v: 2 })], { onMismatch: 'error' });
		expect(other.error.message).toMatch(
			/^The key "evt:fp_error" was reserved for another request: its fingerprint differs \(stored [0-9a-f]{12}…, this request [0-9a-f]{12}…\)$/,
		);
	});

	test('Expression: the fields that define the request, in any key order, match; another value does not', async () => {
		const byFields = {
			fingerprint: 'expression',
			fingerprintExpression: '={{ { amount: $json.body.amount, currency: $json.body.currency } }}',
		};
		await reserve(
			[webhookItem({ body: { id: 'fp_expr', amount: 5, currency: 'EUR', sentAt: 1 } })],
			byFields,
		);
		const retry = await reserve(
			[
				webhookItem({
					body: { currency: 'EUR', sentAt: 2, amount: 5, id: 'fp_expr' },
					rawBody: JSON.stringify({ currency: 'EUR', sentAt: 2, amount: 5, id: 'fp_expr' }),
				}),
			],
			byFields,
		);
		expect(retry.idempotency[0].mismatch).toBeUndefined();
		const changed = await reserve(
			[webhookItem({ body: { id: 'fp_expr', amount: 6, currency: 'EUR', sentAt: 3 } })],
			byFields,
		);
		expect(changed.idempotency[0].mismatch).toBe(true);
	});
});

describe('stored responses', () => {
	test('Complete stores status, chosen headers and a UTF-8 body; every later duplicate carries it, byte for byte', async () => {
		const [reserved] = (await reserve([body('resp_round_trip')])).idempotency;
		const done = await complete(reserved, STORED);
		expect(done.error).toBeUndefined();
		const expectedBody = JSON.stringify({
			status: 'created',
			note: 'Grüße, 東京 🚀',
			key: 'evt:resp_round_trip',
		});
		const response = {
			statusCode: 201,
			headers: { 'content-type': 'application/json' },
			body: expectedBody,
		};
		expect(done.output('Complete Key')[0].json.idempotency).toEqual({
			key: 'evt:resp_round_trip',
			completed: true,
			response,
		});
		for (let retry = 0; retry < 3; retry++) {
			const duplicate = await reserve([body('resp_round_trip')]);
			expect(duplicate.idempotency[0]).toMatchObject({ status: 'completed', response });
			expect(Buffer.from(duplicate.idempotency[0].response.body)).toEqual(
				Buffer.from(expectedBody),
			);
		}
		// In flight duplicates and another payload get no response.
		const mismatch = await reserve([body('resp_round_trip', { other: true })]);
		expect(mismatch.idempotency[0].mismatch).toBe(true);
		expect(mismatch.idempotency[0].response).toBeUndefined();
	});

	test('a failure answer is stored and replayed too', async () => {
		const [reserved] = (await reserve([body('resp_failure')])).idempotency;
		await complete(reserved, {
			...STORED,
			responseStatusCode: 500,
			responseBody: '{"error":"card declined"}',
		});
		const duplicate = await reserve([body('resp_failure')]);
		expect(duplicate.idempotency[0].response).toMatchObject({
			statusCode: 500,
			body: '{"error":"card declined"}',
		});
	});

	test('over the size limit: an item error and the key not completed; or, when asked, a marker without the body', async () => {
		const [reserved] = (await reserve([body('resp_large')])).idempotency;
		const large = { ...STORED, responseBody: 'x'.repeat(2000), maxResponseBytes: 1000 };
		const refused = await complete(reserved, large);
		expect(refused.error.message).toBe(
			'The response body is 2000 bytes, over the limit of 1000 bytes to store',
		);
		const { rows } = await db.query(
			`SELECT status, response FROM processed_events WHERE key = 'evt:resp_large'`,
		);
		expect(rows[0]).toEqual({ status: 'in_progress', response: null });

		const marked = await complete(reserved, { ...large, whenTooLarge: 'marker' });
		expect(marked.error).toBeUndefined();
		const duplicate = await reserve([body('resp_large')]);
		expect(duplicate.idempotency[0].response).toEqual({
			statusCode: 201,
			headers: { 'content-type': 'application/json' },
			body: null,
			tooLarge: { bytes: 2000, limit: 1000 },
		});
	});

	test('Complete by an execution that lost the key stores nothing', async () => {
		const [stale] = (await reserve([body('resp_lost')])).idempotency;
		await db.query(
			`UPDATE processed_events SET lease_until = now() - interval '1 second' WHERE key = 'evt:resp_lost'`,
		);
		const [current] = (await reserve([body('resp_lost')])).idempotency;
		expect(current.attempt).toBe(2);
		const late = await complete(stale, STORED);
		expect(late.error.message).toMatch(/taken over by another execution \(attempt 2\)/);
		const { rows } = await db.query(
			`SELECT status, response FROM processed_events WHERE key = 'evt:resp_lost'`,
		);
		expect(rows[0]).toEqual({ status: 'in_progress', response: null });
	});

	test('the exactly-once step stores the response in the transaction that commits the row', async () => {
		const run = await runWorkflow(exactlyOnceWorkflow, [body('resp_exactly_once')], {
			credentials: db.credential(),
			nodeOverrides: { 'Business Step (exactly once)': { parameters: STORED } },
		});
		expect(run.error).toBeUndefined();
		const [out] = run.output('Business Step (exactly once)');
		expect(out.json.idempotency.response.statusCode).toBe(201);
		const duplicate = await reserve([body('resp_exactly_once')]);
		expect(duplicate.idempotency[0].response).toEqual(out.json.idempotency.response);
	});
});

describe('Respond to Webhook', () => {
	const RESPOND = {
		respondToWebhook: true,
		responseStatusCode: 201,
		responseBody: '={{ { status: "created", note: "Grüße 🚀" } }}',
	};
	const sentText = (response) => response.body;

	test('Complete Key answers once the key is completed: the status, JSON as JSON, the bytes it stores', async () => {
		const [reserved] = (await reserve([body('answer_stored')])).idempotency;
		const done = await complete(reserved, { ...RESPOND, storeResponse: true });
		expect(done.error).toBeUndefined();
		expect(done.webhookResponses).toHaveLength(1);
		const [sent] = done.webhookResponses;
		expect(sent.statusCode).toBe(201);
		expect(sent.headers).toEqual({ 'content-type': 'application/json; charset=utf-8' });
		expect(typeof sent.body).toBe('string');
		const { rows } = await db.query(
			`SELECT status, response FROM processed_events WHERE key = 'evt:answer_stored'`,
		);
		expect(rows[0].status).toBe('completed');
		// The caller and every later duplicate get the same bytes.
		expect(sentText(sent)).toBe('{"status":"created","note":"Grüße 🚀"}');
		expect(rows[0].response.body).toBe(sentText(sent));
		// What was stored keeps the headers the user chose (none): a replay sets its own.
		expect(rows[0].response.headers).toEqual({});
	});

	test('without Store Response it answers and stores nothing; text is text/plain unless a header says otherwise', async () => {
		const [reserved] = (await reserve([body('answer_only')])).idempotency;
		const done = await complete(reserved, {
			respondToWebhook: true,
			responseStatusCode: 200,
			responseBody: 'ok',
		});
		expect(done.error).toBeUndefined();
		expect(done.output('Complete Key')[0].json.idempotency).toEqual({
			key: 'evt:answer_only',
			completed: true,
			response: {
				statusCode: 200,
				headers: { 'content-type': 'text/plain; charset=utf-8' },
				body: 'ok',
			},
		});
		expect(sentText(done.webhookResponses[0])).toBe('ok');
		const { rows } = await db.query(
			`SELECT status, response FROM processed_events WHERE key = 'evt:answer_only'`,
		);
		expect(rows[0]).toEqual({ status: 'completed', response: null });

		const [other] = (await reserve([body('answer_typed')])).idempotency;
		const typed = await complete(other, {
			respondToWebhook: true,
			responseBody: '{"status":"processed"}',
			responseHeaders: { entries: [{ name: 'X-Trace', value: 'abc' }] },
		});
		expect(typed.webhookResponses[0].headers).toEqual({
			'x-trace': 'abc',
			'content-type': 'application/json; charset=utf-8',
		});
	});

	test('over the size limit with a marker: the marker is stored, the caller still gets the whole body', async () => {
		const [reserved] = (await reserve([body('answer_large')])).idempotency;
		const done = await complete(reserved, {
			...RESPOND,
			storeResponse: true,
			responseBody: 'y'.repeat(3000),
			maxResponseBytes: 1000,
			whenTooLarge: 'marker',
		});
		expect(done.error).toBeUndefined();
		expect(sentText(done.webhookResponses[0])).toBe('y'.repeat(3000));
		const { rows } = await db.query(
			`SELECT response FROM processed_events WHERE key = 'evt:answer_large'`,
		);
		expect(rows[0].response).toMatchObject({ body: null, tooLarge: { bytes: 3000, limit: 1000 } });
	});

	test('a Complete Key that lost the key answers nothing: the caller is never told "done" for it', async () => {
		const [stale] = (await reserve([body('answer_lost')])).idempotency;
		await db.query(
			`UPDATE processed_events SET lease_until = now() - interval '1 second' WHERE key = 'evt:answer_lost'`,
		);
		await reserve([body('answer_lost')]);
		const late = await complete(stale, RESPOND);
		expect(late.error.message).toMatch(/taken over by another execution/);
		expect(late.webhookResponses).toEqual([]);
	});

	test('a bad status code fails the item before anything is completed or sent', async () => {
		const [reserved] = (await reserve([body('answer_bad_status')])).idempotency;
		const done = await complete(reserved, { ...RESPOND, responseStatusCode: 42 });
		expect(done.error.message).toMatch(/not an HTTP status/);
		expect(done.webhookResponses).toEqual([]);
		const { rows } = await db.query(
			`SELECT status FROM processed_events WHERE key = 'evt:answer_bad_status'`,
		);
		expect(rows[0].status).toBe('in_progress');
	});

	test('the exactly-once step answers after its transaction committed, and not when it rolled back', async () => {
		const run = await runWorkflow(exactlyOnceWorkflow, [body('answer_exactly_once')], {
			credentials: db.credential(),
			nodeOverrides: { 'Business Step (exactly once)': { parameters: RESPOND } },
		});
		expect(run.error).toBeUndefined();
		expect(run.webhookResponses.map(sentText)).toEqual(['{"status":"created","note":"Grüße 🚀"}']);
		const { rows } = await db.query(
			`SELECT count(*)::int AS n FROM business_log WHERE event_key = 'evt:answer_exactly_once'`,
		);
		expect(rows[0].n).toBe(1);

		const failing = await runWorkflow(exactlyOnceWorkflow, [body('answer_rolled_back')], {
			credentials: db.credential(),
			nodeOverrides: {
				'Business Step (exactly once)': {
					parameters: { ...RESPOND, query: 'INSERT INTO no_such_table VALUES (1)' },
				},
			},
		});
		expect(failing.output('Business Step (exactly once)', 1)).toHaveLength(1);
		expect(failing.webhookResponses).toEqual([]);
	});
});

describe('the Idempotency-Key header', () => {
	const apiItem = (headers, payload = { order: 1 }) => webhookItem({ body: payload, headers });
	const byHeader = { keySource: 'idempotencyKeyHeader' };

	test.each([
		['"8e03978e-40d5-43e8-bc93-6894a57f9324"', '8e03978e-40d5-43e8-bc93-6894a57f9324'],
		['8e03978e-40d5-43e8-bc93-6894a57f9324', '8e03978e-40d5-43e8-bc93-6894a57f9324'],
		['  "with \\"quote\\" and \\\\"  ', 'with "quote" and \\'],
		['"same", "same"', 'same'],
		['tok_1, tok_1', 'tok_1'],
	])('%s reads as %j', (header, key) => {
		expect(clientKeyFromHeader(header)).toBe(key);
	});

	test.each([
		[undefined, 'The Idempotency-Key header is missing'],
		['""', 'The Idempotency-Key header is empty'],
		['   ', 'The Idempotency-Key header is empty'],
		[
			`"${'k'.repeat(256)}"`,
			'The Idempotency-Key header is 256 characters long; at most 255 are accepted',
		],
		['"a", "b"', 'The Idempotency-Key header was sent 2 times with different values'],
		['"not closed', 'The Idempotency-Key header is malformed: the quoted string is not closed'],
		[
			'two words',
			'The Idempotency-Key header is malformed: a bare key holds visible ASCII only, without spaces or quotes',
		],
		[
			'"é"',
			'The Idempotency-Key header is malformed: a Structured Field String holds printable ASCII only',
		],
	])('%j is refused: %s', (header, message) => {
		expect(() => clientKeyFromHeader(header)).toThrow(message);
	});

	test('the quoted and the bare form are one key, "idk:" + the value, scoped by the namespace', async () => {
		const quoted = await reserve([apiItem({ 'idempotency-key': '"order-42"' })], {
			...byHeader,
			namespace: 'client-a',
		});
		expect(quoted.idempotency[0]).toMatchObject({ key: 'client-a:idk:order-42', isNew: true });
		const bare = await reserve([apiItem({ 'Idempotency-Key': 'order-42' })], {
			...byHeader,
			namespace: 'client-a',
		});
		expect(bare.idempotency[0]).toMatchObject({ key: 'client-a:idk:order-42', isNew: false });
		// An expression scope per item: the client's id from a header.
		const scoped = await reserve(
			[
				apiItem({ 'idempotency-key': 'order-42', 'x-client': 'client-b' }),
				apiItem({ 'idempotency-key': 'order-42', 'x-client': 'client-c' }),
			],
			{ ...byHeader, namespace: '={{ $json.headers["x-client"] }}' },
		);
		expect(scoped.idempotency.map((i) => [i.key, i.isNew])).toEqual([
			['client-b:idk:order-42', true],
			['client-c:idk:order-42', true],
		]);
	});

	test('a request without the header is an item error, never a route', async () => {
		const run = await reserve([apiItem({})], byHeader);
		expect(run.error.message).toBe('The Idempotency-Key header is missing');
		expect(run.error.description).toMatch(/answer 400/);
	});
});
