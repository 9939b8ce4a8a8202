// The built-in workflow reads a signed delivery as the package does (planner/builtIn/builtInCheckNodes.ts,
// builtInSignature.ts, builtInKey.ts), checked with n8n-workflow's own expression engine against the
// package's code: Sent as Signed? agrees with signedParse (webhook/signedParse.ts) on media types,
// charsets and JSON claimed as a form, and answers 415 problem+json otherwise; the digest node and the
// Key give the package's key (verifiedDelivery.ts, composeKey) for every provider the built-in path
// expresses, `<provider>:<id>` for presets; the signed URL is requestUrl.ts's, query included.
const { describe, test, expect } = require('@jest/globals');
const { createHash } = require('node:crypto');
const fc = require('fast-check');

const { builtIn, settings, node } = require('../support/builtInWorkflow');
const { expressionsOf } = require('../support/n8nExpressions');
const { PROVIDERS } = require('../../dist/nodes/shared/webhook/providers');
const { perAttemptPaths } = require('../../dist/nodes/shared/webhook/retryStableContent');
const {
	signedParse,
	isParseRefusal,
	formFields,
} = require('../../dist/nodes/shared/webhook/signedParse');
const { readVerifiedDelivery } = require('../../dist/nodes/shared/delivery/verifiedDelivery');
const { requestUrl, UNEXPRESSIBLE_QUERY } = require('../../dist/nodes/shared/webhook/requestUrl');
const { composeKey } = require('../../dist/nodes/shared/keys/composeKey');
const { keySourceDefinition } = require('../../dist/nodes/shared/keys/keySourceTable');
const { CLIENT_ERROR_DOCS } = require('../../dist/nodes/shared/keys/clientErrors');

const { builtInWorkflow } = builtIn;

/** @type {string[]} */
const EXPRESSIBLE = builtIn.BUILT_IN_SIGNATURES.filter((/** @type {any} */ s) => s.supported).map(
	(/** @type {any} */ s) => s.signature.provider,
);
const definitionOf = (/** @type {string} */ value) => PROVIDERS.find((p) => p.value === value);
const workflowOf = (/** @type {string} */ provider, changes = {}, options = {}) =>
	builtInWorkflow(settings({ keySource: provider, ...changes }), { provider, ...options });
const sha256 = (/** @type {string} */ text) => createHash('sha256').update(text).digest('hex');
/** @param {any} workflow @param {string} from */
const targets = (workflow, from) =>
	workflow.connections[from].main.map((/** @type {any[]} */ output) => output.map((c) => c.node));

/** Sent as Signed? for this Content-Type, body text and n8n's parse. */
function sentAsSigned(
	/** @type {any} */ workflow,
	/** @type {string|undefined} */ contentType,
	/** @type {string} */ text,
	/** @type {unknown} */ body,
) {
	const condition = node(workflow, 'Sent as Signed?').parameters.conditions.conditions[0];
	const headers = contentType === undefined ? {} : { 'content-type': contentType };
	return expressionsOf(workflow).evaluate('Sent as Signed?', condition.leftValue, {
		json: { headers, body, rawBody: text },
	});
}

/** What n8n makes of these bytes under this Content-Type (near enough: JSON, form, text, nothing). */
function n8nBody(/** @type {string|undefined} */ contentType, /** @type {string} */ text) {
	const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
	if (type === 'application/json') {
		try {
			return JSON.parse(text.replace(/^\uFEFF/, ''));
		} catch {
			return undefined;
		}
	}
	if (type === 'application/x-www-form-urlencoded') return formFields(text);
	if (type.startsWith('text/')) return text;
	return undefined;
}

