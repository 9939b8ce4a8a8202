// End-to-end: Reserve takes a verified delivery only as its sender signed it (commit e6afce8,
// nodes/shared/webhook/signedParse.ts and retryStableContent.ts), in a real n8n 2.41.1 server.
// n8n picks its body parser from the Content-Type, which no sender signs: the same signed bytes
// replayed under another media type are answered 415 (problem+json, unsupported-media-type) and
// reserve nothing, so neither a second key nor a key chosen through form fields can come of them.
// The replay guard keys Twilio and Linear (whose id headers are unsigned) on a digest of the signed
// content, so re-encodings of one Twilio form and Linear's own retry (a fresh webhookTimestamp
// inside the signed body) are duplicates. One stack for the file: the shipped template (Stripe),
// and copies of it switched to Twilio and to Linear, each with its own path and credential.
//
// What n8n 2.41.1 makes of an application/x-www-form-urlencoded body (seen here, last test): its
// body parser (dist/middlewares/body-parser.js) is Node's `querystring.parse(text, '&', '=',
// { maxKeys: 1000 })`, so `$json.body` is flat: `a=1&a=2` gives `{ a: ['1', '2'] }` (a repeated
// name is an array, in order), `b[c]=3` gives `{ 'b[c]': '3' }`, `d.e=4` gives `{ 'd.e': '4' }`,
// `f[]=5&f[]=6` gives `{ 'f[]': ['5', '6'] }`, names and values percent- and `+`-decoded, empty
// pieces (`&&`) skipped. That is the package's formFields (URLSearchParams, a repeated name an
// array), so honest Twilio forms with such names are processed, not refused.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';

import {
	BUSINESS_STEP,
	RESERVE,
	RESERVE_OUTPUTS,
	startStack,
	withStackLogs,
} from '../../scripts/harness/index.mjs';
import { importableCopy, WEBHOOK_TEMPLATE } from '../../scripts/harness/templates.mjs';

const require = createRequire(import.meta.url);
const { signAs } = require('../support/signAs.js');
const { PROVIDERS } = require('../../dist/nodes/shared/webhook/providers');

const providerOf = (/** @type {string} */ value) => {
	const provider = PROVIDERS.find((/** @type {any} */ p) => p.value === value);
	assert.ok(provider, `${value} is in the provider table`);
	return provider;
};
const TWILIO = providerOf('twilio');
const LINEAR = providerOf('linear');

const FORM = 'application/x-www-form-urlencoded';

/** A provider's copy of the template: its own credential (by id: the stack has several of the type). */
const COPIES = [
	{ provider: TWILIO, id: 'IdemBytesTwilio00', secret: 'e2e-twilio-auth-token-0123456789' },
	{ provider: LINEAR, id: 'IdemBytesLinear00', secret: 'e2e-linear-webhook-secret' },
].map((copy) => ({
	...copy,
	credential: {
		id: `WhSig${copy.id}`,
		name: `Webhook Signing Secret (${copy.provider.label}, bytes e2e)`,
	},
}));

/** The template switched to one provider, as a user switches it, on its own path and credential. */
function providerCopy(/** @type {(typeof COPIES)[number]} */ copy) {
	const workflow = importableCopy(WEBHOOK_TEMPLATE, copy.id);
	workflow.name = `${workflow.name} (${copy.provider.label}, signed bytes e2e)`;
	for (const node of workflow.nodes) {
		if (node.type === 'n8n-nodes-base.webhook') {
			node.parameters = {
				...node.parameters,
				path: `idempotent-webhook-bytes-${copy.provider.value.toLowerCase()}`,
			};
			node.webhookId = randomUUID();
		}
		if (node.name === RESERVE) {
			node.parameters = {
				...node.parameters,
				signature: copy.provider.value,
				keySource: copy.provider.value,
			};
			node.credentials = { ...node.credentials, webhookSigningSecretApi: copy.credential };
		}
	}
	return workflow;
}

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;
/** The published copies: { id, webhookUrl }. */
let twilio;
let linear;

const withN8nLog = (/** @type {() => Promise<void>} */ fn) => withStackLogs(stack, fn);

before(
	async () => {
		stack = await startStack({
			label: 'e2e_bytes',
			extraWorkflows: COPIES.map((copy) => ({ workflow: providerCopy(copy) })),
			extraCredentials: COPIES.map((copy) => ({
				...copy.credential,
				type: 'webhookSigningSecretApi',
				data: { secret: copy.secret, previousSecret: '' },
			})),
		});
		[twilio, linear] = stack.extraWorkflows;
	},
	{ timeout: 30 * 60_000 },
);

