// The importable templates as n8n checks them on import: unique node ids and names, connections to
// nodes that exist, no credential ids, and (webhook template) every path ending in a Respond node.
const { describe, test, expect } = require('@jest/globals');
const { readdirSync, readFileSync } = require('node:fs');
const path = require('node:path');

const WORKFLOWS = path.join(__dirname, '..', '..', 'workflows');
const templates = readdirSync(WORKFLOWS)
	.filter((file) => file.endsWith('.json'))
	.map((file) => [file, JSON.parse(readFileSync(path.join(WORKFLOWS, file), 'utf8'))]);

test('there are templates to check', () => {
	expect(templates.map(([file]) => file)).toEqual(
		expect.arrayContaining(['idempotent-webhook.json', 'purge-keys.json']),
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

test('every path of the webhook template ends in a Respond node (else n8n answers 200 with an empty body)', () => {
	const workflow = templates.find(([file]) => file === 'idempotent-webhook.json')[1];
	const leaves = workflow.nodes.filter(
		(node) =>
			node.type !== 'n8n-nodes-base.stickyNote' &&
			!(workflow.connections[node.name]?.main ?? []).some((targets) => targets.length > 0),
	);
	expect(leaves.length).toBeGreaterThanOrEqual(5);
	for (const leaf of leaves)
		expect([leaf.name, leaf.type]).toEqual([leaf.name, 'n8n-nodes-base.respondToWebhook']);
});
