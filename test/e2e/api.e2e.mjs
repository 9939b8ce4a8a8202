// Idempotency-Key, both ways, in a real n8n 2.41.1 with the packed package:
// - the idempotent API template (workflows/idempotent-api.json): the answers of the IETF draft "The
//   Idempotency-Key HTTP Header Field" and Stripe's API, rule by rule, checked against the HTTP
//   answers and the business rows;
// - the webhook template whose business step calls an HTTP API (workflows/idempotent-http-call.json)
//   with a downstream Idempotency-Key derived from the event key, against a local API that records it.
// Run with `npm run test:e2e`; every test of this file also runs on n8n 1.123.81 with
// `npm run test:e2e:n8n1` (N8N_LINE=1).
import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import http from 'node:http';
import { after, before, test } from 'node:test';

import { sendEvent, startStack, withStackLogs } from '../../scripts/harness/index.mjs';
import { importableCopy } from '../../scripts/harness/templates.mjs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const {
	CLIENT_ERRORS,
	CLIENT_ERROR_DOCS,
	RETRY_LATER_ANSWERS,
} = require('../../dist/nodes/shared/keys/clientErrors');

const API = { path: 'workflows/idempotent-api.json', id: 'IdemApiTemplate01' };
// The template's Webhook node checks a JWT (JWT Auth, credential "API Clients (JWT)"): HS256 here.
const JWT_SECRET = 'e2e-api-clients-jwt-secret-0123456789abcdef';
const API_CLIENTS_JWT = {
	id: 'ApiClientsJwt0001',
	name: 'API Clients (JWT)',
	type: 'jwtAuth',
	data: { keyType: 'passphrase', secret: JWT_SECRET, algorithm: 'HS256' },
};

/** A compact HS256 JWT (RFC 7519) for `payload`, signed with `secret`. */
function jwt(payload, secret = JWT_SECRET) {
	const part = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
	const unsigned = `${part({ alg: 'HS256', typ: 'JWT' })}.${part(payload)}`;
	return `${unsigned}.${createHmac('sha256', secret).update(unsigned).digest('base64url')}`;
}

const issuedAt = Math.floor(Date.now() / 1000);
const ALICE = `Bearer ${jwt({ sub: 'alice', iat: issuedAt })}`;
const BOB = `Bearer ${jwt({ sub: 'bob', iat: issuedAt })}`;

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;
let api;
let httpCall;
/** What the local downstream API received: one entry per call. */
const downstreamCalls = [];
/** @type {http.Server} */
let downstream;

/** The HTTP-call template with its URL pointed at the local API; nothing else changed. */
function httpCallCopy(port) {
	const workflow = importableCopy('workflows/idempotent-http-call.json', 'IdemHttpCallTmpl1');
	const call = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.httpRequest');
	call.parameters.url = `http://127.0.0.1:${port}/v1/fulfilments`;
	return { workflow };
}

before(
	async () => {
		downstream = http.createServer((request, response) => {
			let body = '';
			request.on('data', (chunk) => (body += chunk));
			request.on('end', () => {
				downstreamCalls.push({ key: request.headers['idempotency-key'], body: JSON.parse(body) });
				response.writeHead(200, { 'content-type': 'application/json' });
				response.end(JSON.stringify({ id: `ful_${downstreamCalls.length}` }));
			});
		});
		await new Promise((resolve) => downstream.listen(0, '127.0.0.1', () => resolve(undefined)));
		const { port } = /** @type {import('node:net').AddressInfo} */ (downstream.address());
		stack = await startStack({
			label: 'api',
			extraWorkflows: [API, httpCallCopy(port)],
			extraCredentials: [API_CLIENTS_JWT],
		});
		[api, httpCall] = stack.extraWorkflows;
	},
	{ timeout: 60 * 60_000 },
);

after(
	async () => {
		await stack?.stop();
		downstream?.close();
	},
	{ timeout: 120_000 },
);

const withLogs = (fn) => withStackLogs(stack, fn);

/**
 * POSTs an order the way an API client does: JSON, its Authorization, and an Idempotency-Key
 * (`key` as given: quoted, bare, or undefined for none).
 * @param {object} order
 * @param {{ key?: string, authorization?: string }} [options]
 */
