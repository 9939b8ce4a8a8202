// The importable templates as n8n checks them on import: unique node ids and names, connections to
// nodes that exist, no credential ids, and (webhook templates) every path ending in an answer.
const { describe, test, expect } = require('@jest/globals');
const { readdirSync, readFileSync } = require('node:fs');
const path = require('node:path');

const WORKFLOWS = path.join(__dirname, '..', '..', 'workflows');
const templates = readdirSync(WORKFLOWS)
	.filter((file) => file.endsWith('.json'))
	.map((file) => [file, JSON.parse(readFileSync(path.join(WORKFLOWS, file), 'utf8'))]);

test('there are templates to check', () => {
	expect(templates.map(([file]) => file)).toEqual(
		expect.arrayContaining([
			'idempotent-webhook.json',
			'exactly-once-postgres.json',
			'purge-keys.json',
			'stuck-keys-alert.json',
			'dead-letters.json',
		]),
	);
});

// An operator acts on what the alert templates' notes say: for each kind of unfinished key, the
// action that does not lose an answered event (docs/operations.md#alerts).
describe('the alert templates say what to do with each kind of unfinished key', () => {
	const noteOf = (file) =>
		templates
			.find(([name]) => name === file)[1]
			.nodes.filter((node) => node.type === 'n8n-nodes-base.stickyNote')
			.map((node) => node.parameters.content)
			.join('\n');

	test('stuck-keys-alert.json: stuck → the sender resends; waiting for the redrive → nothing; dead letter → retry or drop', () => {
		const note = noteOf('stuck-keys-alert.json');
		expect(note).toMatch(/\*\*Stuck\*\* \(no stored delivery\)[^\n]*resend/);
		expect(note).toMatch(/\*\*Waiting for the redrive\*\*[^\n]*nothing to do[^\n]*Redrive Trigger/);
		expect(note).toMatch(/\*\*Dead letter\*\*[^\n]*Retry Dead Letters[^\n]*Drop Dead Letters/);
		// Purging a key to make its event run again loses it when the sender was answered already.
		expect(note).not.toMatch(/purge the key/i);
	});

	test('dead-letters.json: Schedule Trigger → Find Dead Letters → Alert; by hand, Retry or Drop, disabled until chosen', () => {
		const workflow = templates.find(([name]) => name === 'dead-letters.json')[1];
		const byName = new Map(workflow.nodes.map((node) => [node.name, node]));
		const next = (name) => workflow.connections[name].main[0].map((c) => c.node).sort();
		const trigger = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.scheduleTrigger');
		expect(next(trigger.name)).toEqual(['Find Dead Letters']);
		expect(byName.get('Find Dead Letters').parameters).toMatchObject({
			operation: 'lookUp',
			lookUpBy: 'deadLetters',
		});
		expect(next('Find Dead Letters')).toEqual(['Alert (replace me)']);
		expect(byName.get('Alert (replace me)').type).toBe('n8n-nodes-base.noOp');
		const manual = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.manualTrigger');
		expect(next(manual.name)).toEqual(['Drop Dead Letters', 'Retry Dead Letters']);
		for (const name of ['Retry Dead Letters', 'Drop Dead Letters'])
			expect(byName.get(name)).toMatchObject({
				type: 'n8n-nodes-idempotency.idempotencyKeys',
				disabled: true,
			});
		expect(noteOf('dead-letters.json')).toMatch(/Retry Dead Letters[\s\S]*Drop Dead Letters/);
	});
});

describe.each(templates)('%s', (_file, workflow) => {
	test('node ids and names are unique (n8n refuses to import a workflow whose nodes share an id)', () => {
		const ids = workflow.nodes.map((node) => node.id);
		const names = workflow.nodes.map((node) => node.name);
		expect(new Set(ids).size).toBe(ids.length);
		expect(new Set(names).size).toBe(names.length);
	});

	test('every connection joins nodes that exist', () => {
		const names = new Set(workflow.nodes.map((node) => node.name));
		for (const [from, { main }] of Object.entries(workflow.connections)) {
			expect(names.has(from)).toBe(true);
			for (const connection of main.flat()) expect(names.has(connection.node)).toBe(true);
		}
	});

	test('credentials are referenced by name only', () => {
		for (const node of workflow.nodes) {
			for (const credential of Object.values(node.credentials ?? {}))
				expect(Object.keys(credential)).toEqual(['name']);
		}
	});
});

