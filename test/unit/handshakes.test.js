// Handshakes as data (nodes/shared/webhook/handshakeTypes.ts): each kind recognised and answered by
// handshakes.ts alone, whatever provider carries it. A made-up provider with a handshake is one
// table entry: it is recognised, answered and gets its "Connecting" cell in docs/signatures.md's table.
// Through the engine, with the real providers: test/integration/handshakes.test.js.
const { describe, test, expect } = require('@jest/globals');
const { createHmac } = require('node:crypto');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { PROVIDERS, isVerifiable } = require('../../dist/nodes/shared/webhook/providers');
const {
	answerHandshake,
	describeHandshake,
	isHandshake,
} = require('../../dist/nodes/shared/webhook/handshakes');
const { ECHO_MAX_LENGTH } = require('../../dist/nodes/shared/webhook/handshakeTypes');
const { SIGNED_EXAMPLES, UNSIGNED_EXAMPLES } = require('../support/handshakeExamples');

/** @typedef {import('../../dist/nodes/shared/webhook/providers').ProviderDefinition} ProviderDefinition */

// A made-up sender whose handshake no real entry has: a header names it, the body's nested token is
// echoed as text with 202.
/** @type {ProviderDefinition} */
const ECHO = {
	value: 'echoHooks',
	label: 'Echo Hooks',
	eventId: { kind: 'body', path: ['id'] },
	signing: {
		algorithm: 'sha256',
		encoding: 'hex',
		secret: 'text',
		signatureHeaders: ['X-Echo-Signature'],
		signature: { format: 'whole' },
		signs: '{body}',
	},
	contentTypes: ['application/json'],
	retries: 'None',
	handshake: {
		name: 'echo check',
		match: [{ on: 'header', name: 'X-Echo-Type', equals: 'check' }],
		signed: true,
		answer: { kind: 'echoBodyField', path: ['check', 'token'], as: 'text' },
		statusCode: 202,
	},
	timeout: { unknown: 'a made-up sender' },
	docs: 'https://echo.example/webhooks',
};

const request = (parts) => ({ headers: {}, query: {}, body: {}, bodiless: false, ...parts });
const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';
const NOSNIFF = { 'x-content-type-options': 'nosniff' };
/** What every echo's Connecting line says of it (handshakes.ts `echoed`). */
const ECHO_RULE = `; the echo up to ${ECHO_MAX_LENGTH} characters (else 400), nosniff`;

describe('a made-up provider with a handshake is one entry', () => {
	const handshake = /** @type {any} */ (ECHO.handshake);

	test('recognised by its header (any case), answered with its own status and kind', () => {
		const check = request({
			headers: { 'x-echo-type': 'check' },
			body: { check: { token: 'abc' } },
		});
		expect(isHandshake(handshake, check)).toBe(true);
		expect(answerHandshake(handshake, check, {})).toEqual({
			answer: { statusCode: 202, headers: { 'content-type': TEXT_TYPE, ...NOSNIFF }, body: 'abc' },
		});
		expect(isHandshake(handshake, request({ headers: { 'x-echo-type': 'event' } }))).toBe(false);
		expect(isHandshake(handshake, request({}))).toBe(false);
	});

	test('a handshake without the value to echo: 400, said why', () => {
		const check = request({ headers: { 'X-Echo-Type': 'check' }, body: { check: {} } });
		expect(answerHandshake(handshake, check, {})).toEqual({
			answer: {
				statusCode: 400,
				headers: { 'content-type': TEXT_TYPE },
				body: 'echo check carries no body check.token',
			},
			refused: 'echo check carries no body check.token',
		});
	});

	test(`its echo is capped at ${ECHO_MAX_LENGTH} characters: longer, 400 and never reflected`, () => {
		const check = (token) =>
			answerHandshake(
				handshake,
				request({ headers: { 'x-echo-type': 'check' }, body: { check: { token } } }),
				{},
			);
		expect(check('a'.repeat(ECHO_MAX_LENGTH)).answer.statusCode).toBe(202);
		const long = check('a'.repeat(ECHO_MAX_LENGTH + 1));
		expect(long.answer).toEqual({
			statusCode: 400,
			headers: { 'content-type': TEXT_TYPE, ...NOSNIFF },
			body: `body check.token is longer than ${ECHO_MAX_LENGTH} characters`,
		});
	});

	test("it gets its Connecting cell in docs/signatures.md's table; a sender without one says so", async () => {
		const { signaturesTable } = await import(
			pathToFileURL(path.join(__dirname, '..', '..', 'scripts', 'docs-signatures.mjs')).href
		);
		const rows = signaturesTable([...PROVIDERS, ECHO]).split('\n');
		expect(rows[0]).toMatch(/\| Connecting \(the handshake Reserve and Verify answer\) \|$/);
		const echoRow = rows.find((row) => row.startsWith('| [Echo Hooks]'));
		expect(echoRow).toMatch(
			/\| `echo check` \(`X-Echo-Type`: `check`; signed\) → 202 text: body `check\.token`; the echo up to 256 characters \(else 400\), nosniff \|$/,
		);
		const stripeRow = rows.find((row) => row.startsWith('| [Stripe]'));
		expect(stripeRow).toMatch(/\| no handshake \|$/);
	});

	test('its built-in-nodes workflow answers it too, and docs/cloud.md says so', async () => {
		const builtIn = require('../../dist/planner/builtIn.cjs');
		expect(builtIn.builtInHandshake(ECHO)).toEqual({
			answered: true,
			name: 'echo check',
			handshake: ECHO.handshake,
		});
		const { providersTable } = await import(
			pathToFileURL(path.join(__dirname, '..', '..', 'scripts', 'cloud-workflows.mjs')).href
		);
		const table = providersTable(
			{
				BUILT_IN_SIGNATURES: [...PROVIDERS, ECHO].map(builtIn.builtInSupport),
				builtInHandshake: builtIn.builtInHandshake,
				seeDuplicate: builtIn.seeDuplicate,
			},
			[...PROVIDERS, ECHO],
		);
		expect(table.split('\n').find((row) => row.startsWith('| Echo Hooks ('))).toMatch(
			/^\| Echo Hooks \(`\w+`\) \| yes \| answered \(echo check\) \| /,
		);
	});
});

