import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { KeyError } from '../../shared/keys/KeyError';
import type { IdLocation } from '../../shared/keys/keySourceTable';
import { BODY_HASH_PREFIX, SIGNED_CONTENT_PREFIX } from '../../shared/keys/prefixes';
import { keyIdIsUnsigned } from '../../shared/keys/replayGuard';
import { wasWitnessed } from '../../shared/run/witnessedVerdicts';
import { SIGNATURE_SCHEMES, type Provider } from '../../shared/webhook/signatureSchemes';
import type { SignedKeyParts } from './deriveItemKey';

/**
 * Where a Reserve key comes from when a signature was verified, by Reserve itself or by Verify
 * Webhook Signature before it: one rule, "everything that decides the route comes from what the
 * signature covers".
 * - An id in a header the scheme does not sign (GitHub's X-GitHub-Delivery, Linear-Delivery,
 *   Twilio's idempotency token) is skipped while the replay guard is on: the key is the digest of
 *   the signed content (retryStableContent.ts), so a replay under a fresh id is a duplicate and so is
 *   the sender's own retry.
 * - An id in the signed body or a signed header is kept; where it is missing, the digest stands in
 *   for the body hash.
 * - Custom keys, the Idempotency-Key header and message ids are the user's or the client's: left alone.
 */

/**
 * What a verified delivery hands the key: the provider whose scheme verified it, the digest, and the
 * bytes when Reserve read them itself.
 */
export interface SignedVerdict {
	provider: string;
	digest: string;
	bytes?: Uint8Array;
}

/** Said on the item (`idempotency.keyFrom`) when the guard made the key from the signed content. */
export const KEY_FROM_SIGNED_CONTENT = 'signedContent';
/** Said when no signature was verified and the id came from a header its sender does not sign. */
export const KEY_FROM_UNSIGNED_HEADER = 'unsignedHeader';

const DIGEST = new RegExp(`^(?:${BODY_HASH_PREFIX}|${SIGNED_CONTENT_PREFIX})[0-9a-f]{64}$`);

/**
 * The verdict Verify Webhook Signature put on a valid item (`signature: { valid, provider, digest }`),
 * when Reserve does not check the signature itself; undefined for an item without one. A verdict
 * that no Verify of this execution made (witnessedVerdicts.ts) is the item's error: its JSON came
 * from somewhere else, and would choose the key.
 */
export function handedOnVerdict(
	context: IExecuteFunctions,
	item: INodeExecutionData,
): SignedVerdict | undefined {
	const signature = item.json.signature as IDataObject | undefined;
	if (signature === null || typeof signature !== 'object') return undefined;
	const { valid, provider, digest } = signature;
	if (valid !== true || typeof provider !== 'string' || typeof digest !== 'string')
		return undefined;
	if (!DIGEST.test(digest)) return undefined;
	if (!wasWitnessed(context, provider, digest))
		throw new KeyError(
			'The item says its signature was verified, but no Verify Webhook Signature of this execution verified it',
			"Nothing was reserved. Reserve trusts a verdict only from a Verify Webhook Signature earlier in the same execution: put one before Reserve, or let Reserve check the signature itself (Verify Signature). A verdict in the trigger's data (a queue message, a sub-workflow's input) is not one.",
		);
	return { provider, digest };
}

/** The headers a provider's scheme signs; none for Generic HMAC's id headers (it signs no id). */
function signedHeadersOf(provider: string): readonly string[] {
	return SIGNATURE_SCHEMES[provider as Exclude<Provider, 'hmac'>]?.signedHeaders ?? [];
}

export interface SignedKeyChoice extends SignedKeyParts {
	keyFrom?: string;
}

/** How one item's key uses its verdict. `guard`: the Replay Guard option. */
export function signedKeyChoice(
	location: IdLocation | undefined,
	verdict: SignedVerdict | undefined,
	guard: boolean,
): SignedKeyChoice {
	if (location === undefined) return {};
	const userOwned =
		location.kind === 'customKey' ||
		location.kind === 'idempotencyKeyHeader' ||
		location.kind === 'amqpMessage' ||
		location.kind === 'emailMessage';
	if (userOwned) return {};
	if (verdict === undefined) return {};
	const signed = { signedHeaders: signedHeadersOf(verdict.provider) };
	if (guard && location.kind === 'headers' && keyIdIsUnsigned(location, signed))
		return { guardDigest: verdict.digest, keyFrom: KEY_FROM_SIGNED_CONTENT };
	return { fallbackDigest: verdict.digest, bytes: verdict.bytes };
}

/**
 * Whether a preset keys on a header its own provider does not sign while no signature was
 * verified: said on the item and as a hint, never silently.
 */
export function keysOnUnsignedHeader(
	location: IdLocation | undefined,
	presetProvider: string | undefined,
): boolean {
	if (location?.kind !== 'headers' || presetProvider === undefined) return false;
	return keyIdIsUnsigned(location, { signedHeaders: signedHeadersOf(presetProvider) });
}

/** The execution hint when a preset keyed on an unsigned header with no signature verified. */
export const UNSIGNED_HEADER_HINT =
	'Reserve keyed on an id header this sender does not sign, and no signature was verified: a captured delivery resent under a fresh id would run again. Choose the provider in Verify Signature, or put Verify Webhook Signature before Reserve (its verdict keeps the replay guard).';