const HTTP_TEMPLATES = [
	'idempotent-webhook.json',
	'exactly-once-postgres.json',
	'idempotent-http-call.json',
	'idempotent-api.json',
	'multi-step.json',
	'answer-first.json',
];

// A Respond node, or a node of this package that answers itself once its key is completed.
const answers = (node) =>
	node.type === 'n8n-nodes-base.respondToWebhook' ||
	(node.type.startsWith('n8n-nodes-idempotency.') && node.parameters.respondToWebhook === true);

const { reserveOutputNames } = require('../../dist/nodes/shared/reserveRules/reserveOutputs');

// Reserve 2.3 answers what it routes to these outputs itself (Answer Repeats, Answer Problems;
// nodes/IdempotencyReserve/helpers/answerRepeats.ts), so they may end unconnected.
const answersOutput = (node, index) => {
	if (node.type !== 'n8n-nodes-idempotency.idempotencyReserve' || node.typeVersion < 2.3)
		return false;
	const name = reserveOutputNames(node.parameters, node.typeVersion)[index];
	if (name === 'duplicate' || name === 'in flight') return node.parameters.answerRepeats ?? true;
	if (name === 'invalid signature') return node.parameters.answerProblems ?? true;
	return false;
};

test.each(HTTP_TEMPLATES)(
	'every path of %s ends in an answer (else n8n answers 200 with an empty body)',
	(file) => {
		const workflow = templates.find(([name]) => name === file)[1];
		const byName = new Map(workflow.nodes.map((node) => [node.name, node]));
		const trigger = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.webhook');
		// Every way through the workflow, and whether it answered before it ended: a path ends at a
		// node without connections or at an output left unconnected (an IF's other branch). A Stop
		// and Error node may end a path that answered already (a 500 sent, the execution then failed).
		const ends = [];
		const walk = (node, answered, seen) => {
			const nowAnswered = answered || answers(node);
			const outputs = workflow.connections[node.name]?.main ?? [];
			if (outputs.length === 0) ends.push([node.name, nowAnswered]);
			outputs.forEach((targets, index) => {
				if (targets.length === 0) ends.push([node.name, nowAnswered || answersOutput(node, index)]);
			});
			for (const targets of outputs)
				for (const { node: next } of targets)
					if (!seen.has(next)) walk(byName.get(next), nowAnswered, new Set([...seen, next]));
		};
		walk(trigger, false, new Set([trigger.name]));
		expect(ends.length).toBeGreaterThanOrEqual(5);
		for (const end of ends) expect(end).toEqual([end[0], true]);
		// n8n refuses a "Using Respond to Webhook Node" Webhook without one such node after it.
		expect(workflow.nodes.some((node) => node.type === 'n8n-nodes-base.respondToWebhook')).toBe(
			true,
		);
	},
);

describe.each(HTTP_TEMPLATES)(
	'%s has Reserve answer its item errors as problem+json (docs/errors.md)',
	(file) => {
		const workflow = templates.find(([name]) => name === file)[1];
		const reserve = workflow.nodes.find(
			(candidate) => candidate.type === 'n8n-nodes-idempotency.idempotencyReserve',
		);

		// Reserve 2.2 answers a client error 4xx and any other failure 500 itself (Answer Problems,
		// on by default), then fails the execution on the 500: no error output, so n8n does not
		// evaluate Reserve's outputs expression after every run (issue 51). The answers are the ones
		// the removed Respond node gave: test/integration/clientErrorAnswers.test.js. 2.3 also
		// answers duplicates, deliveries in flight and invalid signatures (Answer Repeats), so the
		// webhook templates keep no Respond node on those outputs; the API template replays the
		// stored answer with its own nodes.
		test('Reserve is version 2.3 with Answer Problems on and no error output', () => {
			expect(reserve.typeVersion).toBe(2.3);
			expect(reserve.parameters.answerProblems ?? true).toBe(true);
			expect(reserve.parameters.answerRepeats ?? true).toBe(file !== 'idempotent-api.json');
			expect(reserve.onError).toBeUndefined();
			const { reserveOutputs } = require('../../dist/nodes/shared/reserveRules/reserveOutputs');
			expect(workflow.connections[reserve.name].main).toHaveLength(
				reserveOutputs(reserve.parameters, reserve.typeVersion).count,
			);
		});

		test('no node is left of the old error branch', () => {
			const names = workflow.nodes.map((node) => node.name);
			for (const gone of [
				'Respond 4xx or 500 (problem+json)',
				'Internal Failure?',
				'Fail the Execution (500 sent)',
			])
				expect(names).not.toContain(gone);
			if (reserve.parameters.answerRepeats ?? true)
				for (const gone of ['Respond 200 duplicate', 'Respond 409 in flight', 'Respond 401'])
					expect(names).not.toContain(gone);
		});
	},
);

