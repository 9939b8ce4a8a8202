/**
 * The fingerprint Reserve records with a new key, as the page computes it (or says it cannot).
 */
import { requiredExpressionFingerprintText } from '../../nodes/shared/keys/fingerprint';
import { readParameter } from './readParameter';
import { asNodeParameter, type PlannerSettings } from '../settings';

/** The fingerprint Reserve records with a new key for this delivery and settings. */
export type FingerprintPlan =
	/** SHA-256 hex, as stored in the key table's fingerprint column. */
	| { kind: 'value'; fingerprint: string; explain: string }
	/** No fingerprint is recorded (Fingerprint None). */
	| { kind: 'none'; explain: string }
	/** Only n8n's expression engine can tell. */
	| { kind: 'beyond'; explain: string };

/**
 * The fingerprint Reserve records for this item (nodes/IdempotencyReserve/deriveItemFingerprint.ts):
 * Raw Body is the SHA-256 of the exact bytes (the template's Webhook node has Raw Body on); an
 * Expression is read as the node reads a plain `$json` path, and hashed by the node's own rule
 * (nodes/shared/keys/fingerprint.ts); any other expression is n8n's to evaluate.
 */
export async function planFingerprint(
	settings: PlannerSettings,
	json: Record<string, unknown>,
	xmlBody: boolean,
	bytes: Uint8Array,
	sha256Hex: (bytes: Uint8Array) => Promise<string>,
	bodyHashHex: string | undefined,
): Promise<FingerprintPlan> {
	if (settings.fingerprint === 'none')
		return {
			kind: 'none',
			explain:
				'Fingerprint None: no fingerprint is recorded, so a key reused with another payload is a plain duplicate.',
		};
	if (settings.fingerprint === 'rawBody') {
		const n = bytes.length;
		return {
			kind: 'value',
			fingerprint: bodyHashHex ?? (await sha256Hex(bytes)),
			explain: `Raw Body: SHA-256 of the ${n} raw body byte${n === 1 ? '' : 's'}, the same bytes the body-hash key uses. A duplicate with another fingerprint is a mismatch (idempotency.mismatch), never new.`,
		};
	}
	const stored = asNodeParameter(settings.fingerprintExpression);
	if (xmlBody && /\$json\.body/.test(stored))
		return {
			kind: 'beyond',
			explain:
				'The Fingerprint Fields read an XML body: n8n parses XML (xml2js), this page does not.',
		};
	let value: unknown;
	try {
		value = readParameter(stored, json, 'Fingerprint Fields');
	} catch (error) {
		// readParameter throws only BeyondPage: an expression that n8n's engine evaluates.
		return { kind: 'beyond', explain: (error as Error).message };
	}
	// Nothing there is the node's item error (invalid-fingerprint, 400), thrown as the node throws it.
	const text = requiredExpressionFingerprintText(value);
	return {
		kind: 'value',
		fingerprint: await sha256Hex(new TextEncoder().encode(text)),
		explain: `Expression: SHA-256 of ${typeof value === 'string' ? 'the text' : 'the canonical JSON (object keys sorted)'} of ${stored.startsWith('=') ? stored.slice(1) : `fixed text "${stored}"`}, ${text.length > 120 ? `${JSON.stringify(text.slice(0, 120))}…` : JSON.stringify(text)}.`,
	};
}
