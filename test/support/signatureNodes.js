// The two nodes that check a sender's signature (or shared secret), set to one provider of the
// table, as engine tests build them: Reserve 2.1 with Verify Signature, and Verify Webhook Signature
// 1.1. Each comes with its outputs: `count`, and where refused items go (`invalidSignature`).
const { PACKAGE } = require('./engine');
const { reserveOutputs } = require('../../dist/nodes/shared/reserveRules/reserveOutputs');

const RESERVE = 'Idempotency Reserve';
const VERIFY = 'Verify Webhook Signature';

/** Reserve's parameters besides the provider: a lease on the engine tests' key table. */
const RESERVE_PARAMETERS = {
	mode: 'lease',
	leaseSeconds: 60,
	keySource: 'eventIdOrBodyHash',
	eventId: '={{ $json.body.id }}',
	rawBodyProperty: 'data',
	namespace: '',
	schema: 'public',
	table: 'processed_events',
	createTable: true,
};

/**
 * @param {string} provider the table's value, for Verify Signature
 * @param {Record<string, unknown>} [overrides] other parameters (a Key Source preset…)
 */
function reserveNode(provider, overrides = {}) {
	const parameters = { ...RESERVE_PARAMETERS, ...overrides, signature: provider };
	return {
		outputs: reserveOutputs(parameters, 2.1),
		node: {
			id: 'reserve',
			name: RESERVE,
			type: `${PACKAGE}.idempotencyReserve`,
			typeVersion: 2.1,
			position: [0, 0],
			parameters,
			credentials: {
				idempotencyPostgresApi: { id: '1', name: 'Idempotency Postgres' },
				webhookSigningSecretApi: { id: '2', name: 'Webhook Signing Secret' },
			},
		},
	};
}

/** @param {string} provider the table's value */
function verifyNode(provider) {
	return {
		outputs: { count: 2, invalidSignature: 1 },
		node: {
			id: 'verify',
			name: VERIFY,
			type: `${PACKAGE}.verifyWebhookSignature`,
			typeVersion: 1.1,
			position: [0, 0],
			parameters: { provider, rawBodyProperty: 'data' },
			credentials: { webhookSigningSecretApi: { id: '2', name: 'Webhook Signing Secret' } },
		},
	};
}

module.exports = { RESERVE, VERIFY, reserveNode, verifyNode };
