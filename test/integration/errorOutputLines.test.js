// Every error item the package emits reaches the node's error output ("On Error: continue (using
// error output)") on n8n 1.x as on 2.x, with the json the templates answer from (error, message,
// details) intact.
//
// The two lines route differently (n8n-core's WorkflowExecute.handleNodeErrorOutput): both move an
// item that carries its error (`item.error`); by json alone, 2.x moves an item whose keys are among
// error, message and details, 1.x only one whose keys are `error`, or `error` and `message`. A client
// error's item has `details`, so by json alone 1.x left it on Reserve's first output, `new`: the
// business step ran for an invalid id. Both lines then replace the json of every item that still has
// `error` with `{ error: message }` (normalizeNodeErrors), so errorItem gives the item its error as a
// non-enumerable property: the engine's check sees it, the copy the engine puts on the error output
// (`{ ...item, json }`) does not carry it, and the json survives.
//
// Checked three ways: the 1.x rule as a pure function (copied from n8n-core 1.122.48, the engine of
// n8n 1.123.81) for every kind of error item; n8n-core 2.41's WorkflowExecute for real; and
// n8n-core 1.122.48's WorkflowExecute for real when n8n 1.123.81 is installed in the e2e cache
// (scripts/harness/install.mjs; skipped otherwise: `npm run test:e2e:n8n1` installs it).
const { describe, test, expect } = require('@jest/globals');
const { randomUUID } = require('node:crypto');
const { NodeApiError } = require('n8n-workflow');
const { CLIENT_ERRORS, clientErrorDetails } = require('../../dist/nodes/shared/keys/clientErrors');
const { KeyError } = require('../../dist/nodes/shared/keys/KeyError');
const { inputError } = require('../../dist/nodes/shared/errors/nodeErrors');
const { errorItem } = require('../../dist/nodes/shared/run/itemErrors');
const { useTestDatabase } = require('../support/database');
const { registerTestNode, runWorkflow } = require('../support/engine');
const { n8n1Runner, N8N1_MODULES, N8N1_VERSION } = require('../support/n8n1Engine');
const { PROVIDERS } = require('../support/providerVectors');
const { takeAnswers } = require('../support/respondProbe');
const { reserveAndErrorAnswer } = require('../support/templateBranches');
const { webhookItem } = require('../support/webhookItems');

const db = useTestDatabase();
const stripe = PROVIDERS.stripe;

// ---------------------------------------------------------------------------------------------
// n8n 1.x's rule, as a pure function. Source: n8n-core 1.122.48 (n8n 1.123.81),
// dist/execution-engine/workflow-execute.js.

/** handleNodeErrorOutput, lines 1416-1425: does n8n 1.x move this item to the error output? */
function n8n1MovesToErrorOutput(item) {
	let errorData;
	if (item.error) {
		errorData = item.error;
	} else if (item.json.error && Object.keys(item.json).length === 1) {
		errorData = item.json.error;
	} else if (item.json.error && item.json.message && Object.keys(item.json).length === 2) {
		errorData = item.json.error;
	}
	return Boolean(errorData);
}

/**
 * The item n8n 1.x puts on the error output for a moved item paired with `inputItem`:
 * handleNodeErrorOutput lines 1434-1445 (`{ ...item, json: { ...input.json, ...item.json } }`), then
 * the normalisation every node's output gets before it is stored and handed on, lines 1059-1070
 * (an item with `error` gets the json `{ error: error.message }`).
 */
function n8n1ErrorOutputItem(item, inputItem) {
	const moved = { ...item, json: { ...inputItem.json, ...item.json } };
	if (moved.error !== undefined) moved.json = { error: moved.error.message };
	return moved;
}

// ---------------------------------------------------------------------------------------------

/** @type {import('n8n-workflow').INode} */
const node = {
	id: 'n1',
	name: 'Idempotency Reserve',
	type: 'n8n-nodes-idempotency.idempotencyReserve',
	typeVersion: 2,
	position: [0, 0],
	parameters: {},
};
/**
 * As much of IExecuteFunctions as errorItem reads: the node and its On Error setting.
 * @param {string | undefined} onError
 */
