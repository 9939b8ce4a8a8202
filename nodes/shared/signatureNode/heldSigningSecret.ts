import type { IExecuteFunctions } from 'n8n-workflow';

import { SIGNING_SECRET_CREDENTIAL_TYPE } from '../parameters/credentials';
import { nodeOfRun } from '../parameters/runNode';
import { ExpiringEntries } from '../run/expiringEntries';

/** The Webhook Signing Secret credential's fields, as n8n hands them over. */
export interface SigningSecretCredential {
	secret?: string;
	previousSecret?: string;
	/** The token a sender's unsigned handshake carries (Meta's hub.verify_token), as the user chose it. */
	verifyToken?: string;
	/** The header a shared-secret sender puts its secret in, where the user named it (Okta's field). */
	headerName?: string;
}

/**
 * The Webhook Signing Secret credential, asked of n8n at most once every KEEP_MS per credential in
 * this process: every getCredentials loads the credential from n8n's database and decrypts it, about
 * 1 % of a delivery's CPU, on every delivery Reserve or Verify Webhook Signature checks.
 * - Held only to accept: a check that refuses anything with a held copy (a signature, a shared
 *   secret, a handshake's verify token) is made again with a fresh read (verifyItemSignatures), so
 *   a corrected or rotated-in secret applies to the next delivery.
 * - Keyed by the node's own credential id: a node only gets the credential it is set to use, which
 *   n8n allowed its workflow when the execution started. A node without an id is never held.
 * - Never held in a run that carries an end user's identity for credentials (n8n 2.x dynamic
 *   credentials): there one credential id may resolve to another secret per identity, and a copy
 *   held from one identity's run must not verify a delivery in another's.
 * - What it costs: a secret taken out of the credential (Previous Secret emptied after a rotation)
 *   still verifies in this process for KEEP_MS at most, as a sender's own rollover window does.
 */
const KEEP_MS = 10_000;
/** Entries past KEEP_MS are swept when this many are held. */
const SWEEP_AT = 64;

const held = new ExpiringEntries<SigningSecretCredential>(SWEEP_AT);

/** The credential, and whether it is a held copy (then a refusal is checked again with `fresh`). */
export async function signingSecretCredential(
	context: IExecuteFunctions,
	{ fresh = false, now = performance.now() }: { fresh?: boolean; now?: number } = {},
): Promise<{ credential: SigningSecretCredential; held: boolean }> {
	const id = identityBound(context)
		? undefined
		: nodeOfRun(context).credentials?.[SIGNING_SECRET_CREDENTIAL_TYPE]?.id;
	const kept = id && !fresh ? held.get(id, now) : undefined;
	if (kept !== undefined) return { credential: kept, held: true };
	const credential = (await context.getCredentials(
		SIGNING_SECRET_CREDENTIAL_TYPE,
	)) as SigningSecretCredential;
	if (id) held.set(id, credential, now + KEEP_MS, now);
	return { credential, held: false };
}

/** Does this run resolve credentials for an end user's identity? (Older n8n has no getExecutionContext.) */
function identityBound(context: IExecuteFunctions): boolean {
	return context.getExecutionContext?.()?.credentials !== undefined;
}
