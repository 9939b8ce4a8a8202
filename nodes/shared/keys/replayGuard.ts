/**
 * Reserve's replay guard. GitHub's and Shopify's presets key on a delivery id header
 * (X-GitHub-Delivery, X-Shopify-Event-Id) that their signatures do not cover, and neither scheme has
 * a timestamp: a captured body and signature resent under a fresh id would verify and be new every
 * time. When Reserve verifies the signature and the key's id comes from such a header, the key is
 * made from the signed bytes instead (the body hash), so the same signed bytes are one key whatever
 * the id header says. Whether a header is signed comes from the scheme (`signedHeaders`, filled from
 * the provider table), never from a list of providers here.
 * Pure, without n8n's types.
 */
import type { SignatureScheme } from '../webhook/signatureSchemes';
import type { IdLocation } from './keySourceTable';

/**
 * Whether this key source takes its id from a header the scheme does not sign. A timestamp does not
 * change the answer: it only narrows a replay to the tolerance, during which fresh ids would still
 * be new. Sources whose id is in the body (signed with it), a signed header (Standard Webhooks'
 * webhook-id) or an expression are left alone; an expression is the user's to point at signed data.
 */
export function keyIdIsUnsigned(
	location: IdLocation,
	scheme: Pick<SignatureScheme, 'signedHeaders'>,
): boolean {
	if (location.kind !== 'headers') return false;
	const signed = new Set(scheme.signedHeaders.map((name) => name.toLowerCase()));
	return location.names.some((name) => !signed.has(name.toLowerCase()));
}
