// A shipped template cut down to its Reserve node and the branches right after it, for the engine
// tests: the Respond node on Reserve's error output as shipped up to Reserve 2.1 (withErrorOutput;
// test/support/respondProbe.js stands in
// for n8n's), every other branch a pass-through node of the same name, so a test sees where each item
// went and what the error answer would have been.
const { registerTestNode } = require('./engine');
const { RESPOND_TYPE } = require('./respondProbe');

const RESERVE_TYPE = 'n8n-nodes-idempotency.idempotencyReserve';
const RESPOND_NODES = require('../fixtures/problemRespondNodes.json');

registerTestNode('branch', async function () {
	return [this.getInputData()];
});

/**
 * The template's Reserve node and every branch after it, one node deep: the Respond node on its
 * error output (and those named in `shipped`) as shipped, the other branches (business step,
 * Respond nodes) as pass-through nodes of the same names.
 * @param {{ name: string, nodes: any[], connections: Record<string, any> }} template
 * @param {string[]} [shipped]
 */
function reserveAndErrorAnswer(template, shipped = []) {
	return reserveBranches(withErrorOutput(template), shipped);
}

/**
 * The template as shipped up to Reserve 2.1, where Reserve 2.2 answers problems itself: Reserve 2.1
 * continuing on its error output into the Respond node those templates had
 * (test/fixtures/problemRespondNodes.json). What a saved workflow of that time still does, and
 * what a user who routes Reserve's errors to their own nodes builds.
 * @param {{ name: string, nodes: any[], connections: Record<string, any> }} template
 */
function withErrorOutput(template) {
	const reserve = template.nodes.find((node) => node.type === RESERVE_TYPE);
	if (reserve.onError === 'continueErrorOutput') return template;
	const respond =
		reserve.parameters.keySource === 'idempotencyKeyHeader'
			? RESPOND_NODES.api
			: RESPOND_NODES.webhook;
	const connections = structuredClone(template.connections);
	connections[reserve.name].main.push([{ node: respond.name, type: 'main', index: 0 }]);
	return {
		...template,
		nodes: [
			...template.nodes.map((node) =>
				node === reserve ? { ...node, typeVersion: 2.1, onError: 'continueErrorOutput' } : node,
			),
			{ ...respond, id: 'respond-problem', position: [0, 0] },
		],
		connections,
	};
}

/** @param {{ name: string, nodes: any[], connections: Record<string, any> }} template @param {string[]} shipped */
function reserveBranches(template, shipped) {
	const reserve = template.nodes.find((node) => node.type === RESERVE_TYPE);
	const outputs = template.connections[reserve.name].main;
	const errorTarget = outputs.at(-1)[0].node;
	const branches = outputs.flat().map((connection) => {
		const node = template.nodes.find((candidate) => candidate.name === connection.node);
		return node.name === errorTarget || shipped.includes(node.name)
			? node
			: { ...node, type: 'test.branch', typeVersion: 1 };
	});
	return {
		reserve,
		errorTarget,
		workflow: {
			name: template.name,
			nodes: [reserve, ...branches],
			connections: { [reserve.name]: template.connections[reserve.name] },
			settings: { executionOrder: 'v1' },
		},
	};
}

module.exports = { reserveAndErrorAnswer, withErrorOutput, RESERVE_TYPE, RESPOND_TYPE };
