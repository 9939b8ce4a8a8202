// The built-in workflow answers a sender's signed handshake as the package's nodes do
// (planner/builtIn/builtInHandshake.ts against nodes/shared/webhook/handshakes.ts), checked with n8n-workflow's
// own expression engine: the Handshake? switch sends each documented example to its answer, a real
// event of the same sender on to the key, a handshake without the value it must echo to the 400; the
// answer's bytes and Content-Type equal answerHandshake's. An unsigned handshake (Meta's GET) is not
// answered, and the sticky note says why. The table decides which providers: none listed here.
const { describe, test, expect } = require('@jest/globals');
const { createHmac } = require('node:crypto');

const { builtIn, settings, node } = require('../support/builtInWorkflow');
const { expressionsOf } = require('../support/n8nExpressions');
const { SIGNED_EXAMPLES } = require('../support/handshakeExamples');
const { PROVIDERS } = require('../../dist/nodes/shared/webhook/providers');
const { answerHandshake, isHandshake } = require('../../dist/nodes/shared/webhook/handshakes');

const SECRET = 'built-in handshake secret';
/** @type {(value: string) => any} */
const definitionOf = (value) => PROVIDERS.find((p) => p.value === value);
/** @type {string[]} */
const expressible = builtIn.BUILT_IN_SIGNATURES.filter((/** @type {any} */ s) => s.supported).map(
	(/** @type {any} */ s) => s.signature.provider,
);
const withHandshake = expressible.filter((value) => definitionOf(value).handshake !== undefined);
/** @type {string[]} */
const answered = withHandshake.filter(
	(value) => builtIn.builtInHandshake(definitionOf(value)).answered,
);
/** @type {string[]} */
const unanswered = withHandshake.filter((value) => !answered.includes(value));

const workflowOf = (/** @type {string} */ provider, line = 2) =>
	builtIn.builtInWorkflow(settings({ keySource: provider }), { provider, n8nLine: line });

/** A node of the workflow by name, or undefined. */
const maybeNode = (/** @type {any} */ workflow, /** @type {string} */ name) =>
	workflow.nodes.find((/** @type {any} */ n) => n.name === name);

/** The Switch's output for this item: the index of the first rule that holds, else the fallback's. */
function switchOutput(/** @type {any} */ workflow, /** @type {object} */ json) {
	const handshake = node(workflow, 'Handshake?');
	const rules = handshake.parameters.rules.values;
	const expressions = expressionsOf(workflow);
	const index = rules.findIndex(
		(/** @type {any} */ rule) =>
			expressions.evaluate('Handshake?', rule.conditions.conditions[0].leftValue, { json }) ===
			true,
	);
	return index < 0 ? rules.length : index;
}

/** The item at the Switch: headers lower-cased as n8n's Webhook hands them, the body parsed. */
/** @returns {any} */
const itemOf = (/** @type {any} */ example, /** @type {string} */ body) => ({
	headers: { 'content-type': 'application/json', ...example.headers },
	body: JSON.parse(body),
});

test('the table has senders whose handshake the built-in path answers, and one it cannot', () => {
	expect(answered.length).toBeGreaterThan(0);
	expect(unanswered.length).toBeGreaterThan(0);
});

