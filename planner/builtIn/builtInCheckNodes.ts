/**
 * The built-in workflow's checks before the key (planner/builtIn/builtIn.ts): Webhook → Raw Body Only? →
 * Raw Body as Text → Signature HMAC → Signature Valid?, and the 401 both Ifs answer. Nothing after
 * them runs for a request whose signature cannot be checked or does not match.
 */
import { clientErrorDetails, INVALID_SIGNATURE_DETAIL } from '../../nodes/shared/keys/clientErrors';
import { FORM_MEDIA_TYPE, JSON_MEDIA_TYPE } from '../../nodes/shared/webhook/signedParse';
import { BODY_TEXT_NO_BOM, type BuiltInSignature } from './builtInSignature';
import {
	BUILT_IN_CREDENTIALS,
	id,
	isTrue,
	NODES,
	RAW_TEXT_FIELD,
	respond,
	SECRET_ENV,
	type WorkflowNode,
} from './builtInNodes';

/**
 * The problem+json of a request whose signature cannot be checked or does not match: the package's
 * own kind (nodes/shared/keys/clientErrors.ts), with the templates' fixed detail, never which check
 * failed (docs/errors.md#invalid-signature).
 */
export const INVALID_SIGNATURE = clientErrorDetails('invalid-signature');

/** The problem+json of a delivery sent under a media type its sender does not use (webhook/signedParse.ts). */
export const UNSUPPORTED_MEDIA_TYPE = clientErrorDetails('unsupported-media-type');

/**
 * Whether the delivery is read as its sender signs it (nodes/shared/webhook/signedParse.ts): its
 * media type (lower-cased, parameters dropped) one of the sender's, no charset but UTF-8, n8n's
 * `$json.body` the very parse of the signed bytes for JSON, and, for a sender of JSON and forms,
 * bytes that are JSON not claimed as a form. True or false, never an error, whatever the header.
 */
export function sentAsSignedExpression(contentTypes: readonly string[]): string {
	const sendsJson = contentTypes.includes(JSON_MEDIA_TYPE);
	return [
		`((contentType, text, body) => {`,
		`const parameters = contentType.split(';');`,
		`const mediaType = parameters[0].trim().toLowerCase();`,
		`const charsets = parameters.slice(1).filter((p) => p.includes('=') && p.slice(0, p.indexOf('=')).trim().toLowerCase() === 'charset').map((p) => p.slice(p.indexOf('=') + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase());`,
		`const charset = charsets.length === 0 ? 'utf-8' : charsets[charsets.length - 1];`,
		`if (!${JSON.stringify(contentTypes)}.includes(mediaType) || (charset !== 'utf-8' && charset !== 'utf8')) return false;`,
		`const parsed = (() => { try { return { value: JSON.parse(text) }; } catch (error) { return undefined; } })();`,
		`if (mediaType === ${JSON.stringify(JSON_MEDIA_TYPE)}) return parsed !== undefined && JSON.stringify(parsed.value) === JSON.stringify(body);`,
		sendsJson && contentTypes.includes(FORM_MEDIA_TYPE)
			? `return parsed === undefined;`
			: `return ${JSON.stringify(!sendsJson)};`,
		`})(String($json.headers?.["content-type"] ?? ''), ${BODY_TEXT_NO_BOM}, $json.body)`,
	].join(' ');
}

/** Seconds a signed timestamp may be from now, as the package's default and the providers' libraries. */
export const TOLERANCE_SECONDS = 300;

function signatureNodes(signature: BuiltInSignature, line: 1 | 2): WorkflowNode[] {
	const hmacInput =
		signature.input.kind === 'binary'
			? { binaryData: true, binaryPropertyName: 'data' }
			: { binaryData: false, value: `={{ ${signature.input.expression} }}` };
	const conditions = isTrue(
		`${signature.signatures}.includes($json.expectedSignature)`,
		'signature-matches',
	);
	if (signature.queryIsText !== undefined)
		// requestUrl.ts: a query value that is not text cannot be written back into the signed URL.
		conditions.conditions.push(isTrue(signature.queryIsText, 'query-is-text').conditions[0]);
	if (signature.timestamp !== undefined) {
		const t = signature.timestamp;
		conditions.conditions.push(
			isTrue(
				`((seconds) => Math.abs($now.toSeconds() - seconds) <= ${TOLERANCE_SECONDS})(${t})`,
				'timestamp-within-tolerance',
			).conditions[0],
		);
	}
	return [
		{
			id: id(2),
			name: NODES.hmac,
			type: 'n8n-nodes-base.crypto',
			typeVersion: line,
			position: [660, 300],
			parameters: {
				action: 'hmac',
				...hmacInput,
				type: signature.algorithm,
				dataPropertyName: 'expectedSignature',
				encoding: signature.encoding,
				...(line === 1 ? { secret: `={{ $env.${SECRET_ENV} }}` } : {}),
			},
			...(line === 2 ? { credentials: { crypto: { name: BUILT_IN_CREDENTIALS.crypto } } } : {}),
		},
		{
			id: id(3),
			name: NODES.valid,
			type: 'n8n-nodes-base.if',
			typeVersion: 2.2,
			position: [880, 300],
			parameters: { conditions, options: {} },
		},
	];
}