describe('Sent as Signed?: after the signature, before anything is reserved, else 415', () => {
	test.each(EXPRESSIBLE)(
		'%s: Signature Valid? → Sent as Signed? → the digest, or Respond 415',
		(provider) => {
			for (const mode of ['lease', 'simple']) {
				const workflow = workflowOf(provider, { mode });
				const digest = workflow.nodes.find((/** @type {any} */ n) => / SHA-256$/.test(n.name)).name;
				expect(targets(workflow, 'Signature Valid?')[0]).toEqual(['Sent as Signed?']);
				// A sender's signed handshake is recognised first (builtInHandshake.test.js); its Switch's
				// last output, everything else, goes on to the digest.
				const handshake = builtIn.builtInHandshake(definitionOf(provider))?.answered;
				expect(targets(workflow, 'Sent as Signed?')).toEqual([
					[handshake ? 'Handshake?' : digest],
					['Respond 415 unsupported media type'],
				]);
				if (handshake) expect(targets(workflow, 'Handshake?').at(-1)).toEqual([digest]);
				expect(targets(workflow, digest)).toEqual([[mode === 'lease' ? 'Owner Token' : 'Key']]);
			}
		},
	);

	test('the 415 answer: application/problem+json, the unsupported-media-type kind', () => {
		const workflow = workflowOf('stripe');
		const respond = node(workflow, 'Respond 415 unsupported media type');
		expect(respond.parameters.options).toEqual({
			responseCode: 415,
			responseHeaders: { entries: [{ name: 'Content-Type', value: 'application/problem+json' }] },
		});
		const answer = JSON.parse(
			expressionsOf(workflow).evaluate(
				'Respond 415 unsupported media type',
				respond.parameters.responseBody,
				{ json: {} },
			),
		);
		expect(answer).toEqual({
			type: `${CLIENT_ERROR_DOCS}#unsupported-media-type`,
			title: 'The body is not sent the way its sender signs it',
			status: 415,
			detail: expect.stringContaining('Stripe sends application/json'),
		});
	});

	const STRIPE_BODY = '{"id":"evt_1","type":"payment_intent.succeeded"}';
	test.each([
		['application/json', STRIPE_BODY, true],
		['Application/JSON; charset="UTF-8"', STRIPE_BODY, true],
		['application/json; charset=utf8', STRIPE_BODY, true],
		['application/json; charset=latin1', STRIPE_BODY, false],
		['text/plain', STRIPE_BODY, false],
		[undefined, STRIPE_BODY, false],
		['', STRIPE_BODY, false],
		['application/x-www-form-urlencoded', STRIPE_BODY, false],
		['application/x-www-form-urlencoded', 'id=evt_1', false],
		['multipart/form-data; boundary=x', STRIPE_BODY, false],
		['application/json', 'not json', false],
	])('Stripe: %j %s → %s, as signedParse says', (contentType, text, passes) => {
		const body = n8nBody(contentType, text);
		expect(sentAsSigned(workflowOf('stripe'), contentType, text, body)).toBe(passes);
		const headers = contentType === undefined ? {} : { 'content-type': contentType };
		const parse = signedParse(Buffer.from(text), headers, body, ['application/json']);
		expect(!isParseRefusal(parse)).toBe(passes);
	});

	test('a JSON body n8n read otherwise is refused (the parse is compared with the signed bytes)', () => {
		expect(
			sentAsSigned(workflowOf('stripe'), 'application/json', STRIPE_BODY, { id: 'evt_2' }),
		).toBe(false);
	});

	test.each(EXPRESSIBLE)('%s: agrees with signedParse on any Content-Type and body', (provider) => {
		const { contentTypes } = /** @type {any} */ (definitionOf(provider));
		const workflow = workflowOf(provider);
		const contentType = fc.oneof(
			fc.constant(undefined),
			fc
				.tuple(
					fc.constantFrom(
						'application/json',
						'APPLICATION/Json',
						'application/x-www-form-urlencoded',
						'text/plain',
						'application/xml',
						'',
					),
					fc.constantFrom(
						'',
						'; charset=utf-8',
						'; charset="UTF8"',
						'; charset=iso-8859-1',
						';q=1',
					),
				)
				.map(([type, parameter]) => `${type}${parameter}`),
		);
		const text = fc.constantFrom(
			'{"id":"evt_1","event_id":"e1"}',
			'[{"eventId":1}]',
			'a=1&b=2',
			'id=evt_1',
			'"&id=evt_X&"',
			'',
			'\uFEFF{"id":"x"}',
		);
		fc.assert(
			fc.property(contentType, text, (type, body) => {
				const parsed = n8nBody(type, body);
				const headers = type === undefined ? {} : { 'content-type': type };
				const expected = !isParseRefusal(
					signedParse(Buffer.from(body), headers, parsed, contentTypes),
				);
				expect(sentAsSigned(workflow, type, body, parsed)).toBe(expected);
			}),
			{ numRuns: 120 },
		);
	});
});

/** A delivery of this provider, signed parts only (the signature itself is not checked here). */
function delivery(/** @type {any} */ _definition, /** @type {any} */ body, query = {}) {
	const text = JSON.stringify(body);
	const headers = {
		'content-type': 'application/json',
		'x-hubspot-request-timestamp': '1700000000000',
	};
	return {
		text,
		headers,
		body,
		query,
		webhookUrl: 'https://n8n.example/webhook/idempotent-webhook-builtin',
	};
}

