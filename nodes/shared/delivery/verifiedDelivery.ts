import type { IDataObject } from 'n8n-workflow';

import { KeyError } from '../keys/KeyError';
import { BODY_HASH_PREFIX, SIGNED_CONTENT_PREFIX } from '../keys/prefixes';
import { retryStableContent, type BodyPath } from '../webhook/retryStableContent';
import type { VerificationDescription } from '../webhook/schemeTypes';
import {
	isParseRefusal,
	parseRefusalMessage,
	signedParse,
	type SignedParse,
} from '../webhook/signedParse';
import { sha256Hex } from './rawBody';

/** What the delivery's body must be once its signature holds (signedParse.ts, retryStableContent.ts). */
export interface DeliveryRules {
	/** The media types the sender uses: anything else is refused. */
	contentTypes: readonly string[];
	description: VerificationDescription;
	/** Body fields the sender renews on each attempt, left out of the replay guard's digest. */
	renewed: BodyPath[];
}

/**
 * A delivery whose signature holds, read once: what the key, the fingerprint and the replay guard
 * take from it. Everything here comes from the signed bytes (signedParse.ts, retryStableContent.ts).
 */
export interface VerifiedDelivery {
	/** The provider's value (or `hmac`) whose scheme verified it. */
	provider: string;
	/** The exact bytes, read once for the signature check: the key never reads them again. */
	bytes: Uint8Array;
	/** The signed body, parsed as its sender's media type (the same value as n8n's `$json.body`). */
	parse: SignedParse;
	/**
	 * The replay guard's digest: `sha256:<hex>` of the raw bytes where the signed content is the raw
	 * body alone, else `signed:<hex>` of the retry-stable content.
	 */
	digest: string;
}

/** The request parts a verified delivery is read from. */
export interface DeliveryParts {
	bytes: Uint8Array;
	headers: unknown;
	url?: string;
	n8nBody: unknown;
}

/**
 * The verified delivery, or the KeyError (kind `unsupported-media-type`) that refuses it: a media type
 * its sender does not use, or a body n8n read other than as signed.
 */
export function readVerifiedDelivery(
	provider: string,
	label: string,
	rules: DeliveryRules,
	parts: DeliveryParts,
): VerifiedDelivery | KeyError {
	const parse = signedParse(parts.bytes, parts.headers, parts.n8nBody, rules.contentTypes);
	if (isParseRefusal(parse)) {
		return new KeyError(
			parseRefusalMessage(parse, label),
			'Nothing was reserved. The sender posts its deliveries as the provider table says; a request that differs was changed on the way (a replay), or the sender is not the one chosen in the node.',
			'unsupported-media-type',
		);
	}
	const content = retryStableContent(rules.description, rules.renewed, {
		body: parts.bytes,
		parsedBody: parse.body,
		url: parts.url,
	});
	// A verified delivery's signed parts were all read by the check; the raw body is the fallback.
	const digest =
		content === undefined || content.kind === 'rawBody'
			? BODY_HASH_PREFIX + sha256Hex(parts.bytes)
			: SIGNED_CONTENT_PREFIX + sha256Hex(content.bytes);
	return { provider, bytes: parts.bytes, parse, digest };
}

/** What a valid item carries on in `signature`: the verdict, and what Reserve after Verify keys from. */
export function verdictOf(delivery: VerifiedDelivery): IDataObject {
	return { valid: true, provider: delivery.provider, digest: delivery.digest };
}
