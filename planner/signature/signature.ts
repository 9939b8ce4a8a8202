/**
 * "Check a signature": the verdict of Verify Webhook Signature for a pasted delivery, from the node's
 * own scheme table and verification code (nodes/shared/webhook, bundled for the page with
 * planner/node/ standing in for Node.js's crypto and Buffer), plus what the node does not say: what
 * was signed, the signature the secret gives next to the one received, how old the timestamp is, and
 * the usual cause of the reason in one line. Only the explanation is the page's own; the verdict is
 * the node's. The node's setup (scheme, keys, tolerance) is followed as nodes/shared/signatureNode/signatureSetup.ts does it.
 */
import { answerHandshake, isHandshake } from '../../nodes/shared/webhook/handshakes';
import { readSignatureHeader } from '../../nodes/shared/webhook/headers';
import { PROVIDERS, type ProviderDefinition } from '../../nodes/shared/webhook/providers';
import {
	hmacScheme,
	PROVIDER_OPTIONS,
	SIGNATURE_SCHEMES,
	type HmacAlgorithm,
	type SignatureScheme,
	type SignedRequest,
	type SignedScheme,
} from '../../nodes/shared/webhook/signatureSchemes';
import { UNSIGNED_BODY_HINTS, unsignedBodyCause } from '../../nodes/shared/webhook/signedBody';
import {
	decode,
	expectedSignature,
	isHmac,
	signingKey,
	SigningSecretError,
	verifySignature,
} from '../../nodes/shared/webhook/verifySignature';
import { parseHeaders } from '../request/requestHeaders';
import {
	duration,
	malformedHint,
	mismatchHint,
	missingHint,
	staleHint,
	textOf,
} from './signatureHints';
import type { SignatureInput, SignatureReport } from './signatureInput';
import { checkSharedSecret } from './sharedSecretCheck';

export { PROVIDER_OPTIONS };
export { duration } from './signatureHints';
export { DEFAULT_HMAC } from './signatureInput';
export type { ComparedSignature, SignatureInput, SignatureReport } from './signatureInput';

function schemeOf(input: SignatureInput): SignatureScheme | { message: string; hint: string } {
	if (input.provider !== 'hmac') return SIGNATURE_SCHEMES[input.provider];
	if (input.hmac.header.trim() === '')
		return {
			message: 'Signature Header is empty',
			hint: 'Enter the name of the header that carries the signature.',
		};
	return hmacScheme(input.hmac);
}

/** The node stops before it checks anything (no scheme, no secret, a bad tolerance). */
function nodeFails(message: string, hint: string): SignatureReport {
	return {
		verdict: 'invalid (node error)',
		valid: false,
		nodeError: { message, hint },
		expected: [],
		received: [],
		hint: `The node fails before it checks anything: ${message}. ${hint}`,
	};
}

type Headers = ReturnType<typeof parseHeaders>['headers'];
type Verification = ReturnType<typeof verifySignature>;

/** The HMAC keys the node derives from the secrets, labelled, and the tolerance it applies. */
interface HmacSetup {
	keys: Uint8Array[];
	labels: string[];
	toleranceSeconds: number;
}

export function checkSignature(input: SignatureInput): SignatureReport {
	const scheme = schemeOf(input);
	if (!('read' in scheme)) return nodeFails(scheme.message, scheme.hint);
	if (scheme.kind === 'sharedSecret') {
		if (input.secret === '') return nodeFails('The secret is empty', 'Paste the shared secret.');
		const encoder = new TextEncoder();
		const keys = [input.secret, input.previousSecret]
			.filter((secret) => secret !== '')
			.map((secret) => encoder.encode(secret));
		return checkSharedSecret(scheme, input, parseHeaders(input.headersText).headers, keys);
	}
	if (!isHmac(scheme.algorithm))
		return {
			verdict: 'not checked on this page',
			valid: false,
			expected: [],
			received: [],
			hint: `${scheme.label} signs with a key pair (${scheme.algorithm === 'ed25519' ? 'Ed25519' : 'ECDSA'}): this page checks HMAC signatures only. Send the delivery to Verify Webhook Signature in n8n, which checks it with the public key.`,
		};
	const setup = hmacSetup(scheme, input);
	if ('verdict' in setup) return setup;

	const { headers } = parseHeaders(input.headersText);
	// As the node: a multipart request is refused before any crypto (a pasted body is never an upload).
	const unsigned = unsignedBodyCause(headers, undefined);
	if (unsigned !== undefined)
		return {
			verdict: 'invalid unsigned_body',
			valid: false,
			reason: 'unsigned_body',
			expected: [],
			received: [],
			hint: UNSIGNED_BODY_HINTS[unsigned],
		};
	const verification = verifySignature(
		scheme,
		{ headers, body: input.body, url: input.url },
		setup.keys,
		{
			nowSeconds: input.nowSeconds,
			toleranceSeconds: setup.toleranceSeconds,
		},
	);
	const report: SignatureReport = {
		verdict: verification.valid ? 'valid' : `invalid ${verification.reason}`,
		valid: verification.valid,
		...(verification.valid ? {} : { reason: verification.reason }),
		expected: [],
		received: [],
		hint: '',
	};
	const request = scheme.read({
		header: (name) => readSignatureHeader(headers, name),
		body: input.body,
		url: input.url,
	});
	if (!('invalid' in request)) compareSignatures(report, scheme, setup, request, input.nowSeconds);
	report.hint = hintOf(report, verification, scheme, input, setup, headers, request);
	return report;
}