/**
 * The Webhook node's webhookId, made from its path: the same file always carries the same id (the
 * prebuilt workflows are compared with what the generator writes), and two paths get two ids, so
 * workflows published side by side never share one. FNV-1a, four seeds, laid out as a version 4
 * UUID; pure, so the page and the CLI give the same id.
 */
export function webhookIdFor(webhookPath: string): string {
	const hex = [0x811c9dc5, 0x050c5d1f, 0x1b873593, 0x27d4eb2f]
		.map((seed) => {
			let hash = seed;
			for (const byte of new TextEncoder().encode(webhookPath)) {
				hash ^= byte;
				hash = Math.imul(hash, 0x01000193) >>> 0;
			}
			return hash.toString(16).padStart(8, '0');
		})
		.join('');
	return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The nodes up to the signature's verdict, in the workflow's order. */
export function checkNodes(
	signature: BuiltInSignature,
	line: 1 | 2,
	webhookPath: string,
): WorkflowNode[] {
	return [
		...receivingNodes(webhookPath),
		...signatureNodes(signature, line),
		...refusalNodes(signature),
	];
}

/** The Webhook, the refusal of multipart requests, and the exact bytes as text. */
function receivingNodes(webhookPath: string): WorkflowNode[] {
	return [
		{
			id: id(0),
			name: NODES.webhook,
			type: 'n8n-nodes-base.webhook',
			typeVersion: 2.1,
			position: [0, 300],
			webhookId: webhookIdFor(webhookPath),
			parameters: {
				httpMethod: 'POST',
				path: webhookPath,
				responseMode: 'responseNode',
				options: { rawBody: true },
			},
		},
		{
			// For multipart/form-data the Webhook ignores Raw Body: fields become $json.body and a file
			// part named "data" becomes binary.data, which the HMAC would check while the key and the
			// business step read the fields. Such a request (or any with a file name on binary.data, which
			// the raw body never has) is refused before anything else runs.
			id: id(18),
			name: NODES.rawOnly,
			type: 'n8n-nodes-base.if',
			typeVersion: 2.2,
			position: [220, 300],
			parameters: {
				conditions: isTrue(
					`!String($json.headers["content-type"] ?? '').trim().toLowerCase().startsWith('multipart/') && $binary.data !== undefined && ($binary.data.fileName ?? '') === ''`,
					'raw-body-only',
				),
				options: {},
			},
		},
		{
			// The exact bytes as text for the signed string and the body hash: UTF-8 named (not guessed),
			// a byte order mark kept (it is part of what was signed), the item and its bytes kept.
			id: id(1),
			name: NODES.rawText,
			type: 'n8n-nodes-base.extractFromFile',
			typeVersion: 1,
			position: [440, 300],
			parameters: {
				operation: 'text',
				binaryPropertyName: 'data',
				destinationKey: RAW_TEXT_FIELD,
				options: { encoding: 'utf8', stripBOM: false, keepSource: 'both' },
			},
		},
	];
}

/** After the signature: the check that the body was sent as signed, and the 415 and 401 answers. */
function refusalNodes(signature: BuiltInSignature): WorkflowNode[] {
	return [
		{
			// After the signature, before anything is reserved: n8n picks its body parser from the
			// Content-Type, which no sender signs, so the same signed bytes sent as text/plain, as a form
			// or without it would be read (and keyed) another way. Refused 415 instead.
			id: id(21),
			name: NODES.sentAsSigned,
			type: 'n8n-nodes-base.if',
			typeVersion: 2.2,
			position: [1100, 300],
			parameters: {
				conditions: isTrue(sentAsSignedExpression(signature.contentTypes), 'sent-as-signed'),
				options: {},
			},
		},
		respond(
			id(22),
			NODES.unsupportedMediaType,
			UNSUPPORTED_MEDIA_TYPE.status,
			`={{ JSON.stringify(${JSON.stringify({ type: UNSUPPORTED_MEDIA_TYPE.type, title: UNSUPPORTED_MEDIA_TYPE.title, status: UNSUPPORTED_MEDIA_TYPE.status, detail: `Nothing was processed: ${signature.label} sends ${signature.contentTypes.join(' or ')} in UTF-8, and this delivery's Content-Type (or how its bytes read under it) differs. The signature covers the bytes, not the Content-Type, so the body is not read under another media type.` })}) }}`,
			[1320, 560],
			[{ name: 'Content-Type', value: 'application/problem+json' }],
			'text',
		),
		respond(
			id(4),
			NODES.invalid,
			INVALID_SIGNATURE.status,
			`={{ JSON.stringify(${JSON.stringify({ type: INVALID_SIGNATURE.type, title: INVALID_SIGNATURE.title, status: INVALID_SIGNATURE.status, detail: INVALID_SIGNATURE_DETAIL })}) }}`,
			[1100, 560],
			[{ name: 'Content-Type', value: 'application/problem+json' }],
			'text',
		),
	];
}
