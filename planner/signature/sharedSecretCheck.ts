/**
 * "Check a signature" for a sender that signs nothing and repeats a shared secret instead (Microsoft
 * Graph's clientState, Okta's authorization header): the node's own verdict (verifySignature.ts over
 * the shared-secret scheme), which value failed, what the secret does not protect, and, for a pasted
 * handshake (Graph's bodiless POST ?validationToken=…, Okta's GET with X-Okta-Verification-Challenge),
 * what Reserve and Verify Webhook Signature answer. No value of the secret is ever shown.
 */
import {
	answerHandshake,
	describeHandshake,
	isHandshake,
	unauthenticated,
} from '../../nodes/shared/webhook/handshakes';
import { readSignatureHeader } from '../../nodes/shared/webhook/headers';
import { PROVIDERS, type ProviderDefinition } from '../../nodes/shared/webhook/providers';
import { isSharedSecret, type SharedSecretScheme } from '../../nodes/shared/webhook/schemeTypes';
import { SHARED_SECRET_LIMITS, secretPlace } from '../../nodes/shared/webhook/schemeText';
import { verifySignature } from '../../nodes/shared/webhook/verifySignature';
import type { SignatureInput, SignatureReport } from './signatureInput';

/** The query of the pasted URL, as Express would hand it to the Webhook node (flat names). */
function queryOf(url: string | undefined): Record<string, string> {
	if (url === undefined || url === '') return {};
	try {
		return Object.fromEntries(new URL(url, 'https://n8n.invalid/').searchParams);
	} catch {
		return {};
	}
}

/** What the node answers when the pasted request is the sender's handshake; undefined otherwise. */
function handshakeAnswer(
	provider: ProviderDefinition | undefined,
	scheme: SharedSecretScheme,
	input: SignatureInput,
	headers: unknown,
	keys: readonly Uint8Array[],
): string | undefined {
	const handshake = provider?.handshake;
	if (handshake === undefined) return undefined;
	// The page takes no URL: a bodiless paste may still be a handshake recognised by its query.
	const byQuery = handshake.match.find((one) => one.on === 'query');
	if (input.body.length === 0 && input.url === undefined && byQuery?.on === 'query')
		return `An empty body: if the request's URL carried ?${byQuery.parameter}=…, this is ${scheme.label}'s ${handshake.name} handshake, which Reserve and Verify Webhook Signature answer themselves, nothing reserved: ${describeHandshake(handshake)}.`;
	const request = {
		headers,
		query: queryOf(input.url),
		body: {},
		bodiless: input.body.length === 0,
	};
	if (!isHandshake(handshake, request)) return undefined;
	let outcome = answerHandshake(handshake, request, {});
	if (handshake.authenticated === 'sharedSecret') {
		const check = verifySignature(scheme, { headers, body: new Uint8Array() }, keys, {
			nowSeconds: 0,
			toleranceSeconds: 0,
		});
		if (!check.valid) outcome = unauthenticated(handshake, `shared secret ${check.reason}`);
	}
	const { answer, refused } = outcome;
	const said = `${answer.statusCode} ${answer.headers['content-type']}: ${answer.body}`;
	return refused === undefined
		? `This is ${scheme.label}'s ${handshake.name} handshake. Reserve and Verify Webhook Signature answer it themselves, ${said} (nothing is reserved, no node after them runs).`
		: `This is ${scheme.label}'s ${handshake.name} handshake, refused (${refused}): the node answers ${said}, nothing reserved.`;
}

/** Which of the request's values failed, without showing any of them. */
function failedValues(
	scheme: SharedSecretScheme,
	values: readonly string[],
	keys: readonly Uint8Array[],
): number[] {
	const decoder = new TextDecoder();
	const secrets = keys.map((key) => decoder.decode(key));
	return values.flatMap((value, index) => (secrets.includes(value) ? [] : [index]));
}

export function checkSharedSecret(
	scheme: SharedSecretScheme,
	input: SignatureInput,
	headers: Record<string, string | string[]>,
	keys: readonly Uint8Array[],
): SignatureReport {
	const provider: ProviderDefinition | undefined = PROVIDERS.find(
		({ value }) => value === input.provider,
	);
	const caveat =
		provider !== undefined && 'sharedSecret' in provider.signing && isSharedSecret(provider.signing)
			? provider.signing.caveat
			: `A shared secret: ${SHARED_SECRET_LIMITS}.`;
	const place = secretPlace(scheme.location);
	const handshake = handshakeAnswer(provider, scheme, input, headers, keys);
	const base = { expected: [], received: [] };
	if (handshake !== undefined)
		return { verdict: 'handshake', valid: false, ...base, hint: handshake };
	const verification = verifySignature(scheme, { headers, body: input.body }, keys, {
		nowSeconds: input.nowSeconds,
		toleranceSeconds: 0,
	});
	if (verification.valid)
		return {
			verdict: 'valid',
			valid: true,
			...base,
			hint: `${place} equals the secret: the node sends this delivery to valid. Nothing is signed, so this proves only that the sender knows the secret. ${caveat}`,
		};
	const read = scheme.read({
		header: (name) => readSignatureHeader(headers, name),
		body: input.body,
	});
	let hint: string;
	if (verification.reason === 'missing_header')
		hint = `No ${place} header: this request did not come from ${scheme.label}, the header was lost on the way (a proxy), or the hook names another header (set the credential's Shared Secret Header to the Authentication field's name).`;
	else if ('invalid' in read)
		hint =
			scheme.location.in === 'header'
				? `The ${place} header is empty or was sent twice: the node never picks one copy.`
				: `The body has no non-empty ${scheme.location.array.join('.')} array whose every element carries a ${scheme.location.field} text: an empty batch proves nothing and is refused.`;
	else {
		const failed = failedValues(scheme, read.signatures, keys);
		hint =
			scheme.location.in === 'header'
				? `The ${place} header does not equal the secret (nor the previous secret): the whole header value is compared, any "Bearer " included.`
				: `${failed.length} of ${read.signatures.length} ${scheme.location.field} values do not equal the secret (element${failed.length === 1 ? '' : 's'} ${failed.join(', ')}): one wrong value refuses the whole delivery.`;
	}
	return {
		verdict: `invalid ${verification.reason}`,
		valid: false,
		reason: verification.reason,
		...base,
		hint: `${hint} ${caveat}`,
	};
}