/** The body each provider's id path and renewed fields apply to, with or without the id. */
function bodyFor(/** @type {any} */ definition, /** @type {boolean} */ withId, attempt = 1) {
	const renewed = perAttemptPaths(definition.signing, definition.retry?.renewedBodyFields);
	/** @type {any} */
	let body = { type: 'thing.happened', data: { n: 1, text: 'é "q" \u2028' } };
	const set = (
		/** @type {any} */ target,
		/** @type {readonly string[]} */ path,
		/** @type {unknown} */ value,
	) => {
		let at = target;
		for (const [index, step] of path.slice(0, -1).entries()) {
			const next = path[index + 1];
			const key = step === '*' ? 0 : step;
			if (at[key] === undefined) at[key] = /^\d+$|^\*$/.test(next) ? [] : {};
			at = at[key];
		}
		const last = path[path.length - 1];
		at[last === '*' ? 0 : last] = value;
	};
	const idPath = definition.eventId.kind === 'body' ? definition.eventId.path : undefined;
	if (idPath && /^\d+$/.test(idPath[0])) body = [{ ...body }];
	if (idPath && withId) set(body, idPath, 'evt_42');
	for (const path of renewed)
		set(
			body,
			path,
			path[path.length - 1] === 'webhookTimestamp' ? 1700000000000 + attempt : attempt,
		);
	return body;
}

describe('the key is the package key for the same signed delivery', () => {
	/** The Cloud workflow's key for a delivery, as n8n evaluates the digest node and the Key. */
	function cloudKey(/** @type {any} */ workflow, /** @type {any} */ d, headers = d.headers) {
		const { evaluate } = expressionsOf(workflow);
		const digestNode = workflow.nodes.find((/** @type {any} */ n) => / SHA-256$/.test(n.name));
		const webhook = { json: { headers, body: d.body, query: d.query, webhookUrl: d.webhookUrl } };
		const item = { json: { ...webhook.json, rawBody: d.text } };
		const hex = sha256(
			evaluate(digestNode.name, digestNode.parameters.value, item, { Webhook: webhook }),
		);
		const keyed = { json: { ...item.json, [digestNode.parameters.dataPropertyName]: hex } };
		const [key, problem] = node(workflow, 'Key').parameters.assignments.assignments.map(
			(/** @type {any} */ a) => evaluate('Key', a.value, keyed, { Webhook: webhook }),
		);
		expect(problem).toBe('');
		return key;
	}

	/** The package's key: its verified-delivery digest (verifiedDelivery.ts) and its preset's key rule. */
	function packageKey(
		/** @type {string} */ provider,
		/** @type {any} */ d,
		/** @type {boolean} */ withId,
	) {
		const definition = /** @type {any} */ (definitionOf(provider));
		const rules = {
			contentTypes: definition.contentTypes,
			description: definition.signing,
			renewed: perAttemptPaths(definition.signing, definition.retry?.renewedBodyFields),
		};
		const verified = /** @type {any} */ (
			readVerifiedDelivery(provider, definition.label, rules, {
				bytes: Buffer.from(d.text),
				headers: d.headers,
				url: requestUrl({ webhookUrl: d.webhookUrl, query: d.query }),
				n8nBody: d.body,
			})
		);
		const location = definition.eventId;
		if (withId && location.kind === 'body')
			return composeKey(
				{ kind: 'eventId', id: 'evt_42', scope: keySourceDefinition(provider).scope },
				'',
			);
		return verified.digest;
	}

	test.each(EXPRESSIBLE)('%s: with its event id and without', (provider) => {
		const definition = definitionOf(provider);
		const workflow = workflowOf(provider);
		for (const withId of [true, false]) {
			const d = delivery(definition, bodyFor(definition, withId), { a: 'b c', z: ['1', '~!'] });
			expect(cloudKey(workflow, d)).toBe(packageKey(provider, d, withId));
		}
	});

	test('presets key `<provider>:<id>`, Stripe keeps `evt:`', () => {
		const key = (/** @type {string} */ provider) =>
			cloudKey(
				workflowOf(provider),
				delivery(definitionOf(provider), bodyFor(definitionOf(provider), true)),
			);
		expect(key('stripe')).toBe('evt:evt_42');
		expect(key('paddle')).toBe('paddle:evt_42');
		expect(key('slack')).toBe('slack:evt_42');
		expect(key('hubSpot')).toBe('hubSpot:evt_42');
	});

	test("Linear: its own retry (new webhookTimestamp, same Linear-Delivery) keeps the key; it is signed:, not the body's SHA-256", () => {
		const definition = definitionOf('linear');
		const workflow = workflowOf('linear');
		const first = delivery(definition, bodyFor(definition, false, 1));
		const retry = delivery(definition, bodyFor(definition, false, 2));
		expect(retry.text).not.toBe(first.text);
		const key = cloudKey(workflow, first, { ...first.headers, 'linear-delivery': 'd-1' });
		expect(key).toMatch(/^signed:[0-9a-f]{64}$/);
		expect(cloudKey(workflow, retry, { ...retry.headers, 'linear-delivery': 'd-1' })).toBe(key);
		// A replay under a fresh Linear-Delivery: the same key.
		expect(cloudKey(workflow, first, { ...first.headers, 'linear-delivery': 'd-2' })).toBe(key);
		expect(key).not.toBe(`signed:${sha256(first.text)}`);
		// The guard off keys on the (unsigned) header, under Linear's key space.
		expect(
			cloudKey(workflowOf('linear', {}, { replayGuard: 'off' }), first, {
				'linear-delivery': 'd-1',
			}),
		).toBe('linear:d-1');
	});

	test('GitHub keeps sha256: of the raw body (its signed content is the body alone)', () => {
		const d = delivery(definitionOf('github'), { zen: 'hi' });
		expect(cloudKey(workflowOf('github'), d)).toBe(`sha256:${sha256(d.text)}`);
	});
});