describe('an unconditional query echo (echoQuery): only a bodiless GET, only as text nobody sniffs', () => {
	// A made-up sender that checks its URL with a GET `?probe=…` and expects it back, as Dropbox does.
	/** @type {any} */
	const PROBE = {
		name: 'probe',
		match: [{ on: 'query', method: 'GET', parameter: 'probe' }],
		signed: false,
		answer: { kind: 'echoQuery', parameter: 'probe' },
	};
	const REFLECTED = {
		'content-type': TEXT_TYPE,
		'x-content-type-options': 'nosniff',
	};
	const get = (query) => request({ query, bodiless: true });

	test('recognised by the parameter present on a request without a body', () => {
		expect(isHandshake(PROBE, get({ probe: 'abc123' }))).toBe(true);
		expect(isHandshake(PROBE, get({ probe: '' }))).toBe(false);
		expect(isHandshake(PROBE, get({}))).toBe(false);
		// A repeated parameter is no one value; a POST with a body and the same query is a delivery.
		expect(isHandshake(PROBE, get({ probe: ['a', 'b'] }))).toBe(false);
		expect(isHandshake(PROBE, request({ query: { probe: 'abc123' }, bodiless: false }))).toBe(
			false,
		);
	});

	test('a body forbids it whatever the match says: an echo never answers a delivery', () => {
		const loose = { ...PROBE, match: [{ on: 'header', name: 'X-Probe', equals: '1' }] };
		const headers = { 'x-probe': '1' };
		expect(isHandshake(loose, request({ headers, query: { probe: 'x' }, bodiless: true }))).toBe(
			true,
		);
		expect(isHandshake(loose, request({ headers, query: { probe: 'x' }, bodiless: false }))).toBe(
			false,
		);
		expect(
			answerHandshake(loose, request({ headers, query: { probe: 'x' }, bodiless: false }), {}),
		).toEqual(expect.objectContaining({ refused: 'probe carries no probe' }));
	});

	test('answered as text/plain with nosniff, whatever the value holds, with no secret', () => {
		const markup = '<script>alert(1)</script>';
		expect(answerHandshake(PROBE, get({ probe: markup }), {})).toEqual({
			answer: { statusCode: 200, headers: REFLECTED, body: markup },
		});
	});

	test(`at most ${ECHO_MAX_LENGTH} characters: a longer value is refused with 400, not echoed`, () => {
		const longest = 'a'.repeat(ECHO_MAX_LENGTH);
		expect(answerHandshake(PROBE, get({ probe: longest }), {}).answer.body).toBe(longest);
		const outcome = answerHandshake(PROBE, get({ probe: `${longest}a` }), {});
		expect(outcome.answer.statusCode).toBe(400);
		expect(outcome.answer.headers).toEqual(REFLECTED);
		expect(outcome.answer.body).not.toContain(longest);
		expect(outcome.refused).toBe(`probe is longer than ${ECHO_MAX_LENGTH} characters`);
	});

	test('its Connecting line', () => {
		expect(describeHandshake(PROBE)).toBe(
			`\`probe\` (GET with \`probe\`; unsigned) → 200 text: \`probe\`${ECHO_RULE}`,
		);
	});
});

