/**
 * The key Idempotency Reserve derives for one delivery, with why, from the nodes' own key modules
 * (nodes/shared/keys); the request is read as n8n's Webhook node reads it (requestHeaders.ts,
 * requestBody.ts), parameters as the node reads them (readParameter.ts).
 */
import { composeKey } from '../../nodes/shared/keys/composeKey';
import { KeyError } from '../../nodes/shared/keys/KeyError';
import { resolveKeyIdentity, settleNumericId } from '../../nodes/shared/keys/keySources';
import { keySourceDefinition } from '../../nodes/shared/keys/keySourceTable';
import { namespaceText } from '../../nodes/shared/keys/namespace';
import { planFingerprint, type FingerprintPlan } from './fingerprintPlan';
import { explainIdentity, replayGuardNote } from './keyExplain';
import { BeyondPage, bodyPathOf, readParameter } from './readParameter';
import { parseWebhookBody, XML_BODY } from '../request/requestBody';
import { parseHeaders } from '../request/requestHeaders';
import { asNodeParameter, parameterOfSource, type PlannerSettings } from '../settings';

export type KeyPlan =
	| { ok: true; key: string; explain: string; fingerprint: FingerprintPlan }
	| { ok: false; kind: 'itemError'; message: string; hint: string; explain: string }
	| { ok: false; kind: 'refused' | 'beyond' | 'failed'; message: string; explain: string };

export interface Delivery {
	/** The exact request bytes (the Webhook node's Raw Body). */
	bytes: Uint8Array;
	/** `Name: value` lines. */
	headersText: string;
}

/**
 * The key Idempotency Reserve derives for this delivery (nodes/IdempotencyReserve/helpers/deriveItemKey.ts),
 * with the Webhook node's Raw Body on, as in the template. `sha256Hex` hashes bytes (crypto.subtle in the page).
 */
export async function planKey(
	delivery: Delivery,
	settings: PlannerSettings,
	sha256Hex: (bytes: Uint8Array) => Promise<string>,
): Promise<KeyPlan> {
	const notes: string[] = [];
	const read = readDelivery(delivery, notes);
	if ('message' in read)
		return { ok: false, kind: 'refused', message: read.message, explain: notes.join(' ') };
	try {
		return await deriveKey(delivery, settings, read, sha256Hex, notes);
	} catch (error) {
		return failedPlan(error, notes.join(' '));
	}
}

/** The item n8n's Webhook node hands on: `$json` with headers and the parsed body. */
interface WebhookItem {
	json: Record<string, unknown> & { body: unknown };
	xml: boolean;
}

/** The request as the Webhook node reads it; what the page assumed or ignored goes to `notes`. */
function readDelivery(delivery: Delivery, notes: string[]): WebhookItem | { message: string } {
	const { headers, ignored } = parseHeaders(delivery.headersText);
	if (ignored.length > 0)
		notes.push(
			`Ignored ${ignored.length} line${ignored.length === 1 ? '' : 's'} that ${ignored.length === 1 ? 'is' : 'are'} not "Name: value".`,
		);
	let contentType = headers['content-type'];
	if (contentType === undefined) {
		contentType = 'application/json';
		headers['content-type'] = contentType;
		notes.push(
			'No Content-Type given: the page assumes application/json, as webhook senders send.',
		);
	}
	const parsed = parseWebhookBody(delivery.bytes, String(contentType));
	if (!parsed.ok) return { message: parsed.message };
	notes.push(parsed.note);
	return {
		json: {
			headers,
			params: {},
			query: {},
			body: parsed.body,
			webhookUrl: 'http://localhost:5678/webhook/idempotent-webhook',
			executionMode: 'production',
		},
		xml: parsed.body === XML_BODY,
	};
}

/** The key, in the node's order (deriveItemKey.ts), with its fingerprint and why; throws as the node does. */
async function deriveKey(
	delivery: Delivery,
	settings: PlannerSettings,
	{ json, xml }: WebhookItem,
	sha256Hex: (bytes: Uint8Array) => Promise<string>,
	notes: readonly string[],
): Promise<KeyPlan> {
	const parameterInfo = parameterOfSource(settings.keySource);
	let parameter: { stored: string; value: unknown } | undefined;
	const readsBody =
		keySourceDefinition(settings.keySource)?.location.kind === 'body' ||
		(parameterInfo !== undefined && /\$json\.body/.test(settings.eventIdPath));
	if (xml && readsBody) {
		throw new BeyondPage(
			'This key reads a field of an XML body: n8n parses XML (xml2js), this page does not.',
		);
	}
	if (parameterInfo !== undefined) {
		const stored = asNodeParameter(settings.eventIdPath);
		parameter = { stored, value: readParameter(stored, json, parameterInfo.label) };
	}
	// In the node's order (deriveItemKey.ts), so that an item with two problems shows the node's message.
	const resolution = resolveKeyIdentity(
		settings.keySource,
		json,
		parameter?.value,
		parameter === undefined ? undefined : bodyPathOf(parameter.stored),
	);
	const namespace = namespaceText(
		readParameter(asNodeParameter(settings.namespace), json, 'Namespace'),
	);
	const numeric = resolution.kind === 'number';
	// The template's Webhook node has Raw Body on: the exact bytes are always there.
	// A webhook request is never a RabbitMQ message: resolveKeyIdentity refuses it before this.
	if (resolution.kind === 'messageContent')
		throw new KeyError('The planner models webhook requests, not broker messages', '');
	const identity =
		resolution.kind === 'number' ? settleNumericId(resolution, delivery.bytes) : resolution;
	const hex = identity.kind === 'bodyHash' ? await sha256Hex(delivery.bytes) : undefined;
	const key = composeKey(identity, namespace, hex);
	const fingerprint = await planFingerprint(settings, json, xml, delivery.bytes, sha256Hex, hex);
	const explain = [
		explainIdentity(settings.keySource, json, identity, parameter, numeric, delivery.bytes.length),
		namespace === '' ? '' : `Namespace "${namespace}" + ":" in front.`,
		await replayGuardNote(settings.keySource, identity, namespace, delivery.bytes, sha256Hex),
		...notes,
	];
	return {
		ok: true,
		key,
		explain: explain.filter((part) => part !== '').join(' '),
		fingerprint,
	};
}

/** A key the node refuses (its item error), one beyond the page, or a failure of the page itself. */
function failedPlan(error: unknown, explain: string): KeyPlan {
	if (error instanceof KeyError) {
		return { ok: false, kind: 'itemError', message: error.message, hint: error.hint, explain };
	}
	if (error instanceof BeyondPage)
		return { ok: false, kind: 'beyond', message: error.message, explain };
	// Not expected from the key modules: shown as it is rather than hidden.
	return {
		ok: false,
		kind: 'failed',
		message: `The page failed: ${(error as Error).message}`,
		explain,
	};
}
