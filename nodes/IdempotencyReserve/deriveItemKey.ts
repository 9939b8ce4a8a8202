import { createHash } from 'crypto';
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { bodyBytesWithoutRawBody, composeKey } from '../shared/keys/composeKey';
import { KeyError } from '../shared/keys/KeyError';
import { normalizeId, resolveKeyIdentity, type KeySource, type WebhookItemJson } from '../shared/keys/keySources';
import { itemParameterReader } from '../shared/n8n/itemParameter';
import { RAW_BODY_HINT, readRawBody } from '../shared/webhook/rawBody';

export interface KeySettings {
	source: KeySource;
	rawBodyProperty: string;
}

function sha256Hex(bytes: Uint8Array): string {
	return createHash('sha256').update(bytes).digest('hex');
}

/** The exact bytes the sender posted, else the body as text or JSON (what the hand-built pattern hashed). */
async function bodyBytes(
	context: IExecuteFunctions,
	item: INodeExecutionData,
	itemIndex: number,
	rawBodyProperty: string,
): Promise<Uint8Array> {
	const raw = await readRawBody(context, item, itemIndex, rawBodyProperty);
	if (raw !== undefined) return raw;
	const bytes = bodyBytesWithoutRawBody((item.json as WebhookItemJson).body);
	if (bytes === undefined) {
		throw new KeyError(
			`The item has no event id, no binary property "${rawBodyProperty}" and no body to hash`,
			RAW_BODY_HINT,
		);
	}
	return bytes;
}

/** Synchronous unless the raw body must be read (binary data may live outside memory). */
export type ItemKeyDeriver = (item: INodeExecutionData, itemIndex: number) => string | Promise<string>;

/** Reads the node's settings once and returns the per-item key function. */
export function itemKeyDeriver(context: IExecuteFunctions, settings: KeySettings): ItemKeyDeriver {
	const { source } = settings;
	const readSourceParameter =
		source === 'eventIdOrBodyHash'
			? itemParameterReader(context, 'eventId')
			: source === 'custom'
				? itemParameterReader(context, 'customKey')
				: () => undefined;
	const readNamespace = itemParameterReader(context, 'namespace');
	return (item, itemIndex) => {
		const identity = resolveKeyIdentity(source, item.json as WebhookItemJson, readSourceParameter(item, itemIndex));
		const namespace = normalizeId(readNamespace(item, itemIndex), 'namespace') ?? '';
		if (identity.kind !== 'bodyHash') return composeKey(identity, namespace);
		return bodyBytes(context, item, itemIndex, settings.rawBodyProperty).then((bytes) =>
			composeKey(identity, namespace, sha256Hex(bytes)),
		);
	};
}
