import {
	GENERIC_HMAC,
	PROVIDERS,
	signatureChoices,
	type ProviderDefinition,
	type ProviderValue,
} from './providers';
import type { HmacAlgorithm, SignatureEncoding, SignatureScheme } from './schemeTypes';
import { MALFORMED, readAll, readSingle, seconds } from './signatureReaders';

export type {
	HeaderLookup,
	HmacAlgorithm,
	InvalidReason,
	ReadResult,
	SecretFormat,
	SignatureEncoding,
	SignatureScheme,
	SignedRequest,
} from './schemeTypes';

/**
 * How each webhook sender signs its deliveries, made from the provider table (providers.ts), where
 * adding a provider is adding one entry. Every scheme here signs "<prefix><raw body>" with an HMAC,
 * where the prefix is built from headers (Stripe's `t`, Standard Webhooks' id and timestamp, Slack's
 * timestamp) or is empty (GitHub, Shopify). This module only reads headers; verifySignature.ts does
 * the crypto.
 */

/** Values are stored in workflows: never rename them. */
export type Provider = ProviderValue | typeof GENERIC_HMAC.value;
/** One scheme per provider of the table, by its value. */
export function schemesFrom<P extends ProviderDefinition>(
	providers: readonly P[],
): Record<P['value'], SignatureScheme> {
	return Object.fromEntries(
		providers.map(({ value, label, signature }) => [value, { label, ...signature }]),
	) as Record<P['value'], SignatureScheme>;
}

export const SIGNATURE_SCHEMES: Readonly<Record<Exclude<Provider, 'hmac'>, SignatureScheme>> =
	schemesFrom(PROVIDERS);

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

/** Generic HMAC: `<header>: <prefix><signature>` over the raw body, or over `<timestamp>.<raw body>` with a timestamp header. */
export function hmacScheme(settings: HmacSettings): SignatureScheme {
	const timestampHeader = settings.timestampHeader.trim();
	const signatureHeader = settings.header.trim();
	return {
		label: GENERIC_HMAC.label,
		headers: timestampHeader ? [signatureHeader, timestampHeader] : [signatureHeader],
		algorithm: settings.algorithm,
		encoding: settings.encoding,
		secretFormat: 'text',
		hasTimestamp: timestampHeader !== '',
		signedHeaders: timestampHeader ? [timestampHeader] : [],
		read: (header) => {
			const single = readSingle(signatureHeader, settings.signaturePrefix, header);
			if (!timestampHeader || 'invalid' in single) return single;
			const values = readAll(header, [timestampHeader]);
			if (!Array.isArray(values)) return values;
			const timestamp = seconds(values[0]);
			if (timestamp === undefined) return MALFORMED;
			return { ...single, prefix: `${values[0]}.`, timestamp };
		},
	};
}

/** Every choice of scheme, value and label, in the nodes' order (the table's, Generic HMAC last). */
export function providerListFrom<P extends ProviderDefinition>(
	providers: readonly P[],
): Array<{ value: P['value'] | typeof GENERIC_HMAC.value; label: string }> {
	return signatureChoices(providers).map(({ value, label }) => ({ value, label }));
}

export const PROVIDER_OPTIONS: ReadonlyArray<{ value: Provider; label: string }> =
	providerListFrom(PROVIDERS);