const {
	CLIENT_ERROR_DOCS,
	INVALID_SIGNATURE_DETAIL,
	clientErrorDetails,
	retryLaterDetails,
} = require('../../dist/nodes/shared/keys/clientErrors');
const { expressionsOf } = require('../support/n8nExpressions');

const PROBLEM_JSON = [{ name: 'Content-Type', value: 'application/problem+json' }];

/** The Respond node Reserve's outputs lead to with this status, and its answer for an item. */
function answerOf(file, status) {
	const workflow = templates.find(([name]) => name === file)[1];
	const reserve = workflow.nodes.find(
		(candidate) => candidate.type === 'n8n-nodes-idempotency.idempotencyReserve',
	);
	const [respond, ...more] = workflow.connections[reserve.name].main
		.flat()
		.map((connection) => workflow.nodes.find((candidate) => candidate.name === connection.node))
		.filter((node) => node.parameters.options?.responseCode === status);
	expect(more).toEqual([]);
	return {
		respond,
		answer: (item) =>
			JSON.parse(
				expressionsOf(workflow).evaluate(respond.name, respond.parameters.responseBody, item),
			),
	};
}

const SIGNING_TEMPLATES = HTTP_TEMPLATES.filter((file) =>
	templates
		.find(([name]) => name === file)[1]
		.nodes.some((node) => typeof node.parameters.signature === 'string'),
);

test('the templates that verify signatures are the five webhook templates', () => {
	expect(SIGNING_TEMPLATES.sort()).toEqual(
		[
			'answer-first.json',
			'exactly-once-postgres.json',
			'idempotent-http-call.json',
			'idempotent-webhook.json',
			'multi-step.json',
		].sort(),
	);
});

describe.each(SIGNING_TEMPLATES)(
	'%s answers invalid signature 401 problem+json without saying which check failed',
	(file) => {
		test('Reserve answers it (Answer Problems, 2.3): Content-Type application/problem+json, the invalid-signature kind, one fixed detail', () => {
			const workflow = templates.find(([name]) => name === file)[1];
			const reserve = workflow.nodes.find(
				(node) => node.type === 'n8n-nodes-idempotency.idempotencyReserve',
			);
			const invalid = reserveOutputNames(reserve.parameters, reserve.typeVersion).indexOf(
				'invalid signature',
			);
			expect(workflow.connections[reserve.name].main[invalid]).toEqual([]);
			const {
				invalidSignatureAnswer,
			} = require('../../dist/nodes/IdempotencyReserve/helpers/answerRepeats');
			const answer = invalidSignatureAnswer();
			expect([answer.statusCode, answer.headers]).toEqual([
				401,
				{ 'content-type': 'application/problem+json' },
			]);
			const { type, title, status } = clientErrorDetails('invalid-signature');
			expect(type).toBe(`${CLIENT_ERROR_DOCS}#invalid-signature`);
			expect(JSON.parse(answer.body)).toEqual({
				type,
				title,
				status,
				detail: INVALID_SIGNATURE_DETAIL,
			});
		});
	},
);

