// A workflow of one Idempotency Keys node (the operators' node), for the engine tests: the given
// parameters (and node fields, such as onError) on top of the key table's.
const KEYS_NODE = 'Idempotency Keys';

/**
 * @param {string} table the key table
 * @param {Record<string, unknown>} parameters
 * @param {Record<string, unknown>} [nodeFields]
 */
function keysWorkflow(table, parameters, nodeFields = {}) {
	return {
		name: `Idempotency Keys (test, ${table})`,
		nodes: [
			{
				parameters: { schema: 'public', table, ...parameters },
				id: 'a1a0c7d2-0000-4000-8000-000000000022',
				name: KEYS_NODE,
				type: 'n8n-nodes-idempotency.idempotencyKeys',
				typeVersion: 1,
				position: [0, 0],
				credentials: { idempotencyPostgresApi: { id: '1', name: 'Idempotency Postgres' } },
				...nodeFields,
			},
		],
		connections: {},
		settings: { executionOrder: 'v1' },
	};
}

module.exports = { KEYS_NODE, keysWorkflow };