after(
	async () => {
		await stack?.stop();
	},
	{ timeout: 120_000 },
);

/** Checks an answer is the template's 415 problem+json for unsupported-media-type. */
function assert415(/** @type {any} */ delivered, /** @type {string} */ what) {
	const { response, execution } = delivered;
	assert.equal(response.status, 415, `${what}: ${response.text}`);
	assert.match(response.headers['content-type'] ?? '', /^application\/problem\+json/, what);
	assert.equal(response.json?.status, 415, what);
	assert.match(response.json?.type ?? '', /#unsupported-media-type$/, what);
	assert.deepEqual(
		execution.nodesRun,
		// Reserve 2.2 answers it itself (Answer Problems): nothing runs after it.
		['Webhook', RESERVE],
		what,
	);
	assert.ok(!execution.nodesRun.includes(BUSINESS_STEP), `${what}: business step not run`);
}

test(
	'Stripe: one signed delivery replayed as text/plain, without Content-Type, as a form and as octet-stream → 415 each, one key, one business row',
	{ timeout: 180_000 },
	() =>
		withN8nLog(async () => {
			const event = { id: `evt_ct_${randomUUID().slice(0, 8)}`, type: 'payment_intent.succeeded' };
			const key = `evt:${event.id}`;
			const bytes = Buffer.from(JSON.stringify(event));
			const signature = stack.stripeSignature(bytes);
			const headers = { 'stripe-signature': signature };
			const keysBefore = (await stack.keyRows()).length;
			const businessBefore = (await stack.businessRows()).length;

			const genuine = await stack.deliver(bytes, { headers });
			assert.equal(genuine.response.status, 200, genuine.response.text);
			assert.deepEqual(genuine.response.json, { status: 'processed' });

			for (const contentType of ['text/plain', undefined, FORM, 'application/octet-stream']) {
				const what = `replayed with Content-Type ${contentType ?? '(none)'}`;
				const replay = await stack.deliver(bytes, { headers, contentType: contentType ?? '' });
				assert.equal(
					replay.execution.trigger.headers['content-type'],
					contentType,
					`${what}: sent as said`,
				);
				assert415(replay, what);
			}
			assert.deepEqual(
				(await stack.keyRows()).map((row) => row.key).filter((k) => k.includes(event.id)),
				[key],
			);
			assert.equal((await stack.keyRows()).length, keysBefore + 1, 'one key in all');
			assert.equal((await stack.keyRows(key)).length, 1);
			assert.equal((await stack.businessRows()).length, businessBefore + 1, 'one business row');
			assert.deepEqual(
				(await stack.businessRows(key)).map((row) => [row.event_key, row.event_type]),
				[[key, event.type]],
			);
		}),
);

test(
	'Stripe: a signed JSON string holding `&id=evt_X&` replayed as a form → 415, nothing reserved; the real evt_X is processed under evt:evt_X',
	{ timeout: 180_000 },
	() =>
		withN8nLog(async () => {
			const target = `evt_target_${randomUUID().slice(0, 8)}`;
			const carrier = {
				id: `evt_carrier_${randomUUID().slice(0, 8)}`,
				type: 'customer.updated',
				description: `&id=${target}&`,
			};
			const bytes = Buffer.from(JSON.stringify(carrier));
			const keysBefore = await stack.keyRows();
			const businessBefore = await stack.businessRows();

			const injected = await stack.deliver(bytes, {
				contentType: FORM,
				headers: { 'stripe-signature': stack.stripeSignature(bytes) },
			});
			// What n8n made of it: the field the attacker placed in a JSON string.
			assert.equal(injected.execution.trigger.body.id, target);
			assert415(injected, 'JSON bytes sent as a form');
			assert.deepEqual(await stack.keyRows(), keysBefore, 'nothing reserved');
			assert.deepEqual(await stack.businessRows(), businessBefore, 'no business row');
			assert.deepEqual(await stack.keyRows(`evt:${target}`), []);
			assert.deepEqual(await stack.keyRows(`evt:${carrier.id}`), []);

			const real = await stack.deliver({ id: target, type: 'payment_intent.succeeded' });
			assert.equal(real.response.status, 200, real.response.text);
			assert.deepEqual(real.response.json, { status: 'processed' });
			assert.equal(
				real.execution.items(RESERVE, RESERVE_OUTPUTS.new)[0].idempotency.key,
				`evt:${target}`,
			);
			assert.equal((await stack.keyRows(`evt:${target}`)).length, 1);
			assert.deepEqual(
				(await stack.businessRows(`evt:${target}`)).map((row) => row.event_type),
				['payment_intent.succeeded'],
			);
			assert.equal((await stack.businessRows()).length, businessBefore.length + 1);
		}),
);

/** Twilio's form of one message, re-encoded: the same decoded fields, so the same signature. */
const REENCODINGS = {
	'fields reordered': (/** @type {string} */ form) => form.split('&').reverse().join('&'),
	'`+` as `%20`': (/** @type {string} */ form) => form.replaceAll('+', '%20'),
	'a letter percent-encoded (%6F)': (/** @type {string} */ form) =>
		form.replace('Body=Hello', 'Body=Hell%6F'),
	'a name percent-encoded (%41ccountSid)': (/** @type {string} */ form) =>
		form.replace(/^AccountSid=/, '%41ccountSid='),
	'an extra `&`': (/** @type {string} */ form) => form.replace('&', '&&'),
};

test(
	'Twilio: one signed message, then resent four more ways under fresh idempotency tokens → one business row, the rest 200 duplicate',
	{ timeout: 180_000 },
	() =>
		withN8nLog(async () => {
			const [copy] = COPIES;
			// Twilio signs the URL it was given, query included; the template rebuilds it from WEBHOOK_URL
			// and $json.query.
			const to = { ...twilio, webhookUrl: `${twilio.webhookUrl}?site=e2e` };
			const hex = () => randomBytes(16).toString('hex');
			const signed = signAs(TWILIO, {
				body: {
					AccountSid: `AC${hex()}`,
					MessageSid: `SM${hex()}`,
					From: '+15005550006',
					To: '+15005550001',
					Body: 'Hello from the e2e suite, ok?',
					ApiVersion: '2010-04-01',
				},
				secret: copy.secret,
				url: to.webhookUrl,
			});
			assert.equal(signed.headers['content-type'], FORM, 'signAs posts Twilio as a form');
			const form = signed.body.toString();
			assert.match(form, /^AccountSid=AC[0-9a-f]{32}&/);
			assert.match(form, /Body=Hello\+from/);
			const businessBefore = (await stack.businessRows()).length;
			const keysBefore = (await stack.keyRows()).length;
			const send = async (/** @type {string} */ body) =>
				await stack.deliver(Buffer.from(body), {
					to,
					sign: false,
					headers: { ...signed.headers, 'i-twilio-idempotency-token': randomUUID() },
				});

			const first = await send(form);
			assert.equal(first.response.status, 200, first.response.text);
			assert.deepEqual(first.response.json, { status: 'processed' });
			const { idempotency } = first.execution.items(RESERVE, RESERVE_OUTPUTS.new)[0];
			assert.equal(idempotency.keyFrom, 'signedContent');
			assert.match(idempotency.key, /^signed:[0-9a-f]{64}$/);
			const { key } = idempotency;

			const answers = [];
			for (const [way, reencode] of Object.entries(REENCODINGS)) {
				const body = reencode(form);
				assert.notEqual(body, form, `${way} changes the bytes`);
				const resent = await send(body);
				answers.push([way, resent.response.status, resent.response.json]);
				assert.ok(
					!resent.execution.nodesRun.includes(BUSINESS_STEP),
					`${way}: business step not run`,
				);
			}
			assert.deepEqual(
				answers,
				Object.keys(REENCODINGS).map((way) => [way, 200, { status: 'duplicate', key }]),
			);
			assert.equal((await stack.businessRows(key)).length, 1, 'one business row');
			assert.equal((await stack.businessRows()).length, businessBefore + 1);
			assert.equal((await stack.keyRows(key)).length, 1, 'one key row');
			assert.equal((await stack.keyRows()).length, keysBefore + 1);
		}),
);

test(
	'Linear: its own retry (same Linear-Delivery, fresh webhookTimestamp, signed anew) → 200 duplicate, one business row',
	{ timeout: 180_000 },
	() =>
		withN8nLog(async () => {
			const [, copy] = COPIES;
			const delivery = randomUUID();
			const body = {
				action: 'create',
				type: 'Issue',
				data: { id: randomUUID(), title: 'e2e: signed bytes' },
				organizationId: randomUUID(),
			};
			const now = Math.floor(Date.now() / 1000);
			const attempt = (/** @type {number} */ nowSeconds) =>
				signAs(LINEAR, { body, secret: copy.secret, eventId: delivery, nowSeconds });
			const firstAttempt = attempt(now - 20);
			const retryAttempt = attempt(now);
			assert.equal(firstAttempt.headers['linear-delivery'], delivery);
			assert.equal(retryAttempt.headers['linear-delivery'], delivery);
			assert.notEqual(
				firstAttempt.headers['linear-signature'],
				retryAttempt.headers['linear-signature'],
			);
			assert.equal(JSON.parse(retryAttempt.body.toString()).webhookTimestamp, now * 1000);
			const businessBefore = (await stack.businessRows()).length;
			const send = async (/** @type {{ body: Buffer, headers: Record<string, string> }} */ d) =>
				await stack.deliver(d.body, { to: linear, sign: false, headers: d.headers });

			const first = await send(firstAttempt);
			assert.equal(first.response.status, 200, first.response.text);
			assert.deepEqual(first.response.json, { status: 'processed' });
			const { idempotency } = first.execution.items(RESERVE, RESERVE_OUTPUTS.new)[0];
			assert.equal(idempotency.keyFrom, 'signedContent');
			assert.match(idempotency.key, /^signed:[0-9a-f]{64}$/);

			const retry = await send(retryAttempt);
			assert.equal(retry.response.status, 200, retry.response.text);
			assert.deepEqual(retry.response.json, { status: 'duplicate', key: idempotency.key });
			assert.ok(!retry.execution.nodesRun.includes(BUSINESS_STEP));
			assert.equal((await stack.businessRows(idempotency.key)).length, 1);
			assert.equal((await stack.businessRows()).length, businessBefore + 1);
			assert.equal((await stack.keyRows(idempotency.key)).length, 1);
			assert.deepEqual(await stack.keyRows(`linear:${delivery}`), []);
		}),
);

test(
	'what n8n makes of a form body: flat querystring fields; an honest Twilio form with such names is processed',
	{ timeout: 180_000 },
	() =>
		withN8nLog(async () => {
			const [copy] = COPIES;
			const businessBefore = (await stack.businessRows()).length;
			const keysBefore = (await stack.keyRows()).length;
			// Unsigned: refused 401 before anything is read, but n8n records the body it parsed.
			const probe = await stack.deliver(Buffer.from('a=1&a=2&b[c]=3&d.e=4&f[]=5&f[]=6&g=x+y%21'), {
				to: twilio,
				sign: false,
				contentType: FORM,
			});
			process.stderr.write(
				`[e2e_bytes] n8n's $json.body for a form: ${JSON.stringify(probe.execution.trigger.body)}\n`,
			);
			assert.equal(probe.response.status, 401, probe.response.text);
			assert.deepEqual(
				{ ...probe.execution.trigger.body },
				{ a: ['1', '2'], 'b[c]': '3', 'd.e': '4', 'f[]': ['5', '6'], g: 'x y!' },
			);

			// Signed, with a repeated name, a bracketed name and a dotted name: taken as signed.
			const signed = signAs(TWILIO, {
				body: {
					AccountSid: `AC${randomBytes(16).toString('hex')}`,
					MediaUrl: ['https://example.com/1.png', 'https://example.com/2.png'],
					'Body[x]': 'bracketed',
					'Some.Name': 'dotted',
				},
				secret: copy.secret,
				url: twilio.webhookUrl,
			});
			const honest = await stack.deliver(signed.body, {
				to: twilio,
				sign: false,
				headers: signed.headers,
			});
			process.stderr.write(
				`[e2e_bytes] signed Twilio form ${signed.body.toString()} → ${honest.response.status} ${honest.response.text}; $json.body ${JSON.stringify(honest.execution.trigger.body)}\n`,
			);
			assert.equal(honest.response.status, 200, honest.response.text);
			assert.deepEqual(honest.response.json, { status: 'processed' });
			assert.deepEqual(honest.execution.trigger.body.MediaUrl, [
				'https://example.com/1.png',
				'https://example.com/2.png',
			]);
			assert.equal((await stack.businessRows()).length, businessBefore + 1);
			assert.equal((await stack.keyRows()).length, keysBefore + 1);
		}),
);