const contextWith = (onError) =>
	/** @type {import('n8n-workflow').IExecuteFunctions} */ (
		/** @type {unknown} */ ({ getNode: () => ({ ...node, onError }) })
	);

/** @typedef {import('n8n-workflow').NodeOperationError | import('n8n-workflow').NodeApiError} NodeError */
/** @type {(label: string, error: NodeError) => [string, NodeError]} */
const errorCase = (label, error) => [label, error];
/** A client error of `kind`, as Reserve makes it of a KeyError. @param {any} kind */
const clientError = (kind) =>
	inputError(node, new KeyError(`a ${kind} problem`, 'what to do', kind), 0);

/** Every error item the package builds: each client-error kind, and failures of ours. */
const ERRORS = [
	...Object.keys(CLIENT_ERRORS).map((kind) => errorCase(`client error ${kind}`, clientError(kind))),
	errorCase(
		'a key error without a kind',
		inputError(node, new KeyError('bad key setting', 'a hint'), 0),
	),
	errorCase(
		'a database failure with a description',
		new NodeApiError(node, { message: 'down' }, { message: 'unreachable', description: 'why' }),
	),
	errorCase(
		'a failure without a description',
		new NodeApiError(node, { message: 'x' }, { message: 'x' }),
	),
];

const input = webhookItem({ body: { id: { nested: true } }, headers: { 'x-request': 'r1' } });

describe.each(ERRORS)('the error item of %s', (_label, error) => {
	const kind = /** @type {any} */ (error.context?.clientErrorKind);

	test('n8n 1.x moves it to the error output, with error, message and details kept', () => {
		const item = errorItem(contextWith('continueErrorOutput'), error, 0);
		expect(n8n1MovesToErrorOutput(item)).toBe(true);
		const moved = n8n1ErrorOutputItem(item, input);
		expect(moved.json).toEqual({
			...input.json,
			error: error.message,
			...(error.description ? { message: error.description } : {}),
			...(kind ? { details: clientErrorDetails(kind) } : {}),
		});
		expect(moved.pairedItem).toEqual({ item: 0 });
	});

	test('the error rides along unseen: not in the item’s keys, so not in its stored json', () => {
		const item = errorItem(contextWith('continueErrorOutput'), error, 0);
		expect(item.error).toBe(error);
		expect(Object.keys(item).sort()).toEqual(['json', 'pairedItem']);
		expect(JSON.parse(JSON.stringify(item))).toEqual({ json: item.json, pairedItem: { item: 0 } });
	});

	test('in the other modes the item has no error, so n8n keeps its json on the regular output', () => {
		for (const onError of ['continueRegularOutput', 'stopWorkflow', undefined])
			expect(errorItem(contextWith(onError), error, 0).error).toBeUndefined();
	});
});

test('the bug: by json alone, the item of every client-error kind stays on the first output on n8n 1.x', () => {
	const clientErrors = ERRORS.filter(([, error]) => error.context?.clientErrorKind !== undefined);
	expect(clientErrors).toHaveLength(Object.keys(CLIENT_ERRORS).length);
	for (const [, error] of clientErrors) {
		const { json, pairedItem } = errorItem(contextWith('continueErrorOutput'), error, 0);
		expect(n8n1MovesToErrorOutput({ json, pairedItem })).toBe(false);
	}
});

test('why the error is not enumerable: an item that carries it openly loses its json on the error output', () => {
	const item = errorItem(contextWith('continueErrorOutput'), ERRORS[0][1], 0);
	const open = { ...item, error: item.error };
	expect(n8n1ErrorOutputItem(open, input).json).toEqual({ error: item.json.error });
});

// ---------------------------------------------------------------------------------------------
// The real engines.

const n8n1 = n8n1Runner();
if (n8n1 === undefined)
	process.stdout.write(
		`errorOutputLines.test.js: n8n ${N8N1_VERSION} is not installed in ${N8N1_MODULES}: skipping its real engine (the 1.x rule is still checked as a function)\n`,
	);

/** @type {Array<[string, typeof runWorkflow | undefined]>} */
const LINES = [
	['n8n 2.x (n8n-core 2.41)', runWorkflow],
	[`n8n 1.x (n8n-core 1.122, from the installed n8n ${N8N1_VERSION})`, n8n1],
];

