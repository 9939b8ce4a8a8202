import type { IExecuteFunctions } from 'n8n-workflow';

import {
	hmacScheme,
	SIGNATURE_SCHEMES,
	type HmacAlgorithm,
	type Provider,
	type SignatureEncoding,
	type SignatureScheme,
} from '../shared/webhook/signatureSchemes';
import { signingKey, SigningSecretError } from '../shared/webhook/verifySignature';

export const CREDENTIAL_TYPE = 'webhookSigningSecretApi';

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
		if (scheme === undefined) throw new SigningSecretError(`Unknown provider "${String(provider)}"`);
		return scheme;
	}
	const header = (context.getNodeParameter('signatureHeader', 0, '') as string).trim();
	if (header === '') throw new SigningSecretError('Signature Header is empty');
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
export async function signatureSetup(context: IExecuteFunctions): Promise<SignatureSetup> {
	const provider = context.getNodeParameter('provider', 0) as Provider;
	const scheme = schemeOf(context, provider);
	const credential = (await context.getCredentials(CREDENTIAL_TYPE)) as SigningSecretCredential;
	const keys = [signingKey(credential.secret ?? '', scheme.secretFormat, 'secret')];
	if (credential.previousSecret) keys.push(signingKey(credential.previousSecret, scheme.secretFormat, 'previous secret'));
	const toleranceSeconds = scheme.hasTimestamp ? (context.getNodeParameter('toleranceSeconds', 0, 300) as number) : 0;
	if (scheme.hasTimestamp && !(Number.isFinite(toleranceSeconds) && toleranceSeconds >= 1)) {
		throw new SigningSecretError('Tolerance must be at least 1 second');
	}
	const rawBodyProperty = context.getNodeParameter('rawBodyProperty', 0, 'data') as string;
	return { provider, scheme, keys, toleranceSeconds, rawBodyProperty };
}