describe('the real table', () => {
	test('handshakes belong to verifiable senders; an unsigned one checks a verify token or only echoes a GET', () => {
		const withHandshake = /** @type {any[]} */ ([...PROVIDERS]).filter((p) => p.handshake);
		// Every sender with a documented handshake example keeps its handshake in the table.
		expect(withHandshake.map(({ value }) => value).sort()).toEqual(
			[...Object.keys(SIGNED_EXAMPLES), ...Object.keys(UNSIGNED_EXAMPLES)].sort(),
		);
		for (const provider of withHandshake) {
			expect([provider.value, isVerifiable(provider)]).toEqual([provider.value, true]);
			// An unsigned handshake must prove its sender some other way (a verify token), or answer
			// what proves nothing and starts nothing: the echo of a bodiless GET.
			// An echo of a header (Okta) only once the sender's shared secret holds.
			if (!provider.handshake.signed && provider.handshake.authenticated === undefined)
				expect(['echoQueryWithVerifyToken', 'echoQuery']).toContain(provider.handshake.answer.kind);
			if (provider.handshake.authenticated === 'sharedSecret')
				expect([provider.value, 'sharedSecret' in provider.signing]).toEqual([
					provider.value,
					true,
				]);
			// The echo without a check is never for a signed sender's delivery: unsigned only.
			if (provider.handshake.answer.kind === 'echoQuery')
				expect([provider.value, provider.handshake.signed]).toEqual([provider.value, false]);
		}
	});

	const byValue = (value) =>
		/** @type {any} */ (/** @type {any[]} */ ([...PROVIDERS]).find((p) => p.value === value))
			.handshake;

	test('Zoom: the token and its HMAC-SHA256 hex with the secret, as JSON', () => {
		const zoom = byValue('zoom');
		const body = { event: 'endpoint.url_validation', payload: { plainToken: 'tok' } };
		const secret = Buffer.from('zoom secret token');
		const { answer } = answerHandshake(zoom, request({ body }), { secret });
		expect(answer).toEqual({
			statusCode: 200,
			headers: { 'content-type': JSON_TYPE, ...NOSNIFF },
			body: `{"plainToken":"tok","encryptedToken":"${createHmac('sha256', secret).update('tok').digest('hex')}"}`,
		});
		// Not the handshake: another event, or the same field as text instead of the string.
		expect(isHandshake(zoom, request({ body: { event: 'meeting.started' } }))).toBe(false);
	});

	test('Discord: type 1 only as the number', () => {
		const discord = byValue('discord');
		expect(isHandshake(discord, request({ body: { type: 1 } }))).toBe(true);
		expect(isHandshake(discord, request({ body: { type: '1' } }))).toBe(false);
		expect(isHandshake(discord, request({ body: { type: 2 } }))).toBe(false);
		// A Webhook Event (its EVENT is 1 too) sent to the Interactions entry is no PING.
		const event = { version: 1, type: 1, event: { type: 'APPLICATION_AUTHORIZED' } };
		expect(isHandshake(discord, request({ body: event }))).toBe(false);
		expect(describeHandshake(discord)).toBe(
			'`PING` (body `type` = `1` and no body `event`; signed) → 200 JSON `{"type":1}`',
		);
	});

	test('GitHub: the ping header and a ping body, both', () => {
		const github = byValue('github');
		const headers = { 'X-GitHub-Event': 'ping' };
		expect(isHandshake(github, request({ headers, body: { zen: 'z', hook_id: 1 } }))).toBe(true);
		expect(isHandshake(github, request({ headers, body: { ref: 'refs/heads/main' } }))).toBe(false);
		expect(isHandshake(github, request({ body: { zen: 'z' } }))).toBe(false);
	});

	describe("Meta's GET", () => {
		const meta = byValue('whatsApp');
		const query = { 'hub.mode': 'subscribe', 'hub.challenge': '42', 'hub.verify_token': 'tok' };

		test('only a request without a body; the query flat or nested', () => {
			expect(isHandshake(meta, request({ query, bodiless: true }))).toBe(true);
			expect(isHandshake(meta, request({ query, bodiless: false }))).toBe(false);
			const nested = { hub: { mode: 'subscribe', challenge: '42', verify_token: 'tok' } };
			const get = request({ query: nested, bodiless: true });
			expect(isHandshake(meta, get)).toBe(true);
			expect(answerHandshake(meta, get, { verifyToken: 'tok' }).answer.body).toBe('42');
			// A repeated parameter is no one value.
			const twice = request({
				query: { ...query, 'hub.mode': ['subscribe', 'x'] },
				bodiless: true,
			});
			expect(isHandshake(meta, twice)).toBe(false);
		});

		test.each([
			['the right token', 'tok', 'tok', 200, '42'],
			['a longer token', 'tok', 'tokk', 403, 'Forbidden'],
			['a shorter token', 'tok', 'to', 403, 'Forbidden'],
			['an empty Verify Token, an empty token sent', '', '', 403, 'Forbidden'],
		])('%s → %s', (_case, verifyToken, sent, status, body) => {
			const get = request({ query: { ...query, 'hub.verify_token': sent }, bodiless: true });
			const { answer } = answerHandshake(meta, get, { verifyToken });
			// The challenge echoed is nosniff; the refusal reflects nothing.
			const headers = { 'content-type': TEXT_TYPE, ...(status === 200 ? NOSNIFF : {}) };
			expect(answer).toEqual({ statusCode: status, headers, body });
		});
	});

	test('every real handshake has its Connecting line', () => {
		for (const provider of /** @type {any[]} */ ([...PROVIDERS]))
			expect(describeHandshake(provider.handshake)).toMatch(
				provider.handshake ? new RegExp(`^\`${provider.handshake.name}\` \\(`) : /^no handshake$/,
			);
	});
});