// A node of the test that hands on what the case gives it: the item shape before this fix, and one
// with its error enumerable, as controls of what each engine does with them.
/** @type {(items: import('n8n-workflow').INodeExecutionData[]) => object[]} */
let handOn = () => [];
registerTestNode('handOn', async function () {
	return [handOn(this.getInputData())];
});
const handOnWorkflow = {
	name: 'Hand on',
	nodes: [
		{
			id: 'h1',
			name: 'Hand On',
			type: 'test.handOn',
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
			onError: 'continueErrorOutput',
		},
	],
	connections: {},
	settings: { executionOrder: 'v1' },
};

async function signedDelivery(rawBody) {
	return webhookItem({
		body: JSON.parse(rawBody),
		rawBody,
		headers: await stripe.sign(rawBody, { secret: stripe.secret }),
	});
}

const webhookBranches = reserveAndErrorAnswer(require('../../workflows/idempotent-webhook.json'));
const apiBranches = reserveAndErrorAnswer(require('../../workflows/idempotent-api.json'));
/** A request as n8n's Webhook node hands it on with JWT Auth on: the verified token's payload. */
const apiRequest = (headers) => {
	const item = webhookItem({ body: { sku: 'A' }, headers });
	return { ...item, json: { ...item.json, jwtPayload: { sub: 'alice', iat: 1 } } };
};