async function post(order, { key, authorization = ALICE } = {}) {
	const headers = {
		...(authorization === undefined ? {} : { authorization }),
		...(key === undefined ? {} : { 'idempotency-key': key }),
	};
	return await sendEvent(api.webhookUrl, order, { headers, sign: false, timeoutMs: 120_000 });
}

/** Business rows created for a client key value (under any scope). */
async function ordersFor(keyValue) {
	const { rows } = await stack.keysDb.query(
		`SELECT id, event_key FROM business_log WHERE event_key LIKE '%:idk:' || $1 ORDER BY id`,
		[keyValue],
	);
	return rows;
}

const isProblem = (response) =>
	/^application\/problem\+json/.test(response.headers['content-type'] ?? '');

test(
	'the draft, rule by rule: first 201; repeat = same status and bytes, replayed; other payload 422; no key 400; failure 500 then the retry runs; scopes apart',
	{ timeout: 300_000 },
	() =>
		withLogs(async () => {
			const rules = [];
			const record = (rule, response, expected) => {
				rules.push({ rule, got: `${response.status}`, expected });
				return response;
			};
			const k1 = randomUUID();

			const first = record(
				'first request',
				await post({ sku: 'A', qty: 1 }, { key: `"${k1}"` }),
				'201',
			);
			assert.equal(first.status, 201, first.text);
			const [row] = await ordersFor(k1);
			assert.deepEqual(first.json, { status: 'created', order: { id: Number(row.id) } });
			assert.equal(first.headers['idempotent-replayed'], undefined);

			const again = record(
				'same request again',
				await post({ sku: 'A', qty: 1 }, { key: `"${k1}"` }),
				'201',
			);
			assert.equal(again.status, 201);
			assert.equal(again.text, first.text, 'byte-identical body');
			assert.equal(again.headers['idempotent-replayed'], 'true');
			assert.equal(again.headers['content-type'], first.headers['content-type']);
			// The bare token form of the same key is the same key.
			const bare = record(
				'same key, bare token',
				await post({ sku: 'A', qty: 1 }, { key: k1 }),
				'201',
			);
			assert.deepEqual(
				[bare.status, bare.text, bare.headers['idempotent-replayed']],
				[201, first.text, 'true'],
			);
			assert.equal((await ordersFor(k1)).length, 1);

			const other = record(
				'same key, other body',
				await post({ sku: 'A', qty: 99 }, { key: `"${k1}"` }),
				'422',
			);
			assert.equal(other.status, 422, other.text);
			assert.ok(isProblem(other));
			assert.equal(other.json.status, 422);
			assert.deepEqual(
				[other.json.type, other.json.title],
				[`${CLIENT_ERROR_DOCS}#fingerprint-mismatch`, CLIENT_ERRORS['fingerprint-mismatch'].title],
			);
			assert.equal((await ordersFor(k1)).length, 1);

			const missing = record('no Idempotency-Key', await post({ sku: 'B' }), '400');
			assert.equal(missing.status, 400, missing.text);
			assert.ok(isProblem(missing));
			assert.match(missing.json.detail, /The Idempotency-Key header is missing/);
			const overlong = record(
				'overlong key',
				await post({ sku: 'B' }, { key: `"${'x'.repeat(300)}"` }),
				'400',
			);
			assert.equal(overlong.status, 400);
			assert.match(overlong.json.detail, /at most 255/);

			// A failing business step: Release, 500, nothing stored; the client's retry runs again.
			const k3 = randomUUID();
			await stack.keysDb.query(
				`ALTER TABLE business_log ADD CONSTRAINT api_fail CHECK (event_type <> 'order.created') NOT VALID`,
			);
			let failed;
			try {
				failed = record('business step fails', await post({ sku: 'C' }, { key: `"${k3}"` }), '500');
			} finally {
				await stack.keysDb.query(`ALTER TABLE business_log DROP CONSTRAINT api_fail`);
			}
			assert.equal(failed.status, 500, failed.text);
			assert.ok(isProblem(failed));
			const retried = record('its retry', await post({ sku: 'C' }, { key: `"${k3}"` }), '201');
			assert.equal(retried.status, 201, retried.text);
			assert.equal(retried.headers['idempotent-replayed'], undefined);
			assert.equal((await ordersFor(k3)).length, 1);

			// Two clients that happen to send the same key value: two orders, one each.
			const shared = randomUUID();
			const alice = record(
				'client A, key X',
				await post({ sku: 'D' }, { key: `"${shared}"` }),
				'201',
			);
			const bob = record(
				'client B, key X',
				await post({ sku: 'D' }, { key: `"${shared}"`, authorization: BOB }),
				'201',
			);
			assert.deepEqual([alice.status, bob.status], [201, 201]);
			assert.equal(bob.headers['idempotent-replayed'], undefined);
			assert.equal((await ordersFor(shared)).length, 2);

			process.stderr.write(
				`[api] ${rules.map((r) => `${r.rule}: ${r.got} (expected ${r.expected})`).join('; ')}\n`,
			);
			for (const r of rules) assert.equal(r.got, r.expected, r.rule);
		}),
);