describe('idempotent-api.json: 409 and 422 point at their anchors in docs/errors.md', () => {
	test("Reserve 2.3's own 409 for an Idempotency-Key (Answer Repeats on) is the template's Respond 409, byte for byte", () => {
		const { answer } = answerOf('idempotent-api.json', 409);
		const { routedAnswerOf } = require('../../dist/nodes/IdempotencyReserve/helpers/answerRepeats');
		const idempotency = { key: 'k', isNew: false, status: 'in_progress', retryAfterSeconds: 7 };
		const own = routedAnswerOf(
			[[], [], [{ json: { idempotency } }], []],
			{ count: 4, new: 0, duplicate: 1, inFlight: 2, reusedKey: 3 },
			{ problems: true, invalidSignature: true, repeats: true, keySource: 'idempotencyKeyHeader' },
		);
		expect([own.statusCode, own.headers]).toEqual([
			409,
			{ 'content-type': 'application/problem+json', 'retry-after': '7' },
		]);
		expect(own.body).toBe(JSON.stringify(answer({ json: { idempotency } })));
	});

	test('in flight: 409, the in-flight anchor (not an error of the request), Retry-After', () => {
		const { respond, answer } = answerOf('idempotent-api.json', 409);
		expect(respond.parameters.options.responseHeaders.entries).toEqual([
			...PROBLEM_JSON,
			{ name: 'Retry-After', value: '={{ $json.idempotency.retryAfterSeconds }}' },
		]);
		expect(answer({ json: { idempotency: { retryAfterSeconds: 7 } } })).toEqual({
			...retryLaterDetails('in-flight'),
			detail: 'Retry after 7 seconds with the same key.',
		});
		expect(retryLaterDetails('in-flight').type).toBe(`${CLIENT_ERROR_DOCS}#in-flight`);
	});

	test('another payload: 422, the fingerprint-mismatch kind', () => {
		const { respond, answer } = answerOf('idempotent-api.json', 422);
		expect(respond.parameters.options.responseHeaders.entries).toEqual(PROBLEM_JSON);
		const { type, title, status } = clientErrorDetails('fingerprint-mismatch');
		expect(answer({ json: { idempotency: { mismatch: true } } })).toEqual({
			type,
			title,
			status,
			detail: expect.stringMatching(/different body/),
		});
	});
});

test('the exactly-once template is the webhook template with its business step and Complete Key made one node', () => {
	// Its answer names the inserted row's id, which only exists after the step, so a Respond node
	// sends it; in the webhook template Complete Key answers itself.
	const nodesOf = (file) => templates.find(([name]) => name === file)[1].nodes;
	const names = (file) =>
		nodesOf(file)
			.filter((node) => node.type !== 'n8n-nodes-base.stickyNote')
			.map((node) => node.name)
			.sort();
	expect(names('exactly-once-postgres.json')).toEqual(
		[
			...names('idempotent-webhook.json').filter((name) => name !== 'Complete Key'),
			'Respond 200',
		].sort(),
	);
	const step = nodesOf('exactly-once-postgres.json').find(
		(node) => node.name === 'Business Step (insert business_log)',
	);
	expect([step.type, step.onError]).toEqual([
		'n8n-nodes-idempotency.idempotencyExactlyOnce',
		'continueErrorOutput',
	]);
});