describe.each(LINES)('%s', (_line, run) => {
	const maybe = run === undefined ? test.skip : test;

	/** Runs a template's Reserve and error answer; returns the answer and where each item went. */
	async function answerOf(branches, item, credentials = db.credential()) {
		takeAnswers();
		const result = await run(branches.workflow, [item], {
			credentials,
			credentialsByType: { webhookSigningSecretApi: { secret: stripe.secret } },
		});
		expect(result.status).toBe('success');
		const count = result.outputCount(branches.reserve.name);
		const answers = takeAnswers();
		expect(answers.map((answer) => answer.node)).toEqual([branches.errorTarget]);
		return {
			answer: { ...answers[0], problem: JSON.parse(answers[0].body) },
			routed: [...Array(count).keys()].map(
				(output) => result.output(branches.reserve.name, output).length,
			),
			errorItem: result.output(branches.reserve.name, count - 1)[0],
		};
	}

	maybe.each([
		['an object as id', '{"id":{"a":1},"type":"x"}', /is an object/],
		['an array as id', '{"id":["a"],"type":"x"}', /is an array/],
		['a NUL byte in the id', '{"id":"evt_\\u0000_nul","type":"x"}', /NUL/],
		['an id over 1,000 bytes', JSON.stringify({ id: 'x'.repeat(2000), type: 'x' }), /bytes/],
	])(
		'webhook template, %s: only the error output, answered 400 invalid-key',
		async (_l, body, why) => {
			const {
				answer,
				routed,
				errorItem: failed,
			} = await answerOf(webhookBranches, await signedDelivery(body));
			expect(routed).toEqual([0, 0, 0, 0, 1]);
			expect([answer.statusCode, answer.problem.status]).toEqual([400, 400]);
			expect(answer.problem.type).toMatch(/#invalid-key$/);
			expect(answer.problem.detail).toMatch(why);
			expect(failed.json.details).toEqual(clientErrorDetails('invalid-key'));
			// The input item's fields are merged in, as n8n does for an error output.
			expect(failed.json.headers['stripe-signature']).toBeDefined();
			expect(Object.keys(failed)).not.toContain('error');
		},
	);

	maybe.each([
		['no Idempotency-Key', {}, /missing/],
		['an overlong Idempotency-Key', { 'idempotency-key': `"${'x'.repeat(300)}"` }, /at most 255/],
		['an empty Idempotency-Key', { 'idempotency-key': '' }, /./],
	])('API template, %s: only the error output, answered 400', async (_l, headers, why) => {
		const { answer, routed, errorItem: failed } = await answerOf(apiBranches, apiRequest(headers));
		expect(routed).toEqual([0, 0, 0, 0, 1]);
		expect(answer.statusCode).toBe(400);
		expect(answer.problem.type).toMatch(/#invalid-idempotency-key$/);
		expect(answer.problem.detail).toMatch(why);
		expect(failed.json.details.kind).toBe('invalid-idempotency-key');
	});

	maybe('the key store unreachable: the error output, answered 500 with no details', async () => {
		const {
			answer,
			routed,
			errorItem: failed,
		} = await answerOf(
			webhookBranches,
			await signedDelivery('{"id":"evt_db_down","type":"x"}'),
			db.credential({ host: '127.0.0.1', port: 1 }),
		);
		expect(routed).toEqual([0, 0, 0, 0, 1]);
		expect(answer.statusCode).toBe(500);
		expect(failed.json.error).toMatch(/127\.0\.0\.1/);
		expect(failed.json.details).toBeUndefined();
	});

	maybe(
		'fingerprint kinds: invalid-fingerprint and fingerprint-mismatch on the error output',
		async () => {
			const reserve = {
				...apiBranches.reserve,
				parameters: {
					...apiBranches.reserve.parameters,
					namespace: 'orders',
					fingerprint: 'expression',
					fingerprintExpression: '={{ $json.body.order }}',
					onMismatch: 'error',
				},
			};
			const workflow = { name: 'Reserve', nodes: [reserve], connections: {} };
			const send = async (body, key) => {
				const result = await run(
					workflow,
					[webhookItem({ body, headers: { 'idempotency-key': `"${key}"` } })],
					{ credentials: db.credential() },
				);
				const count = result.outputCount(reserve.name);
				return {
					routed: [...Array(count).keys()].map((o) => result.output(reserve.name, o).length),
					last: result.output(reserve.name, count - 1)[0],
				};
			};
			const key = randomUUID();
			expect((await send({ order: { sku: 'A' } }, key)).routed).toEqual([1, 0, 0, 0]);
			const missing = await send({}, randomUUID());
			expect(missing.routed).toEqual([0, 0, 0, 1]);
			expect(missing.last.json.details.kind).toBe('invalid-fingerprint');
			const mismatch = await send({ order: { sku: 'B' } }, key);
			expect(mismatch.routed).toEqual([0, 0, 0, 1]);
			expect(mismatch.last.json.details.kind).toBe('fingerprint-mismatch');
		},
	);

	maybe(
		'Verify Webhook Signature: an item without its raw body goes to the error output',
		async () => {
			const verify = {
				...require('../fixtures/verify.workflow.json').nodes[0],
				onError: 'continueErrorOutput',
			};
			const result = await run(
				{ name: 'Verify', nodes: [verify], connections: {} },
				[webhookItem({ body: { id: 'evt_1' }, withRawBody: false })],
				{ credentialsByType: { webhookSigningSecretApi: { secret: stripe.secret } } },
			);
			expect(result.output(verify.name, 0)).toEqual([]);
			expect(result.output(verify.name, 1)).toEqual([]);
			const [failed] = result.output(verify.name, 2);
			expect(failed.json.error).toMatch(/raw body|binary/i);
			expect(failed.json.message).toBeDefined();
		},
	);

	maybe(
		'controls: the engine’s own rule for an item by json alone and for an open error',
		async () => {
			const [, error] = ERRORS[0];
			const json = errorItem(contextWith('continueErrorOutput'), error, 0).json;
			const outputsFor = async (make) => {
				handOn = (items) => items.map((_item, index) => make(index));
				const result = await run(handOnWorkflow, [input]);
				return [0, 1].map((o) => result.output('Hand On', o));
			};
			const byJson = await outputsFor((index) => ({ json, pairedItem: { item: index } }));
			const open = await outputsFor((index) => ({ json, error, pairedItem: { item: index } }));
			if (run === runWorkflow) {
				// 2.x: json with details is an error item; an open error loses the json.
				expect(byJson.map((items) => items.length)).toEqual([0, 1]);
			} else {
				// 1.x: json with details stays on the regular output (the bug this package worked around).
				expect(byJson.map((items) => items.length)).toEqual([1, 0]);
			}
			expect(open.map((items) => items.length)).toEqual([0, 1]);
			expect(open[1][0].json).toEqual({ error: error.message });
		},
	);
});
