import type { IExecuteFunctions } from 'n8n-workflow';

import { KEY_STORE_CREDENTIAL_TYPE } from '../parameters/credentials';
import { nodeOfRun } from '../parameters/runNode';
import type { IdempotencyPostgresCredential } from '../transport/connectionOptions';
import { ExpiringEntries } from './expiringEntries';

/**
 * The key store's credential, asked of n8n once per execution: Reserve reads it, and Complete Key,
 * Release Key and Idempotency Step in the same execution take the same one instead of asking again.
 * Each getCredentials loads the credential from n8n's database and decrypts it (about 1 % of a
 * delivery's CPU; three nodes of a two-step workflow ask).
 * - Keyed by the execution and the node's own credential id: a node only gets the credential it is
 *   set to use, which n8n allowed this workflow when the execution started.
 * - Held in this process's memory for KEEP_MS at most: an edited credential is read by the next
 *   execution, or by this one after that long. Another process (a queue-mode worker, an execution
 *   resumed after a Wait) asks n8n itself.
 */
const KEEP_MS = 30_000;
/** Entries past KEEP_MS are swept when this many are held. */
const SWEEP_AT = 256;

const held = new ExpiringEntries<IdempotencyPostgresCredential>(SWEEP_AT);

/** Where this run's credential is held, or undefined when the run has no execution or credential id. */
function heldId(context: IExecuteFunctions): string | undefined {
	const executionId = context.getExecutionId();
	const credentialId = nodeOfRun(context).credentials?.[KEY_STORE_CREDENTIAL_TYPE]?.id;
	if (!executionId || !credentialId) return undefined;
	return `${executionId}\u0000${credentialId}`;
}

/** The node's key store credential: the one this execution already read, else n8n's. */
export async function keyStoreCredential(
	context: IExecuteFunctions,
	now: number = performance.now(),
): Promise<IdempotencyPostgresCredential> {
	const id = heldId(context);
	const kept = id === undefined ? undefined : held.get(id, now);
	if (kept !== undefined) return kept;
	const credential = (await context.getCredentials(
		KEY_STORE_CREDENTIAL_TYPE,
	)) as unknown as IdempotencyPostgresCredential;
	if (id !== undefined) held.set(id, credential, now + KEEP_MS, now);
	return credential;
}