// An Idempotency-Key the endpoint cannot use is the client's mistake: 400 problem+json of kind
// invalid-idempotency-key from the error output, and the order is never created. On n8n 1.x such an
// item once stayed on Reserve's `new` output (1.x moves an item to the error output by its json
// alone only when it has no `details`): the order step ran and the client got 201.
const CREATE_ORDER = 'Create Order (insert business_log)';
test(
	'an unusable Idempotency-Key header (missing, empty, overlong, malformed, two values) → 400 problem+json each, no order created, nothing reserved',
	{ timeout: 180_000 },
	() =>
		withLogs(async () => {
			const headersOf = (key) => ({
				authorization: ALICE,
				...(key === undefined ? {} : { 'idempotency-key': key }),
			});
			/** @type {Array<[string, string | undefined, RegExp]>} */
			const cases = [
				['missing', undefined, /header is missing/],
				['empty', '""', /header is empty/],
				['overlong', `"${'x'.repeat(300)}"`, /at most 255/],
				['an unclosed quote', '"abc', /quoted string is not closed/],
				['a bare key with a space', 'two words', /visible ASCII only/],
				[
					'two different values',
					`"${randomUUID()}", "${randomUUID()}"`,
					/2 times with different values/,
				],
			];
			const ordersBefore = (await stack.keysDb.query('SELECT count(*)::int AS n FROM business_log'))
				.rows[0].n;
			const keysBefore = await stack.keyRows();
			const outcomes = [];
			for (const [label, key, detail] of cases) {
				const { response, execution } = await stack.deliver(
					{ sku: 'G', qty: 1 },
					{ to: api, sign: false, headers: headersOf(key), timeoutMs: 120_000 },
				);
				outcomes.push([label, response.status, execution.nodesRun.includes(CREATE_ORDER)]);
				assert.equal(response.status, 400, `${label}: ${response.text}`);
				assert.ok(isProblem(response), `${label}: ${response.headers['content-type']}`);
				assert.equal(response.json.status, 400, label);
				assert.match(response.json.type, /#invalid-idempotency-key$/, label);
				assert.equal(response.json.title, 'The Idempotency-Key header is missing or malformed');
				assert.match(response.json.detail, detail, label);
				assert.equal(execution.status, 'success', label);
				// Reserve 2.2 answers it itself (Answer Problems): nothing runs after it.
				assert.equal(
					execution.nodesRun.at(-1),
					'Idempotency Reserve',
					execution.nodesRun.join(' → '),
				);
				assert.ok(!execution.nodesRun.includes(CREATE_ORDER), execution.nodesRun.join(' → '));
			}
			process.stderr.write(`[api] unusable Idempotency-Key: ${JSON.stringify(outcomes)}\n`);
			const ordersAfter = (await stack.keysDb.query('SELECT count(*)::int AS n FROM business_log'))
				.rows[0].n;
			assert.equal(ordersAfter, ordersBefore, 'business_log unchanged');
			assert.deepEqual(await stack.keyRows(), keysBefore, 'nothing reserved');
		}),
);

test(
	'keys are scoped by the caller n8n authenticated: no token or a forged one never reaches the workflow, a token without a subject is 401 problem+json',
	{ timeout: 180_000 },
	() =>
		withLogs(async () => {
			// Every row, finished or not: the previous test's last execution may still be finishing
			// after its answer, and would otherwise be counted only on the second read.
			const executions = async () =>
				(await stack.executions.list({ workflowId: api.id, finishedOnly: false })).length;
			const executionsBefore = await executions();
			const key = `"${randomUUID()}"`;
			// No token: n8n's Webhook node answers before any execution (no shared 'anonymous' scope).
			const anonymous = await sendEvent(
				api.webhookUrl,
				{ sku: 'F' },
				{
					headers: { 'idempotency-key': key },
					sign: false,
					timeoutMs: 60_000,
				},
			);
			assert.equal(anonymous.status, 401, anonymous.text);
			// A token signed with another secret, or a plain API key: refused the same way.
			const forged = await post(
				{ sku: 'F' },
				{
					key,
					authorization: `Bearer ${jwt({ sub: 'alice' }, 'not-the-secret')}`,
				},
			);
			assert.equal(forged.status, 403, forged.text);
			const apiKey = await post({ sku: 'F' }, { key, authorization: 'Bearer alice-token' });
			assert.equal(apiKey.status, 403, apiKey.text);
			assert.equal(await executions(), executionsBefore, 'none of them started an execution');
			// A valid token that names no caller: the template refuses it before Reserve.
			const nobody = await post({ sku: 'F' }, { key, authorization: `Bearer ${jwt({ iat: 1 })}` });
			assert.equal(nobody.status, 401, nobody.text);
			assert.ok(isProblem(nobody));
			assert.equal(nobody.json.status, 401);
			assert.match(nobody.json.detail, /"sub"/);
			assert.deepEqual(await ordersFor(key.slice(1, -1)), []);
			// The key table holds the subject, never the token or a hash of it.
			const ok = await post({ sku: 'F' }, { key });
			assert.equal(ok.status, 201, ok.text);
			const { rows } = await stack.keysDb.query(
				`SELECT key FROM processed_events WHERE key LIKE '%:idk:' || $1`,
				[key.slice(1, -1)],
			);
			assert.deepEqual(
				rows.map((row) => row.key),
				[`orders-alice:idk:${key.slice(1, -1)}`],
			);
		}),
);

test(
	'16 concurrent requests with one new key: one order; every answer 201 (one first, the rest replayed) or 409 with Retry-After',
	{ timeout: 300_000 },
	() =>
		withLogs(async () => {
			const key = randomUUID();
			const answers = await Promise.all(
				Array.from({ length: 16 }, () => post({ sku: 'E', qty: 1 }, { key: `"${key}"` })),
			);
			const summary = answers.map(
				(r) => `${r.status}${r.headers['idempotent-replayed'] ? ' replayed' : ''}`,
			);
			const firsts = answers.filter((r) => r.status === 201 && !r.headers['idempotent-replayed']);
			assert.equal(firsts.length, 1, `answers: ${summary}`);
			for (const r of answers) {
				assert.ok([201, 409].includes(r.status), `answers: ${summary}`);
				if (r.status === 201) assert.equal(r.text, firsts[0].text);
				if (r.status === 409) {
					assert.ok(isProblem(r));
					assert.deepEqual(
						[r.json.type, r.json.title, r.json.status],
						[`${CLIENT_ERROR_DOCS}#in-flight`, RETRY_LATER_ANSWERS['in-flight'].title, 409],
					);
					assert.ok(
						Number(r.headers['retry-after']) >= 1,
						`Retry-After ${r.headers['retry-after']}`,
					);
				}
			}
			assert.equal((await ordersFor(key)).length, 1);
			process.stderr.write(`[api] 16 concurrent: ${summary.join(', ')}\n`);
		}),
);

test(
	'a business step that calls an HTTP API passes the event key as its Idempotency-Key, once per event, with the attempt',
	{ timeout: 180_000 },
	() =>
		withLogs(async () => {
			const event = { id: `evt_http_${randomUUID().slice(0, 8)}`, type: 'order.paid' };
			const first = await stack.deliver(event, { to: httpCall });
			assert.deepEqual(
				[first.response.status, first.response.json?.status],
				[200, 'processed'],
				first.response.text,
			);
			const repeat = await stack.deliver(event, { to: httpCall });
			assert.deepEqual([repeat.response.status, repeat.response.json?.status], [200, 'duplicate']);
			const calls = downstreamCalls.filter((call) => call.body.event === event.id);
			assert.deepEqual(calls, [
				{ key: `evt:${event.id}`, body: { event: event.id, type: 'order.paid', attempt: 1 } },
			]);
		}),
);
