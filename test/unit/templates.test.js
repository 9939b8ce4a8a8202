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
		]),
	);
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

test.each([
	'idempotent-webhook.json',
	'exactly-once-postgres.json',
	'idempotent-http-call.json',
	'idempotent-api.json',
	'multi-step.json',
])('every path of %s ends in an answer (else n8n answers 200 with an empty body)', (file) => {
	const workflow = templates.find(([name]) => name === file)[1];
	const leaves = workflow.nodes.filter(
		(node) =>
			node.type !== 'n8n-nodes-base.stickyNote' &&
			!(workflow.connections[node.name]?.main ?? []).some((targets) => targets.length > 0),
	);
	expect(leaves.length).toBeGreaterThanOrEqual(5);
	// A Respond node, or a node of this package that answers itself once its key is completed.
	const answers = (node) =>
		node.type === 'n8n-nodes-base.respondToWebhook' ||
		(node.type.startsWith('n8n-nodes-idempotency.') && node.parameters.respondToWebhook === true);
	for (const leaf of leaves) expect([leaf.name, answers(leaf)]).toEqual([leaf.name, true]);
	// n8n refuses a "Using Respond to Webhook Node" Webhook without one such node after it.
	expect(workflow.nodes.some((node) => node.type === 'n8n-nodes-base.respondToWebhook')).toBe(true);
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
});
