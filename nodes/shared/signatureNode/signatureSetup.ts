import { NodeOperationError, type IExecuteFunctions } from 'n8n-workflow';

import {
	GENERIC_HMAC,
	PROVIDERS,
	type HandshakeDefinition,
	type ProviderDefinition,
} from '../webhook/providers';
import type { DeliveryRules } from '../delivery/verifiedDelivery';
import { perAttemptPaths } from '../webhook/retryStableContent';
import { JSON_MEDIA_TYPE, withStructuredJson } from '../webhook/signedParse';
import {
	hmacDescription,
	SIGNATURE_SCHEMES,
	type HmacAlgorithm,
	type Provider,
	type SignatureEncoding,
	type SecretFormat,
	type SignatureScheme,
} from '../webhook/signatureSchemes';
import { schemeFromDescription, schemeFromSharedSecret } from '../webhook/schemeReader';
import { signingKey, SigningSecretError } from '../webhook/verifySignature';
import { signingSecretCredential, type SigningSecretCredential } from './heldSigningSecret';
import { nodeParameter } from '../parameters/nodeParameter';

function settingsError(
	context: IExecuteFunctions,
	message: string,
	hint: string,
): NodeOperationError {
	return new NodeOperationError(context.getNode(), message, { description: hint });
}

/** What to paste into the credential, by the secret's form. */
const SECRET_HINTS: Readonly<Record<SecretFormat, (label: string) => string>> = {
	text: () => 'Copy the signing secret from the sender into the Webhook Signing Secret credential.',
	whsecBase64: (label) =>
		`${label} secrets look like whsec_ followed by base64: copy it again from the sender's dashboard into the Webhook Signing Secret credential.`,
	base64: (label) =>
		`${label} gives its secret as base64: copy it again, whole, into the Webhook Signing Secret credential.`,
	publicKeyHex: (label) =>
		`${label} signs with a key pair: paste its public key (64 hex digits, from the app's settings) into the Webhook Signing Secret credential.`,
	publicKeyBase64: (label) =>
		`${label} signs with a key pair: paste its verification public key (base64) into the Webhook Signing Secret credential.`,
};

/** The key of a credential field; a secret that does not decode is the credential's problem, said without its value. */
function keyOf(
	context: IExecuteFunctions,
	secret: string,
	scheme: SignatureScheme,
	field: string,
): Buffer | NodeOperationError {
	try {
		return signingKey(secret, scheme.secretFormat, field);
	} catch (error) {
		// signingKey only throws SigningSecretError, whose message names the field, never the value.
		const hint =
			scheme.kind === 'sharedSecret'
				? `${scheme.label} sends a shared secret you chose (Graph's clientState, Okta's authentication secret): put the same value into the Webhook Signing Secret credential's Secret.`
				: SECRET_HINTS[scheme.secretFormat](scheme.label);
		return settingsError(context, (error as SigningSecretError).message, hint);
	}
}

export interface SignatureSetup {
	provider: Provider;
	scheme: SignatureScheme;
	rules: DeliveryRules;
	/** HMAC keys to try: the current secret, then the previous one during a rotation. */
	keys: Buffer[];
	toleranceSeconds: number;
	rawBodyProperty: string;
	/** How the provider checks the endpoint before it delivers (handshakeTypes.ts), where it does. */
	handshake?: HandshakeDefinition;
	/** The credential's Verify Token, for a handshake that carries one. */
	verifyToken?: string;
	/** Made from a held copy of the credential (heldSigningSecret.ts): a refusal is checked again afresh. */
	held: boolean;
}

/** The tolerance a timestamped scheme gets when the node leaves it to the provider (0). */
export const DEFAULT_TOLERANCE_SECONDS = 300;

interface SchemeAndRules {
	scheme: SignatureScheme;
	rules: DeliveryRules;
	handshake?: HandshakeDefinition;
	/** The sender's own library's tolerance, where the table gives one. */
	toleranceSeconds: number;
}

const BY_VALUE: ReadonlyMap<string, ProviderDefinition> = new Map(
	PROVIDERS.map((provider) => [provider.value, provider]),
);