/** The keys from the secrets and the tolerance, as the node's setup reads them, or the node's error. */
function hmacSetup(scheme: SignedScheme, input: SignatureInput): HmacSetup | SignatureReport {
	const keys: Uint8Array[] = [];
	const labels: string[] = [];
	try {
		keys.push(signingKey(input.secret, scheme.secretFormat, 'secret'));
		labels.push('secret');
		if (input.previousSecret) {
			keys.push(signingKey(input.previousSecret, scheme.secretFormat, 'previous secret'));
			labels.push('previous secret');
		}
	} catch (error) {
		// signingKey throws only SigningSecretError, whose message names the field, never the value.
		return nodeFails(
			(error as SigningSecretError).message,
			scheme.secretFormat === 'whsecBase64'
				? `${scheme.label} secrets look like whsec_ followed by base64: copy it again from the sender's dashboard.`
				: 'Paste the signing secret from the sender.',
		);
	}
	const toleranceSeconds = scheme.hasTimestamp ? input.toleranceSeconds : 0;
	if (scheme.hasTimestamp && !(Number.isFinite(toleranceSeconds) && toleranceSeconds >= 1))
		return nodeFails(
			'Tolerance must be at least 1 second',
			"Set Tolerance (Seconds) to 300, the providers' default, or more.",
		);
	return { keys, labels, toleranceSeconds };
}

/** What was signed, each expected signature beside the received ones, and the timestamp's age. */
function compareSignatures(
	report: SignatureReport,
	scheme: SignedScheme,
	{ keys, labels, toleranceSeconds }: HmacSetup,
	request: SignedRequest,
	nowSeconds: number,
): void {
	report.signed = {
		content: request.content,
		signs: scheme.signs,
		...(request.timestamp !== undefined ? { timestamp: request.timestamp } : {}),
	};
	const algorithm = scheme.algorithm as HmacAlgorithm;
	const expected = keys.map((key) => expectedSignature(algorithm, key, request.content));
	report.expected = expected.map((signature, i) => ({
		label: labels[i],
		value: signature.toString(scheme.encoding),
		matches: request.signatures.some(
			(text) => decode(text, scheme.encoding)?.toString('hex') === signature.toString('hex'),
		),
	}));
	report.received = request.signatures.map((text) => ({
		label: 'received',
		value: text,
		matches: expected.some(
			(signature) => decode(text, scheme.encoding)?.toString('hex') === signature.toString('hex'),
		),
	}));
	if (scheme.hasTimestamp && request.timestamp !== undefined)
		report.age = { seconds: nowSeconds - request.timestamp, toleranceSeconds };
}

/** The one line under the verdict: which secret signed a valid delivery, or the usual cause of the reason. */
function hintOf(
	report: SignatureReport,
	verification: Verification,
	scheme: SignedScheme,
	input: SignatureInput,
	{ keys, toleranceSeconds }: HmacSetup,
	headers: Headers,
	request: ReturnType<SignedScheme['read']>,
): string {
	if (verification.valid) {
		const which = report.expected.find((signature) => signature.matches)?.label ?? 'secret';
		const handshake = signedHandshake(input, headers, keys[0]);
		return which === 'previous secret'
			? 'Signed with the previous secret: the sender has not switched to the new one yet (clear Previous Secret once it has).'
			: `Signed with the secret${report.age ? `, ${duration(report.age.seconds)} ${report.age.seconds < 0 ? 'ahead' : 'ago'} (tolerance ${toleranceSeconds} s)` : ''}: ${handshake ?? 'the node sends this delivery to valid.'}`;
	}
	switch (verification.reason) {
		case 'missing_header':
			return missingHint(scheme, headers);
		case 'malformed':
			return malformedHint(scheme, input, headers);
		case 'timestamp_out_of_tolerance':
			return staleHint(
				report.age?.seconds ?? 0,
				toleranceSeconds,
				report.signed?.timestamp ?? 0,
				input.nowSeconds,
			);
		case 'mismatch':
			return mismatchHint(scheme, input, keys, request as SignedRequest, headers);
	}
	return '';
}

export interface BodyFacts {
	bytes: number;
	bom: boolean;
	crlf: number;
	/** Whether the bytes are valid UTF-8. */
	utf8: boolean;
	finalLineBreak: boolean;
}

/** What a reader cannot see in the signed bytes: a byte order mark, CR before LF, bytes that are not UTF-8. */
export function bodyFacts(body: Uint8Array): BodyFacts {
	let crlf = 0;
	for (let i = 1; i < body.length; i++) if (body[i] === 0x0a && body[i - 1] === 0x0d) crlf++;
	return {
		bytes: body.length,
		bom: body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf,
		crlf,
		utf8: textOf(body) !== undefined,
		finalLineBreak: body[body.length - 1] === 0x0a,
	};
}

/**
 * When the verified delivery is its sender's endpoint handshake (the provider table's, recognised
 * from the signed body as the nodes do), what Reserve and Verify Webhook Signature answer instead
 * of routing it; undefined for any other delivery.
 */
function signedHandshake(
	input: SignatureInput,
	headers: Record<string, string | string[]>,
	key: Uint8Array,
): string | undefined {
	const provider: ProviderDefinition | undefined = PROVIDERS.find(
		({ value }) => value === input.provider,
	);
	const handshake = provider?.handshake;
	if (handshake === undefined || !handshake.signed) return undefined;
	const text = textOf(input.body);
	let body: unknown;
	try {
		body = text === undefined ? undefined : (JSON.parse(text) as unknown);
	} catch {
		return undefined;
	}
	const request = { headers, query: {}, body, bodiless: input.body.length === 0 };
	if (!isHandshake(handshake, request)) return undefined;
	const { answer } = answerHandshake(handshake, request, { secret: key });
	return `this is the sender's ${handshake.name} handshake. Reserve and Verify Webhook Signature answer it themselves, ${answer.statusCode} ${answer.headers['content-type']}: ${answer.body} (nothing is reserved, no node after them runs).`;
}
