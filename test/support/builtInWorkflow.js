// What the built-in-nodes workflow tests share: the planner's bundle as the page and CLI load it,
// settings keyed by the Stripe preset, and a node of a generated workflow by name.
const path = require('node:path');

const builtIn = require(path.join(__dirname, '..', '..', 'dist', 'planner', 'builtIn.cjs'));

/** The planner's defaults with the Stripe preset, and `changes` over them. @param {Record<string, unknown>} [changes] */
function settings(changes = {}) {
	return { ...builtIn.DEFAULT_SETTINGS, keySource: 'stripe', ...changes };
}

/** @param {any} workflow @param {string} name */
function node(workflow, name) {
	const found = workflow.nodes.find((/** @type {any} */ n) => n.name === name);
	if (!found) throw new Error(`no node ${name}`);
	return found;
}

module.exports = { builtIn, settings, node };
