// A stand-in for n8n's Respond to Webhook node (n8n-nodes-base is not a dependency here): the same
// parameters, resolved by the real engine's expressions, recorded as the answer the node would send.
// The real node runs in the end-to-end suites (test/e2e); this lets the engine tests check what a
// template's Respond node answers for the items that reach it.
const { registerNodeType } = require('./engine');

const RESPOND_TYPE = 'n8n-nodes-base.respondToWebhook';

/** @type {Array<{ node: string, statusCode: number, headers: Record<string, string>, body: string }>} */
const answers = [];

const respondProbe = {
	description: {
		displayName: 'Respond to Webhook (probe)',
		name: 'respondToWebhook',
		group: ['transform'],
		version: [1, 1.1, 1.2, 1.3, 1.4, 1.5],
		defaults: {},
		inputs: ['main'],
		outputs: ['main'],
		properties: [
			{ displayName: 'Respond With', name: 'respondWith', type: 'string', default: 'json' },
			{ displayName: 'Response Body', name: 'responseBody', type: 'string', default: '' },
			{
				displayName: 'Options',
				name: 'options',
				type: 'collection',
				default: {},
				options: [
					{ displayName: 'Response Code', name: 'responseCode', type: 'number', default: 200 },
					{
						displayName: 'Response Headers',
						name: 'responseHeaders',
						type: 'fixedCollection',
						typeOptions: { multipleValues: true },
						default: {},
						options: [
							{
								displayName: 'Entries',
								name: 'entries',
								values: [
									{ displayName: 'Name', name: 'name', type: 'string', default: '' },
									{ displayName: 'Value', name: 'value', type: 'string', default: '' },
								],
							},
						],
					},
				],
			},
		],
	},
	/** @this {import('n8n-workflow').IExecuteFunctions} */
	async execute() {
		// Like the real node: the first item's parameters make the one answer.
		const options = /** @type {any} */ (this.getNodeParameter('options', 0, {}));
		const headers = Object.fromEntries(
			(options.responseHeaders?.entries ?? []).map(({ name, value }) => [
				String(name).toLowerCase(),
				String(value),
			]),
		);
		const value = this.getNodeParameter('responseBody', 0, '');
		// Respond With JSON: n8n sends the value as JSON, as Express's res.json does.
		const json = this.getNodeParameter('respondWith', 0, 'json') === 'json';
		if (json) headers['content-type'] ??= 'application/json; charset=utf-8';
		answers.push({
			node: this.getNode().name,
			statusCode: options.responseCode || 200,
			headers,
			body: json
				? JSON.stringify(typeof value === 'string' ? JSON.parse(value) : value)
				: String(value),
		});
		return [this.getInputData()];
	},
};

registerNodeType(RESPOND_TYPE, respondProbe);

/** The answers recorded since the last call, emptied. */
function takeAnswers() {
	return answers.splice(0, answers.length);
}

module.exports = { takeAnswers, RESPOND_TYPE };
