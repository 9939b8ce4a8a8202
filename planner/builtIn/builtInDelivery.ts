/**
 * The answer-first built-in workflow's stored delivery (planner/builtIn/builtInAnswerFirst.ts): the
 * package's rules (nodes/shared/delivery/storedDelivery.ts and secretParts.ts) written as one n8n
 * expression, since n8n Cloud has no Code node that could import them. What it keeps and drops is
 * read here from the same modules and lists the package uses (the provider table, the record cap,
 * the jsonb wrapper), so a sender added to the table is covered in both; test/unit/builtInDelivery.test.js
 * evaluates the expression with n8n's own engine against storedDeliveryOf on any headers, body and query.
 */
import {
	ALWAYS_STORED_HEADERS,
	storedHeaderNames,
} from '../../nodes/shared/delivery/storedDelivery';
import { isSecretHeader, SECRET_BODY_PATHS } from '../../nodes/shared/delivery/secretParts';
import { keySourceDefinition } from '../../nodes/shared/keys/keySourceTable';
import { EVERY_ELEMENT } from '../../nodes/shared/webhook/bodyPaths';
import { SIGNATURE_SCHEMES } from '../../nodes/shared/webhook/signatureSchemes';
import { MAX_RECORD_BYTES } from '../../nodes/shared/store/recordSize';
import { MAX_PLAIN_DEPTH, WRAPPER_KEY } from '../../nodes/shared/store/storableJson';
import type { PlannerSettings } from '../settings';
import { NODES } from './builtInNodes';

/** The Stored Delivery node's fields: the jsonb text to store ('' when over the cap) and its size. */
export const DELIVERY_FIELD = 'delivery';
export const DELIVERY_BYTES_FIELD = 'deliveryBytes';

/**
 * The headers stored with this provider's deliveries, as Reserve's Answer First names them
 * (IdempotencyReserve/helpers/answerFirst.ts): Content-Type, the key source preset's id headers, the
 * headers the signature signs; never one that carries a secret.
 */
export function storedHeadersFor(settings: PlannerSettings, provider: string): string[] {
	const location = keySourceDefinition(settings.keySource)?.location;
	const preset = location !== undefined && location.kind === 'headers' ? location.names : [];
	const scheme = (SIGNATURE_SCHEMES as Record<string, { signedHeaders: readonly string[] }>)[
		provider
	];
	return storedHeaderNames(ALWAYS_STORED_HEADERS, preset, scheme?.signedHeaders ?? []).filter(
		(name) => !isSecretHeader(name),
	);
}

/**
 * secretParts.ts's isSecretQueryParameter as expression code: the same short names and the same
 * credential-name pattern, read from the module's own source of truth by the unit test.
 */
const SECRET_QUERY = `((name) => { const squeezed = String(name).toLowerCase().replace(/[-_.]/g, ''); return ['key', 'sig', 'auth', 'pass', 'pwd'].includes(squeezed) || /signature|secret|hmac|token|password|apikey|credential/.test(squeezed); })`;

/** withoutPaths (nodes/shared/webhook/bodyPaths.ts) as expression code, with the table's secret body paths. */
const WITHOUT_SECRET_FIELDS = `((value) => { const drop = (v, paths) => { if (paths.length === 0 || v === null || typeof v !== 'object') return v; const isArray = Array.isArray(v); const copy = isArray ? [...v] : { ...v }; const matches = (step, name) => step === name || step === ${JSON.stringify(EVERY_ELEMENT)}; for (const name of Object.keys(copy)) { if (!isArray && paths.some((p) => p.length === 1 && matches(p[0], name))) { delete copy[name]; continue; } const deeper = paths.filter((p) => p.length > 1 && matches(p[0], name)); if (deeper.length > 0) copy[name] = drop(copy[name], deeper.map((p) => p.slice(1))); } return copy; }; return drop(value, ${JSON.stringify(SECRET_BODY_PATHS)}); })`;

/** storableJson.ts's toStorableJson: JSON text jsonb accepts as it is, else the wrapper holding it. */
const STORABLE_JSON = `((value) => { const text = JSON.stringify(value) ?? 'null'; const refuses = (t) => { let depth = 0; let inString = false; for (let i = 0; i < t.length; i++) { const c = t.charCodeAt(i); if (inString) { if (c === 34) inString = false; else if (c === 92) { if (t[i + 1] === 'u') { const hex = t.slice(i + 2, i + 6).toLowerCase(); if (hex === '0000' || (hex[0] === 'd' && '89abcdef'.includes(hex[1]))) return true; i += 5; } else i += 1; } continue; } if (c === 34) inString = true; else if (c === 91 || c === 123) { depth++; if (depth > ${MAX_PLAIN_DEPTH}) return true; } else if (c === 93 || c === 125) depth--; } return false; }; const wrapperLike = text.startsWith(${JSON.stringify(`{${JSON.stringify(WRAPPER_KEY)}:`)}) && Object.keys(JSON.parse(text)).length === 1; return wrapperLike || refuses(text) ? JSON.stringify({ ${JSON.stringify(WRAPPER_KEY)}: text }) : text; })`;

/** UTF-8 bytes of well-formed text (JSON.stringify escapes lone surrogates): a pair's two units are 4 bytes. */
const UTF8_BYTES = `((t) => { let bytes = 0; for (let i = 0; i < t.length; i++) { const c = t.charCodeAt(i); bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c <= 0xdfff ? 2 : 3; } return bytes; })`;

/**
 * The delivery Reserve stores, as storedDeliveryOf makes it from the Webhook's item: `{ v: 1,
 * headers, body, query, workflowId }` as jsonb text, and its UTF-8 size. Both fields of one
 * function, as the Key node's.
 */
export function deliveryAssignments(
	settings: PlannerSettings,
	provider: string,
): Array<{ id: string; name: string; value: string | number; type: 'string' | 'number' }> {
	const names = JSON.stringify(storedHeadersFor(settings, provider));
	const of = `(() => { const sent = $('${NODES.webhook}').first().json; const sentHeaders = sent.headers !== null && typeof sent.headers === 'object' ? sent.headers : {}; const names = ${names}; const headers = {}; for (const [name, value] of Object.entries(sentHeaders)) { if (names.includes(name.toLowerCase())) headers[name.toLowerCase()] = value; } const query = sent.query ?? {}; const delivery = { v: 1, headers: headers, body: ${WITHOUT_SECRET_FIELDS}(sent.body), query: query !== null && typeof query === 'object' && !Array.isArray(query) ? Object.fromEntries(Object.entries(query).filter(([name]) => !${SECRET_QUERY}(name))) : query, workflowId: String($workflow.id) }; const text = ${STORABLE_JSON}(delivery); const bytes = text.length * 3 <= ${MAX_RECORD_BYTES} ? text.length : ${UTF8_BYTES}(text); return { text: bytes <= ${MAX_RECORD_BYTES} ? text : '', bytes: bytes }; })()`;
	return [
		{ id: DELIVERY_FIELD, name: DELIVERY_FIELD, value: `={{ ${of}.text }}`, type: 'string' },
		{
			id: DELIVERY_BYTES_FIELD,
			name: DELIVERY_BYTES_FIELD,
			value: `={{ ${of}.bytes }}`,
			type: 'number',
		},
	];
}
