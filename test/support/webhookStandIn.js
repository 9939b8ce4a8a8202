// n8n's Webhook node as Reserve sees it (n8n-nodes-base is not a dependency here): a parent of its
// type, with its Respond setting, that hands the delivery on. Reserve answers only behind one set
// to "Using 'Respond to Webhook' Node" (nodes/IdempotencyReserve/helpers/answerProblems.ts).
const { registerNodeType } = require('./engine');

registerNodeType('n8n-nodes-base.webhook', {
	description: {
		displayName: 'Webhook (stand-in)',
		name: 'webhook',
		group: ['trigger'],
		version: [2, 2.1],
		defaults: {},
		inputs: ['main'],
		outputs: ['main'],
		// As n8n's own: answered when the workflow ends, or by a node ("Using 'Respond to Webhook' Node").
		properties: [
			{
				displayName: 'Respond',
				name: 'responseMode',
				type: 'options',
				options: [
					{ name: 'Immediately', value: 'onReceived' },
					{ name: 'When Last Node Finishes', value: 'lastNode' },
					{ name: "Using 'Respond to Webhook' Node", value: 'responseNode' },
				],
				default: 'onReceived',
			},
		],
	},
	/** @this {import('n8n-workflow').IExecuteFunctions} */
	async execute() {
		return [this.getInputData()];
	},
});
