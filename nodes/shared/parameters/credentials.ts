/**
 * The package's two credentials, by their type names (stored in workflows: never rename them). The
 * node classes write them out literally too, with their tests: n8n's linter and its verification
 * scanner read a node's credentials and `testedBy` only from object literals in the class itself.
 */
export const KEY_STORE_CREDENTIAL_TYPE = 'idempotencyPostgresApi';
export const SIGNING_SECRET_CREDENTIAL_TYPE = 'webhookSigningSecretApi';