describe('the RabbitMQ consumer template (issue 38)', () => {
	const workflow = templates.find(([name]) => name === 'rabbitmq-consumer.json')[1];
	const node = (name) => workflow.nodes.find((candidate) => candidate.name === name);
	const targets = (from, output) =>
		(workflow.connections[from]?.main?.[output] ?? []).map((connection) => node(connection.node));
	const reserve = node('Idempotency Reserve');

	test('the trigger acknowledges only a successful execution, with a parallel-message limit', () => {
		const trigger = node('RabbitMQ Trigger');
		expect(trigger.type).toBe('n8n-nodes-base.rabbitmqTrigger');
		// Any other mode acknowledges a message whose effect may not have committed (n8n's RabbitMQ
		// Trigger: "executionFinishes" acks failed runs too, "immediately" acks before the run).
		expect(trigger.parameters.options.acknowledge).toBe('executionFinishesSuccessfully');
		expect(trigger.parameters.options.parallelMessages).toBeGreaterThan(0);
		expect(targets('RabbitMQ Trigger', 0)).toEqual([reserve]);
	});

	test('Reserve keys on the message in lease mode and waits, bounded, while a key is in flight', () => {
		expect(reserve.typeVersion).toBe(2);
		expect(reserve.parameters).toMatchObject({
			mode: 'lease',
			keySource: 'rabbitmqMessage',
			namespace: expect.stringMatching(/^[^:]+$/),
		});
		const { waitInFlightSeconds } = reserve.parameters.options;
		expect(waitInFlightSeconds).toBeGreaterThan(0);
		expect(waitInFlightSeconds).toBeLessThan(reserve.parameters.leaseSeconds);
	});

	test('new runs the Exactly-Once SQL step, duplicate ends without it, in flight fails the execution', () => {
		const [step] = targets('Idempotency Reserve', 0);
		expect(step.type).toBe('n8n-nodes-idempotency.idempotencyExactlyOnce');
		expect(step.parameters.query).toMatch(/^INSERT INTO business_log/);
		// A failed step must fail the execution (nack, redelivery), never continue to an acknowledgement.
		expect(step.onError).toBeUndefined();
		expect(targets('Idempotency Reserve', 1).map((next) => next.type)).toEqual([
			'n8n-nodes-base.noOp',
		]);
		expect(targets('Idempotency Reserve', 2).map((next) => next.type)).toEqual([
			'n8n-nodes-base.stopAndError',
		]);
		const leaves = [...targets('Idempotency Reserve', 1), ...targets('Idempotency Reserve', 2)];
		for (const leaf of leaves) expect(workflow.connections[leaf.name]).toBeUndefined();
	});

	test('an item error: an unusable key is acknowledged and left visible, any other failure fails the execution', () => {
		expect(reserve.onError).toBe('continueErrorOutput');
		const outputs = workflow.connections['Idempotency Reserve'].main;
		expect(outputs).toHaveLength(4);
		const [check] = targets('Idempotency Reserve', 3);
		expect(check.type).toBe('n8n-nodes-base.if');
		expect(check.parameters.conditions.conditions[0].leftValue).toBe(
			"={{ $json.details?.kind ?? '' }}",
		);
		// No kind (the database, a bug): fail, so the broker redelivers the message.
		expect(targets(check.name, 0).map((next) => next.type)).toEqual([
			'n8n-nodes-base.stopAndError',
		]);
		// A client error can never succeed: redelivering it would loop forever, so it ends here.
		const [dropped] = targets(check.name, 1);
		expect(dropped.type).toBe('n8n-nodes-base.noOp');
		expect(dropped.name).toMatch(/acknowledged/i);
	});
});

describe('the email template (issue 63, docs/email.md)', () => {
	const workflow = templates.find(([name]) => name === 'email-trigger.json')[1];
	const node = (name) => workflow.nodes.find((candidate) => candidate.name === name);
	const targets = (from, output) =>
		(workflow.connections[from]?.main?.[output] ?? []).map((connection) => node(connection.node));
	const reserve = node('Idempotency Reserve');
	const trigger = node('Email Trigger (IMAP)');

	test('the Email Trigger (IMAP) in a format whose items carry the Message-ID and UID, into Reserve', () => {
		expect(trigger.type).toBe('n8n-nodes-base.emailReadImap');
		// 2.1 is the latest version n8n 1.x has, and the first that keeps a UID watermark.
		expect(trigger.typeVersion).toBe(2.1);
		expect(['simple', 'resolved']).toContain(trigger.parameters.format);
		expect(targets(trigger.name, 0)).toEqual([reserve]);
	});

	test('Reserve keys on the email in a namespace per mailbox, in lease mode, storing the email (Answer First)', () => {
		expect(reserve.parameters).toMatchObject({
			mode: 'lease',
			answerFirst: true,
			keySource: 'imapEmail',
			namespace: "={{ 'imap-' + $('Email Trigger (IMAP)').params.mailbox }}",
		});
	});

	test("new runs the business step by each item's key; duplicate and in flight end quietly", () => {
		const [toRun] = targets(reserve.name, 0);
		const [step] = targets(toRun.name, 0);
		expect(step.type).toBe('n8n-nodes-idempotency.idempotencyExactlyOnce');
		// The trigger emits up to 20 emails per execution: an empty Key fails on a batch.
		expect(step.parameters.key).toBe('={{ $json.idempotency.key }}');
		expect(step.onError).toBeUndefined();
		for (const output of [1, 2]) {
			const leaves = targets(reserve.name, output);
			expect(leaves.map((leaf) => leaf.type)).toEqual(['n8n-nodes-base.noOp']);
			expect(workflow.connections[leaves[0].name]).toBeUndefined();
		}
	});

	test('a failure is run again by the Redrive Trigger from the same node, never released', () => {
		const redrive = workflow.nodes.find(
			(candidate) => candidate.type === 'n8n-nodes-idempotency.idempotencyRedriveTrigger',
		);
		expect(targets(redrive.name, 0)).toEqual(targets(reserve.name, 0));
		expect(targets(redrive.name, 1).map((next) => next.type)).toEqual(['n8n-nodes-base.noOp']);
		expect(
			workflow.nodes.filter(
				(candidate) => candidate.type === 'n8n-nodes-idempotency.idempotencyRelease',
			),
		).toEqual([]);
		// Reserve's error output: an unusable email ends visible, any other failure fails the execution.
		expect(reserve.onError).toBe('continueErrorOutput');
		const [check] = targets(reserve.name, 3);
		expect(targets(check.name, 0).map((next) => next.type)).toEqual([
			'n8n-nodes-base.stopAndError',
		]);
		expect(targets(check.name, 1).map((next) => next.type)).toEqual(['n8n-nodes-base.noOp']);
	});

	test("no node after Reserve reads the trigger's output, which a redriven run does not have", () => {
		const after = workflow.nodes.filter(
			(candidate) => ![trigger.name, reserve.name, 'Sticky Note'].includes(candidate.name),
		);
		expect(JSON.stringify(after)).not.toContain("$('Email Trigger (IMAP)')");
	});
});

