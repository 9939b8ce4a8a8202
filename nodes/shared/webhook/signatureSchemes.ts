import {
	GENERIC_HMAC,
	PROVIDERS,
	signatureChoices,
	verifiableFrom,
	type ProviderDefinition,
	type VerifiableValue,
} from './providers';
import { schemeFromDescription } from './schemeReader';
import type {
	HmacAlgorithm,
	SignatureEncoding,
	SignatureScheme,
	SignedScheme,
	SigningDescription,
} from './schemeTypes';

export type {
	HeaderLookup,
	HmacAlgorithm,
	InvalidReason,
	ReadResult,
	RequestParts,
	SecretFormat,
	SignatureEncoding,
	SignatureScheme,
	SignedRequest,
	SignedScheme,
	SharedSecretScheme,
	SigningAlgorithm,
	SigningDescription,
} from './schemeTypes';

/**
 * How each webhook sender signs its deliveries, made from the provider table (providers/), where
 * adding a provider is adding one entry: each verifiable provider's description becomes a scheme
 * through the one generic reader (schemeReader.ts). This module only reads requests;
 * verifySignature.ts does the crypto.
 */

/** Values are stored in workflows: never rename them. */
export type Provider = VerifiableValue | typeof GENERIC_HMAC.value;

/** One scheme per verifiable provider of the table, by its value. */
export function schemesFrom<P extends ProviderDefinition>(
	providers: readonly P[],
): Record<string, SignatureScheme> {
	return Object.fromEntries(
		verifiableFrom(providers).map(({ value, label, signing }) => [
			value,
			schemeFromDescription(label, signing),
		]),
	);
}

export const SIGNATURE_SCHEMES = schemesFrom(PROVIDERS) as Readonly<
	Record<VerifiableValue, SignatureScheme>
>;

/** The generic scheme's settings (node parameters). */
export interface HmacSettings {
	header: string;
	algorithm: HmacAlgorithm;
	encoding: SignatureEncoding;
	/** Text before the signature in the header, e.g. `sha256=`; empty for none. */
	signaturePrefix: string;
	/** When set, this header's value (whole seconds) is signed as `<timestamp>.<raw body>` and checked against the tolerance. */
	timestampHeader: string;
}

/** Generic HMAC's settings as a signing description: the same reader as every provider's. */
export function hmacDescription(settings: HmacSettings): SigningDescription {
	const timestampHeader = settings.timestampHeader.trim();
	return {
		algorithm: settings.algorithm,
		encoding: settings.encoding,
		secret: 'text',
		signatureHeaders: [settings.header.trim()],
		signature: { format: 'whole', prefix: settings.signaturePrefix },
		signs: timestampHeader ? '{timestamp}.{body}' : '{body}',
		...(timestampHeader
			? { timestamp: { from: 'header', header: timestampHeader, unit: 'seconds' } as const }
			: {}),
	};
}

/** Generic HMAC: `<header>: <prefix><signature>` over the raw body, or over `<timestamp>.<raw body>` with a timestamp header. */
export function hmacScheme(settings: HmacSettings): SignedScheme {
	return schemeFromDescription(GENERIC_HMAC.label, hmacDescription(settings));
}

/** Every choice of scheme, value and label, in the nodes' order (the table's, Generic HMAC last). */
export function providerListFrom<P extends ProviderDefinition>(
	providers: readonly P[],
): Array<{ value: string; label: string }> {
	return signatureChoices(providers).map(({ value, label }) => ({ value, label }));
}

export const PROVIDER_OPTIONS = providerListFrom(PROVIDERS) as ReadonlyArray<{
	value: Provider;
	label: string;
}>;