describe('the shared-secret senders: Graph bodiless POST, Okta authenticated GET', () => {
	const byValue = (value) =>
		/** @type {any} */ (/** @type {any[]} */ ([...PROVIDERS]).find((p) => p.value === value))
			.handshake;
	const REFLECTED = { 'content-type': TEXT_TYPE, 'x-content-type-options': 'nosniff' };

	test('Graph: ?validationToken on a bodiless request only, echoed as Express decoded it, capped', () => {
		const graph = byValue('microsoftGraph');
		const token = 'Validation: Testing client application reachability';
		const post = request({ query: { validationToken: token }, bodiless: true });
		expect(isHandshake(graph, post)).toBe(true);
		expect(answerHandshake(graph, post, {}).answer).toEqual({
			statusCode: 200,
			headers: REFLECTED,
			body: token,
		});
		// A notification POSTed to a URL with the same query is no handshake: its clientState decides.
		expect(
			isHandshake(graph, request({ query: { validationToken: token }, bodiless: false })),
		).toBe(false);
		const long = request({
			query: { validationToken: 'x'.repeat(ECHO_MAX_LENGTH + 1) },
			bodiless: true,
		});
		expect(answerHandshake(graph, long, {}).answer.statusCode).toBe(400);
		expect(describeHandshake(graph)).toBe(
			`\`validation request\` (POST with \`validationToken\`; unsigned) → 200 text: \`validationToken\`${ECHO_RULE}`,
		);
	});

	test('Okta: the challenge header present on a bodiless request, echoed as {"verification"}; the secret checked first', () => {
		const okta = byValue('oktaEventHooks');
		const headers = { 'X-Okta-Verification-Challenge': 'Me_rShK8' };
		const get = request({ headers, bodiless: true });
		expect(okta.authenticated).toBe('sharedSecret');
		expect(isHandshake(okta, get)).toBe(true);
		expect(answerHandshake(okta, get, {}).answer).toEqual({
			statusCode: 200,
			headers: { 'content-type': JSON_TYPE, ...NOSNIFF },
			body: '{"verification":"Me_rShK8"}',
		});
		expect(isHandshake(okta, request({ headers, bodiless: false }))).toBe(false);
		expect(
			isHandshake(
				okta,
				request({ headers: { 'x-okta-verification-challenge': '' }, bodiless: true }),
			),
		).toBe(false);
		const long = request({
			headers: { 'x-okta-verification-challenge': 'x'.repeat(ECHO_MAX_LENGTH + 1) },
			bodiless: true,
		});
		expect(answerHandshake(okta, long, {}).answer.statusCode).toBe(400);
		expect(describeHandshake(okta)).toBe(
			`\`one-time verification\` (\`X-Okta-Verification-Challenge\` present; unsigned, shared secret checked first (else 401)) → 200 JSON \`{"verification": …}\`: header \`X-Okta-Verification-Challenge\`${ECHO_RULE}`,
		);
	});
});