describe('URL-signing schemes: the URL with its query, as requestUrl.ts writes it', () => {
	const { URL_EXPRESSION, QUERY_IS_TEXT } = require('../../dist/planner/builtIn.cjs');
	const workflow = workflowOf('square');
	const { evaluate } = expressionsOf(workflow);
	const webhookUrl = 'https://n8n.example/webhook/hook';
	const at = (/** @type {string} */ expression, /** @type {unknown} */ query) =>
		evaluate(
			'Signature HMAC',
			`={{ ${expression} }}`,
			{ json: {} },
			{ Webhook: { json: { webhookUrl, query } } },
		);

	test('exposed for the tests and used by Square and HubSpot', () => {
		expect(typeof URL_EXPRESSION).toBe('string');
		for (const provider of ['square', 'hubSpot']) {
			const hmac = node(workflowOf(provider), 'Signature HMAC').parameters.value;
			expect(hmac).toContain(URL_EXPRESSION);
			const conditions = node(workflowOf(provider), 'Signature Valid?').parameters.conditions
				.conditions;
			expect(conditions.map((/** @type {any} */ c) => c.id)).toContain('query-is-text');
		}
		expect(
			node(workflowOf('stripe'), 'Signature Valid?').parameters.conditions.conditions.map(
				(/** @type {any} */ c) => c.id,
			),
		).not.toContain('query-is-text');
	});

	test('any query of text values: the same URL; any other value: refused', () => {
		const value = fc.oneof(
			fc.string({ unit: 'binary', maxLength: 6 }),
			fc.constantFrom(" !'()*~-._&=+%?#/", 'é😀', ''),
		);
		const query = fc.dictionary(
			fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom('a b', '~', 'x[y]')),
			fc.oneof(
				value,
				fc.array(value, { maxLength: 3 }),
				fc.constant({ admin: 'true' }),
				fc.constant(1),
			),
			{ maxKeys: 4 },
		);
		fc.assert(
			fc.property(fc.option(query), (q) => {
				const expected = requestUrl({ webhookUrl, query: q });
				const isText = at(QUERY_IS_TEXT, q);
				expect(isText).toBe(expected !== UNEXPRESSIBLE_QUERY);
				if (isText) expect(at(URL_EXPRESSION, q)).toBe(expected);
			}),
			{ numRuns: 300 },
		);
	});
});

test('a provider that renews body fields and also posts forms is refused with the cause', () => {
	const linear = /** @type {any} */ (definitionOf('linear'));
	const support = builtIn.builtInSupport({
		...linear,
		contentTypes: ['application/json', 'application/x-www-form-urlencoded'],
	});
	expect(support.supported).toBe(false);
	expect(support.reason).toMatch(
		/renews fields inside its signed body on each retry and also posts forms/,
	);
});

test.each(EXPRESSIBLE)(
	'%s: every expression of the workflow is one whole {{ … }} for n8n',
	(provider) => {
		const { isOneWholeExpression, storedExpressions } = require('../support/n8nExpressions');
		for (const mode of ['lease', 'simple'])
			for (const { at, text } of storedExpressions(workflowOf(provider, { mode })))
				expect([at, isOneWholeExpression(text)]).toEqual([at, true]);
	},
);