describe('the API template scopes keys by the caller n8n authenticated (no shared fallback)', () => {
	const workflow = templates.find(([name]) => name === 'idempotent-api.json')[1];
	const node = (name) => workflow.nodes.find((candidate) => candidate.name === name);
	const targets = (from, output) =>
		(workflow.connections[from]?.main?.[output] ?? []).map((connection) => node(connection.node));
	const webhook = workflow.nodes.find((candidate) => candidate.type === 'n8n-nodes-base.webhook');
	const reserve = node('Idempotency Reserve');

	test('the Webhook node checks a JWT, so a request without a valid one never reaches the workflow', () => {
		expect(webhook.parameters.authentication).toBe('jwtAuth');
		expect(Object.keys(webhook.credentials)).toEqual(['jwtAuth']);
	});

	test("the Namespace is the token's subject, and nothing falls back to a shared scope", () => {
		expect(reserve.parameters.namespace).toBe(
			"={{ 'orders-' + encodeURIComponent($json.jwtPayload.sub) }}",
		);
		expect(JSON.stringify(workflow)).not.toMatch(/anonymous|headers\.authorization/);
	});

	test('a token without a subject is answered 401 problem+json before Reserve', () => {
		const [check] = targets(webhook.name, 0);
		expect(check.type).toBe('n8n-nodes-base.if');
		expect(targets(check.name, 0)).toEqual([reserve]);
		const [refused] = targets(check.name, 1);
		expect(refused.type).toBe('n8n-nodes-base.respondToWebhook');
		expect(refused.parameters.options.responseCode).toBe(401);
		expect(refused.parameters.options.responseHeaders.entries).toContainEqual({
			name: 'Content-Type',
			value: 'application/problem+json',
		});
	});

	test('the sticky note says what to change for header, query or other JWT claims', () => {
		const note = workflow.nodes.find((candidate) => candidate.type === 'n8n-nodes-base.stickyNote');
		expect(note.parameters.content).toMatch(/Header Auth/);
		expect(note.parameters.content).toMatch(/query/);
		expect(note.parameters.content).toMatch(/JWT/);
	});
});

test.each(SIGNING_TEMPLATES)(
	'%s takes POST and GET, both into Reserve (Meta verifies its URL with a GET)',
	(name) => {
		const workflow = templates.find(([file]) => file === name)[1];
		const webhook = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.webhook');
		// Webhook 2.1: one output per method, in the order of httpMethod; POST stays the first output, so
		// anything reading the Webhook's first output (as saved copies of the template do) still finds it.
		expect(webhook.typeVersion).toBeGreaterThanOrEqual(2.1);
		expect(webhook.parameters.multipleMethods).toBe(true);
		expect(webhook.parameters.httpMethod).toEqual(['POST', 'GET']);
		const reserve = workflow.nodes.find(
			(node) => node.type === 'n8n-nodes-idempotency.idempotencyReserve',
		);
		expect(workflow.connections[webhook.name].main).toEqual([
			[{ node: reserve.name, type: 'main', index: 0 }],
			[{ node: reserve.name, type: 'main', index: 0 }],
		]);
	},
);