describe.each(answered)('%s: its signed handshake in the built-in workflow', (value) => {
	const provider = definitionOf(value);
	const example = SIGNED_EXAMPLES[value];

	test.each([1, 2])(
		'n8n %s.x: recognised after Sent as Signed?, answered byte for byte as the package answers it',
		(line) => {
			const workflow = workflowOf(value, line);
			const json = itemOf(example, example.body);
			expect(switchOutput(workflow, json)).toBe(0);
			const request = { headers: json.headers, query: {}, body: json.body, bodiless: false };
			expect(isHandshake(provider.handshake, request)).toBe(true);
			const { answer } = answerHandshake(provider.handshake, request, {
				secret: Buffer.from(SECRET),
			});
			expect(answer).toEqual(example.expected(SECRET));

			const respond = node(workflow, 'Respond handshake');
			const { responseCode, responseHeaders } = respond.parameters.options;
			expect(responseCode).toBe(answer.statusCode);
			expect(
				Object.fromEntries(
					responseHeaders.entries.map((header) => [header.name.toLowerCase(), header.value]),
				),
			).toEqual(answer.headers);
			// The HMAC answer reads the Crypto node's output, as n8n's Crypto node computes it.
			const hmac = maybeNode(workflow, 'Handshake HMAC');
			const input = hmac
				? {
						...json,
						handshakeHmac: createHmac('sha256', SECRET)
							.update(
								expressionsOf(workflow).evaluate('Handshake HMAC', hmac.parameters.value, { json }),
							)
							.digest('hex'),
					}
				: json;
			const body = respond.parameters.responseBody;
			const sent = body.startsWith('=')
				? expressionsOf(workflow).evaluate('Respond handshake', body, { json: input })
				: body;
			expect(sent).toBe(answer.body);
			if (hmac) {
				expect(hmac.parameters).toMatchObject({ action: 'hmac', type: 'SHA256', encoding: 'hex' });
				expect(workflow.connections['Handshake HMAC'].main).toEqual([
					[{ node: 'Respond handshake', type: 'main', index: 0 }],
				]);
			}
		},
	);

	test('a real event of the same sender goes on to the key, not to the answer', () => {
		const workflow = workflowOf(value);
		const rules = node(workflow, 'Handshake?').parameters.rules.values;
		expect(switchOutput(workflow, itemOf(example, example.event))).toBe(rules.length);
	});

	test('without the value the answer needs: the package answers 400, and so does the workflow', () => {
		const workflow = workflowOf(value);
		const answer = provider.handshake.answer;
		if (answer.kind !== 'echoBodyField' && answer.kind !== 'hmacBodyField') {
			expect(maybeNode(workflow, 'Respond 400 handshake')).toBeUndefined();
			return;
		}
		const json = itemOf(example, example.body);
		let target = json.body;
		for (const step of answer.path.slice(0, -1)) target = target[step];
		target[answer.path.at(-1)] = '';
		expect(switchOutput(workflow, json)).toBe(1);
		const request = { headers: json.headers, query: {}, body: json.body, bodiless: false };
		const { answer: packageAnswer } = answerHandshake(provider.handshake, request, {
			secret: Buffer.from(SECRET),
		});
		const respond = node(workflow, 'Respond 400 handshake');
		expect([respond.parameters.options.responseCode, respond.parameters.responseBody]).toEqual([
			packageAnswer.statusCode,
			packageAnswer.body,
		]);
	});
});

test.each(unanswered)(
	'%s: its unsigned handshake is not answered, and the sticky note says why',
	(value) => {
		const workflow = workflowOf(value);
		expect(maybeNode(workflow, 'Handshake?')).toBeUndefined();
		const note = workflow.nodes.find(
			(/** @type {any} */ n) => n.type === 'n8n-nodes-base.stickyNote',
		);
		expect(note.parameters.content).toContain(builtIn.builtInHandshake(definitionOf(value)).reason);
	},
);

test.each([1, 2])(
	"n8n %s.x: GitHub's ping from a form hook (payload=<JSON>) is recognised as the package recognises it",
	(line) => {
		const workflow = workflowOf('github', line);
		const example = SIGNED_EXAMPLES.github;
		const formItem = (/** @type {string} */ json) => ({
			headers: { ...example.headers, 'content-type': 'application/x-www-form-urlencoded' },
			body: { payload: json },
		});
		const rules = node(workflow, 'Handshake?').parameters.rules.values;
		expect(switchOutput(workflow, formItem(example.body))).toBe(0);
		expect(switchOutput(workflow, formItem(example.event))).toBe(rules.length);
		expect(switchOutput(workflow, formItem('{not json'))).toBe(rules.length);
	},
);
