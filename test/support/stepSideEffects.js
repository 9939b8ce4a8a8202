// The two side effects of the step-record tests (create customer, send receipt) as n8n nodes, one
// builder for every suite that runs them: each call is counted, and each output is the node's own
// (an HTTP Request's answer), so nothing of Reserve's output is left in the item.
const { registerTestNode } = require('./engine');

/**
 * Registers the two side effects under the given node type names (two suites' names kept apart in
 * one engine) and returns what the tests steer and read: the calls by event id and customer, the
 * events whose next receipt fails once, and a hook run while "create customer" runs.
 */
function registerStepSideEffects({
	createCustomer = 'createCustomer',
	sendReceipt = 'sendReceipt',
} = {}) {
	/** @type {{ customer: Array<{ event: string, customer: string }>, receipt: Array<{ event: string, customer: string }> }} */
	const calls = { customer: [], receipt: [] };
	const failReceiptOnce = new Set();
	const state = {
		calls,
		failReceiptOnce,
		/** Called while "create customer" runs, to act from another execution in between. */
		/** @type {(event: string) => Promise<void>} */
		duringCustomer: async () => undefined,
		reset() {
			calls.customer.length = 0;
			calls.receipt.length = 0;
			failReceiptOnce.clear();
			state.duringCustomer = async () => undefined;
		},
		createCustomer,
		sendReceipt,
	};

	/**
	 * @param {string} name
	 * @param {Array<{ event: string, customer: string }>} calledWith
	 * @param {(event: string, calls: number) => object} output
	 * @param {{ during?: boolean, failsOnce?: boolean }} behaviour
	 */
	const register = (name, calledWith, output, behaviour) =>
		registerTestNode(
			name,
			async function () {
				const items = this.getInputData();
				const out = [];
				for (let item = 0; item < items.length; item++) {
					const event = String(this.getNodeParameter('event', item));
					const customer = String(this.getNodeParameter('customer', item, ''));
					calledWith.push({ event, customer });
					if (behaviour.during) await state.duringCustomer(event);
					if (behaviour.failsOnce && failReceiptOnce.delete(event)) {
						if (!this.continueOnFail()) throw new Error(`SMTP timeout for ${event}`);
						out.push({ json: { error: `SMTP timeout for ${event}` }, pairedItem: { item } });
						continue;
					}
					out.push({ json: output(event, calledWith.length), pairedItem: { item } });
				}
				return [out];
			},
			[
				{ displayName: 'Event', name: 'event', type: 'string', default: '' },
				{ displayName: 'Customer', name: 'customer', type: 'string', default: '' },
			],
		);
	register(
		state.createCustomer,
		calls.customer,
		(event, n) => ({ customerId: `cus_${event}_${n}` }),
		{
			during: true,
		},
	);
	register(state.sendReceipt, calls.receipt, (event) => ({ receiptSent: event }), {
		failsOnce: true,
	});
	return state;
}

module.exports = { registerStepSideEffects };