describe('the answer-first template (docs/answer-first.md)', () => {
	const workflow = templates.find(([name]) => name === 'answer-first.json')[1];
	const node = (name) => workflow.nodes.find((candidate) => candidate.name === name);
	const targets = (from, output) =>
		(workflow.connections[from]?.main?.[output] ?? []).map((connection) => node(connection.node));
	const ofType = (type) => workflow.nodes.filter((candidate) => candidate.type === type);
	const [reserve] = ofType('n8n-nodes-idempotency.idempotencyReserve');
	const [trigger] = ofType('n8n-nodes-idempotency.idempotencyRedriveTrigger');
	const BUSINESS = 'Business Step (insert business_log)';

	test('Reserve stores the delivery (lease mode, Answer First) and its new output asks whether it was stored', () => {
		expect(reserve.parameters).toMatchObject({
			mode: 'lease',
			answerFirst: true,
			leaseSeconds: 60,
		});
		const [check] = targets(reserve.name, 0);
		expect(check.type).toBe('n8n-nodes-base.if');
		expect(check.parameters.conditions.conditions[0].leftValue).toBe(
			'={{ $json.idempotency.answerFirst }}',
		);
	});

	test('stored: 200 accepted at once, then the business step, then Complete Key without an answer', () => {
		const check = targets(reserve.name, 0)[0];
		const [respond] = targets(check.name, 0);
		expect(respond.type).toBe('n8n-nodes-base.respondToWebhook');
		expect(respond.parameters.options.responseCode).toBe(200);
		expect(JSON.parse(respond.parameters.responseBody)).toEqual({ status: 'accepted' });
		const [business] = targets(respond.name, 0);
		expect(business).toBe(node(BUSINESS));
		expect(business.type).toBe('n8n-nodes-base.postgres');
		// A failure fails the execution and leaves the key leased for the Redrive Trigger: no Release
		// (it would delete the stored delivery of an event the sender was told is accepted).
		expect(business.onError).toBeUndefined();
		const [complete] = targets(business.name, 0);
		expect(complete.type).toBe('n8n-nodes-idempotency.idempotencyComplete');
		expect(complete.parameters.respondToWebhook).toBe(false);
		// Key and Reservation left empty: the execution's reservation, or in a redriven run the
		// trigger's claim, which Complete Key adopts from the trigger's output (no expression per item).
		expect([complete.parameters.key ?? '', complete.parameters.reservation ?? '']).toEqual([
			'',
			'',
		]);
	});

	test('not stored (over the cap): answered last by Complete Key, a failure released and answered 500', () => {
		const check = targets(reserve.name, 0)[0];
		const [business] = targets(check.name, 1);
		expect(business.onError).toBe('continueErrorOutput');
		const [complete] = targets(business.name, 0);
		expect(complete.parameters.respondToWebhook).toBe(true);
		const [release] = targets(business.name, 1);
		expect(release.type).toBe('n8n-nodes-idempotency.idempotencyRelease');
	});

	test('the Redrive Trigger runs the event from after the answer; dead letters go to an alert to replace', () => {
		expect(targets(trigger.name, 0)).toEqual([node(BUSINESS)]);
		const [alert] = targets(trigger.name, 1);
		expect(alert.type).toBe('n8n-nodes-base.noOp');
		expect(alert.name).toMatch(/replace me/);
		expect(trigger.parameters).toMatchObject({
			schema: reserve.parameters.schema,
			table: reserve.parameters.table,
		});
	});

	test("no node reads the Webhook's output (a redriven run has none)", () => {
		const working = workflow.nodes.filter(
			(candidate) => candidate.type !== 'n8n-nodes-base.stickyNote',
		);
		expect(JSON.stringify(working)).not.toMatch(/\$\(\s*\\?['"]Webhook/);
	});
});
