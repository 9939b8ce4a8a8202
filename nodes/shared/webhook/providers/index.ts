import type { SigningDescription, VerificationDescription } from '../schemeTypes';
import { COMMERCE } from './commerce';
import { DEV_TOOLS } from './devTools';
import { ESTABLISHED } from './established';
import { MESSAGING } from './messaging';
import { PLATFORMS } from './platforms';
import type { ProviderDefinition } from './providerTypes';

export type {
	AnswerTimeout,
	EventIdLocation,
	ProviderDefinition,
	Unverifiable,
} from './providerTypes';
export type { HandshakeDefinition } from '../handshakeTypes';

/**
 * Every webhook provider, defined once: where it puts the event id and how it signs, as data. The
 * Key Source presets (keys/keySourceTable.ts), the signature schemes (signatureSchemes.ts), the
 * panel's Provider and Verify Signature options and subtitles (parameters/schemeProperties.ts),
 * the key planner's debugger, the built-in-nodes generator and docs/signatures.md are all made from
 * this table, in its order: adding a provider is adding one entry (and its test vector).
 * Pure data: the key planner page bundles it.
 */
export const PROVIDERS = [
	...ESTABLISHED,
	...COMMERCE,
	...DEV_TOOLS,
	...MESSAGING,
	...PLATFORMS,
] as const satisfies readonly ProviderDefinition[];

type Table = (typeof PROVIDERS)[number];
/** A provider's value, as stored in workflows. */
export type ProviderValue = Table['value'];
/** A provider the request alone proves: by its signature, or by the shared secret it repeats. */
export type VerifiableProvider = Extract<Table, { signing: VerificationDescription }>;
export type VerifiableValue = VerifiableProvider['value'];

export function isVerifiable<P extends ProviderDefinition>(
	provider: P,
): provider is P & { signing: VerificationDescription } {
	return !('unverifiable' in provider.signing);
}

/** A provider that signs its deliveries (not one proven by a shared secret alone). */
export function isSigned<P extends ProviderDefinition>(
	provider: P,
): provider is P & { signing: SigningDescription } {
	return isVerifiable(provider) && !('sharedSecret' in provider.signing);
}

/** The providers a signature check can be chosen for, in the table's order. */
export function verifiableFrom<P extends ProviderDefinition>(
	providers: readonly P[],
): Array<P & { signing: VerificationDescription }> {
	return providers.filter(isVerifiable);
}

/**
 * Generic HMAC: a signature scheme only, not a provider (no event id, so no Key Source preset). Its
 * scheme is built from the node's settings (hmacScheme), may carry a timestamp, and is listed last.
 */
export const GENERIC_HMAC = {
	value: 'hmac',
	label: 'Generic HMAC',
	description: 'Any sender: choose the header, algorithm and encoding',
} as const;

/** Every choice of signature scheme, in the nodes' order: the verifiable providers, Generic HMAC last. */
export function signatureChoices<P extends ProviderDefinition>(
	providers: readonly P[],
): ReadonlyArray<(P & { signing: VerificationDescription }) | typeof GENERIC_HMAC> {
	return [...verifiableFrom(providers), GENERIC_HMAC];
}
