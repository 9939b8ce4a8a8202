// Evaluates the expressions of a generated workflow (the planner's built-in-nodes workflow) with
// n8n-workflow's own expression engine, the code n8n runs: no n8n-nodes-base needed, since
// n8n-workflow resolves a parameter of a node whose type it does not know. Also splits a parameter
// the way n8n does (@n8n/tournament), so a test can see where n8n thinks an expression ends.
const { Workflow } = require('n8n-workflow');
const { splitExpression } = require('@n8n/tournament/dist/ExpressionSplitter.js');

/** No node types: n8n-workflow skips unknown types' defaults, which expressions do not need. */
const NO_NODE_TYPES = {
	getByName: () => undefined,
	getByNameAndVersion: () => undefined,
	getKnownTypes: () => ({}),
};

/**
 * @param {{ nodes: any[], connections: object }} generated
 */
function expressionsOf(generated) {
	const workflow = new Workflow({
		id: 'expressions',
		nodes: structuredClone(generated.nodes),
		connections: generated.connections,
		active: false,
		nodeTypes: /** @type {any} */ (NO_NODE_TYPES),
		settings: {},
	});
	return {
		/**
		 * A parameter value of node `nodeName` for this input item, as n8n resolves it there.
		 * @param {string} nodeName
		 * @param {unknown} value the stored parameter (`={{ … }}` or fixed)
		 * @param {{ json: object, binary?: object }} item the node's input item
		 * @param {Record<string, { json: object, binary?: object }>} [earlier] output items of earlier nodes, by name ($('Name'))
		 * @returns {any} what n8n resolves it to
		 */
		evaluate(nodeName, value, item, earlier = {}) {
			const runData = Object.fromEntries(
				Object.entries(earlier).map(([name, output]) => [
					name,
					[
						{
							startTime: 0,
							executionTime: 0,
							executionIndex: 0,
							source: [],
							data: { main: [[output]] },
						},
					],
				]),
			);
			return workflow.expression.getParameterValue(
				/** @type {any} */ (value),
				/** @type {any} */ ({ resultData: { runData } }),
				0,
				0,
				nodeName,
				[/** @type {any} */ (item)],
				'manual',
				{},
			);
		},
	};
}

/**
 * Every string of the workflow that n8n reads as an expression (a leading "="), with where it is.
 * @param {unknown} value
 * @param {string} [at]
 * @returns {Array<{ at: string, text: string }>}
 */
function storedExpressions(value, at = '') {
	if (typeof value === 'string') return value.startsWith('=') ? [{ at, text: value }] : [];
	if (Array.isArray(value))
		return value.flatMap((entry, index) => storedExpressions(entry, `${at}[${index}]`));
	if (value !== null && typeof value === 'object')
		return Object.entries(value).flatMap(([key, entry]) =>
			storedExpressions(entry, `${at}.${key}`),
		);
	return [];
}

/**
 * How n8n splits a stored expression into text and code: one `{{ … }}` whose code runs to the end is
 * what every expression of the generator must be.
 * @param {string} stored
 */
function isOneWholeExpression(stored) {
	const chunks = splitExpression(stored.slice(1));
	const code = chunks.filter((chunk) => chunk.type === 'code');
	const text = chunks.filter((chunk) => chunk.type === 'text').map((chunk) => chunk.text);
	return (
		code.length === 1 &&
		/** @type {{ hasClosingBrackets: boolean }} */ (code[0]).hasClosingBrackets &&
		text.every((t) => t.trim() === '')
	);
}

module.exports = { expressionsOf, storedExpressions, isOneWholeExpression };
