import { NodeOperationError, type IExecuteFunctions } from 'n8n-workflow';

import { SIGNING_SECRET_CREDENTIAL_TYPE } from '../parameters/credentials';
import {
	hmacScheme,
	SIGNATURE_SCHEMES,
	type HmacAlgorithm,
	type Provider,
	type SignatureEncoding,
	type SecretFormat,
	type SignatureScheme,
} from '../webhook/signatureSchemes';
import { signingKey, SigningSecretError } from '../webhook/verifySignature';

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
): Buffer {
	try {
		return signingKey(secret, scheme.secretFormat, field);
	} catch (error) {
		// signingKey only throws SigningSecretError, whose message names the field, never the value.
		const hint = SECRET_HINTS[scheme.secretFormat](scheme.label);
		throw settingsError(context, (error as SigningSecretError).message, hint);
	}
}

interface SigningSecretCredential {
	secret?: string;
	previousSecret?: string;
}

export interface SignatureSetup {
	provider: Provider;
	scheme: SignatureScheme;
	/** HMAC keys to try: the current secret, then the previous one during a rotation. */
	keys: Buffer[];
	toleranceSeconds: number;
	rawBodyProperty: string;
}

function schemeOf(context: IExecuteFunctions, provider: Provider): SignatureScheme {
	if (provider !== 'hmac') {
		const scheme = SIGNATURE_SCHEMES[provider];
		if (scheme === undefined)
			throw settingsError(
				context,
				`Unknown provider "${String(provider)}"`,
				'Pick a provider from the list.',
			);
		return scheme;
	}
	const header = (context.getNodeParameter('signatureHeader', 0, '') as string).trim();
	if (header === '')
		throw settingsError(
			context,
			'Signature Header is empty',
			'Enter the name of the header that carries the signature.',
		);
	return hmacScheme({
		header,
		algorithm: context.getNodeParameter('algorithm', 0, 'sha256') as HmacAlgorithm,
		encoding: context.getNodeParameter('encoding', 0, 'hex') as SignatureEncoding,
		signaturePrefix: context.getNodeParameter('signaturePrefix', 0, '') as string,
		timestampHeader: context.getNodeParameter('timestampHeader', 0, '') as string,
	});
}

/**
 * Everything that is the same for all items: the scheme, the keys and the tolerance. A problem
 * here (unknown provider, a secret that does not decode) concerns the node, not an item.
 */
export async function signatureSetup(
	context: IExecuteFunctions,
	provider: Provider,
): Promise<SignatureSetup> {
	const scheme = schemeOf(context, provider);
	const credential = (await context.getCredentials(
		SIGNING_SECRET_CREDENTIAL_TYPE,
	)) as SigningSecretCredential;
	const keys = [keyOf(context, credential.secret ?? '', scheme, 'secret')];
	if (credential.previousSecret)
		keys.push(keyOf(context, credential.previousSecret, scheme, 'previous secret'));
	const toleranceSeconds = scheme.hasTimestamp
		? (context.getNodeParameter('toleranceSeconds', 0, 300) as number)
		: 0;
	if (scheme.hasTimestamp && !(Number.isFinite(toleranceSeconds) && toleranceSeconds >= 1)) {
		throw settingsError(
			context,
			'Tolerance must be at least 1 second',
			"Set Tolerance (Seconds) to 300, the providers' default, or more.",
		);
	}
	const rawBodyProperty = context.getNodeParameter('rawBodyProperty', 0, 'data') as string;
	return { provider, scheme, keys, toleranceSeconds, rawBodyProperty };
}