function schemeOf(context: IExecuteFunctions, provider: Provider): SchemeAndRules {
	if (provider !== 'hmac') {
		const scheme = SIGNATURE_SCHEMES[provider];
		const definition = BY_VALUE.get(provider);
		if (scheme === undefined || definition === undefined || 'unverifiable' in definition.signing)
			throw settingsError(
				context,
				`Unknown provider "${String(provider)}"`,
				'Pick a provider from the list.',
			);
		const description = definition.signing;
		const renewedFields = definition.retry?.renewedBodyFields;
		return {
			scheme,
			rules: {
				// A sender of JSON sends it under a `+json` type too (RFC 6839).
				contentTypes: withStructuredJson(definition.contentTypes),
				description,
				renewed: perAttemptPaths(description, renewedFields),
			},
			toleranceSeconds:
				('toleranceSeconds' in description ? description.toleranceSeconds : undefined) ??
				DEFAULT_TOLERANCE_SECONDS,
			handshake: definition.handshake,
		};
	}
	const header = (nodeParameter(context, 'signatureHeader', '') as string).trim();
	if (header === '')
		throw settingsError(
			context,
			'Signature Header is empty',
			'Enter the name of the header that carries the signature.',
		);
	const description = hmacDescription({
		header,
		algorithm: nodeParameter(context, 'algorithm', 'sha256') as HmacAlgorithm,
		encoding: nodeParameter(context, 'encoding', 'hex') as SignatureEncoding,
		signaturePrefix: nodeParameter(context, 'signaturePrefix', '') as string,
		timestampHeader: nodeParameter(context, 'timestampHeader', '') as string,
	});
	const contentTypes = context.getNodeParameter('mediaTypes', 0, [JSON_MEDIA_TYPE]) as string[];
	if (!Array.isArray(contentTypes) || contentTypes.length === 0)
		throw settingsError(
			context,
			'Media Types is empty',
			'Choose the media types the sender posts (JSON for most senders).',
		);
	return {
		scheme: schemeFromDescription(GENERIC_HMAC.label, description),
		rules: { contentTypes, description, renewed: perAttemptPaths(description) },
		toleranceSeconds: DEFAULT_TOLERANCE_SECONDS,
	};
}

/**
 * The tolerance: the node's when set, else (0, the default from Reserve 2.1 and Verify 1.1) the
 * provider's own library's (Paddle 5 s, Linear 60 s, Box 600 s, 300 s for most).
 */
function toleranceOf(context: IExecuteFunctions, providerDefault: number): number {
	const set = Number(nodeParameter(context, 'toleranceSeconds', 0));
	if (set === 0) return providerDefault;
	if (!(Number.isFinite(set) && set >= 1)) {
		throw settingsError(
			context,
			"Tolerance must be at least 1 second, or 0 for the provider's own",
			"Set Tolerance (Seconds) to 0 to use the provider's default, or to the seconds you allow.",
		);
	}
	return set;
}

/**
 * A header-borne shared secret read from the header the user named in the credential (Okta lets
 * the user name it), else the table's; every other scheme as it is.
 */
function withSecretHeader(
	scheme: SignatureScheme,
	headerName: string | undefined,
): SignatureScheme {
	const header = headerName?.trim() ?? '';
	if (scheme.kind !== 'sharedSecret' || scheme.location.in !== 'header' || header === '')
		return scheme;
	return schemeFromSharedSecret(scheme.label, { in: 'header', header });
}

interface CredentialParts {
	scheme: SignatureScheme;
	keys: Buffer[];
	verifyToken?: string;
}

/**
 * What the credential decides: the header a shared secret comes in, the keys, the verify token; or
 * the error naming the field whose secret does not decode (keyOf's).
 */
function credentialPartsOf(
	context: IExecuteFunctions,
	tableScheme: SignatureScheme,
	credential: SigningSecretCredential,
): CredentialParts | NodeOperationError {
	const scheme = withSecretHeader(tableScheme, credential.headerName);
	const fields: Array<[string, string]> = [[credential.secret ?? '', 'secret']];
	if (credential.previousSecret) fields.push([credential.previousSecret, 'previous secret']);
	const keys: Buffer[] = [];
	for (const [secret, field] of fields) {
		const key = keyOf(context, secret, scheme, field);
		if (key instanceof NodeOperationError) return key;
		keys.push(key);
	}
	return { scheme, keys, verifyToken: credential.verifyToken };
}

/**
 * Everything that is the same for all items: the scheme, the keys and the tolerance. A problem
 * here (unknown provider, a secret that does not decode) concerns the node, not an item.
 */
export async function signatureSetup(
	context: IExecuteFunctions,
	provider: Provider,
	{ fresh = false }: { fresh?: boolean } = {},
): Promise<SignatureSetup> {
	const {
		scheme: tableScheme,
		rules,
		toleranceSeconds: providerTolerance,
		handshake,
	} = schemeOf(context, provider);
	let read = await signingSecretCredential(context, { fresh });
	let secrets = credentialPartsOf(context, tableScheme, read.credential);
	// A held copy that does not decode may have been corrected since: read afresh.
	if (secrets instanceof NodeOperationError && read.held) {
		read = await signingSecretCredential(context, { fresh: true });
		secrets = credentialPartsOf(context, tableScheme, read.credential);
	}
	if (secrets instanceof NodeOperationError) throw secrets;
	const { scheme, keys, verifyToken } = secrets;
	const toleranceSeconds = scheme.hasTimestamp ? toleranceOf(context, providerTolerance) : 0;
	const rawBodyProperty = nodeParameter(context, 'rawBodyProperty', 'data') as string;
	return {
		provider,
		scheme,
		rules,
		keys,
		toleranceSeconds,
		rawBodyProperty,
		handshake,
		verifyToken,
		held: read.held,
	};
}
