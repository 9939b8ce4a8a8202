// Stand-ins for the n8n-nodes-base nodes that saved workflows hold around the package's nodes
// (n8n-nodes-base is not a dependency here), so a whole saved workflow runs through the real engine:
// the Postgres node's Execute Query (run against the test's database, with its Query Parameters as
// n8n resolves them), the IF node's string "is equal to" and boolean "is true" conditions, and the
// Schedule Trigger and the No Operation node handing their items on. Each keeps the real node's
// type, parameter names and outputs; what they do not cover fails loudly instead of routing an item
// somewhere.
const { registerNodeType } = require('./engine');

/** @type {{ query?: (text: string, values?: unknown[]) => Promise<{ rows: object[] }> }} */
const business = {};

/**
 * The database the Postgres stand-in writes to (a test's own).
 * @param {(text: string, values?: unknown[]) => Promise<{ rows: object[] }>} query
 */
function useBusinessDatabase(query) {
	business.query = query;
}

registerNodeType('n8n-nodes-base.postgres', {
	description: {
		displayName: 'Postgres (stand-in)',
		name: 'postgres',
		group: ['input'],
		version: [2, 2.1, 2.2, 2.3, 2.4, 2.5, 2.6],
		defaults: {},
		inputs: ['main'],
		outputs: ['main'],
		properties: [
			{ displayName: 'Operation', name: 'operation', type: 'string', default: 'executeQuery' },
			{ displayName: 'Query', name: 'query', type: 'string', default: '' },
			{
				displayName: 'Options',
				name: 'options',
				type: 'collection',
				default: {},
				options: [
					{
						displayName: 'Query Parameters',
						name: 'queryReplacement',
						type: 'string',
						default: '',
					},
				],
			},
		],
	},
	/** @this {import('n8n-workflow').IExecuteFunctions} */
	async execute() {
		if (business.query === undefined) throw new Error('useBusinessDatabase() was not called');
		const out = [];
		for (const [index] of this.getInputData().entries()) {
			if (this.getNodeParameter('operation', index) !== 'executeQuery')
				throw new Error('the stand-in runs Execute Query only');
			const query = /** @type {string} */ (this.getNodeParameter('query', index));
			const options = /** @type {any} */ (this.getNodeParameter('options', index, {}));
			const values =
				options.queryReplacement === undefined ? [] : [options.queryReplacement].flat();
			const result = await business.query(query, values);
			out.push(
				...(result.rows.length > 0 ? result.rows : [{ success: true }]).map((json) => ({
					json,
					pairedItem: { item: index },
				})),
			);
		}
		return [out];
	},
});

registerNodeType('n8n-nodes-base.if', {
	description: {
		displayName: 'If (stand-in)',
		name: 'if',
		group: ['transform'],
		version: [2, 2.1, 2.2],
		defaults: {},
		inputs: ['main'],
		outputs: ['main', 'main'],
		properties: [
			{ displayName: 'Conditions', name: 'conditions', type: 'filter', default: {} },
			{ displayName: 'Options', name: 'options', type: 'collection', default: {}, options: [] },
		],
	},
	/** @this {import('n8n-workflow').IExecuteFunctions} */
	async execute() {
		const yes = [];
		const no = [];
		for (const [index, item] of this.getInputData().entries()) {
			const filter = /** @type {any} */ (
				this.getNodeParameter('conditions', index, {}, { rawExpressions: false })
			);
			const results = filter.conditions.map((/** @type {any} */ condition) => {
				const { type, operation } = condition.operator;
				if (type === 'string' && operation === 'equals')
					return condition.leftValue === condition.rightValue;
				if (type === 'boolean' && operation === 'true') return condition.leftValue === true;
				throw new Error(`the stand-in does not know the ${type} ${operation} condition`);
			});
			const passed = filter.combinator === 'or' ? results.some(Boolean) : results.every(Boolean);
			(passed ? yes : no).push({ ...item, pairedItem: { item: index } });
		}
		return [yes, no];
	},
});

/**
 * A node that hands its items on unchanged, as the Schedule Trigger (started with an item) and the
 * No Operation node do.
 * @param {string} name @param {string} displayName @param {string} group @param {number[]} version
 */
function registerPassThrough(name, displayName, group, version) {
	registerNodeType(`n8n-nodes-base.${name}`, {
		description: {
			displayName: `${displayName} (stand-in)`,
			name,
			group: [group],
			version,
			defaults: {},
			inputs: ['main'],
			outputs: ['main'],
			properties: [],
		},
		/** @this {import('n8n-workflow').IExecuteFunctions} */
		async execute() {
			return [this.getInputData()];
		},
	});
}

registerPassThrough('scheduleTrigger', 'Schedule Trigger', 'trigger', [1, 1.1, 1.2]);
registerPassThrough('noOp', 'No Operation', 'organization', [1]);

module.exports = { useBusinessDatabase };
