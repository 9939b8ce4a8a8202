// A shipped template cut down to its Reserve node and the branches right after it, for the engine
// tests: the Respond node on Reserve's error output as shipped (test/support/respondProbe.js stands in
// for n8n's), every other branch a pass-through node of the same name, so a test sees where each item
// went and what the error answer would have been.
const { registerTestNode } = require('./engine');
const { RESPOND_TYPE } = require('./respondProbe');

const RESERVE_TYPE = 'n8n-nodes-idempotency.idempotencyReserve';

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

module.exports = { reserveAndErrorAnswer, RESERVE_TYPE, RESPOND_TYPE };
