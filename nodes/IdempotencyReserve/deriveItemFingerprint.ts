import { createHash } from 'crypto';
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { bodyBytesWithoutRawBody } from '../shared/keys/composeKey';
import { expressionFingerprintText } from '../shared/keys/fingerprint';
import type { WebhookItemJson } from '../shared/keys/keySources';
import { itemParameterReader } from '../shared/n8n/itemParameter';
import { readRawBody } from '../shared/webhook/rawBody';
import type { FingerprintSource } from './reserveSettings';

/** One item's fingerprint, undefined where there is nothing to fingerprint (no body at all). */
export type ItemFingerprinter = (
	item: INodeExecutionData,
	itemIndex: number,
) => string | undefined | Promise<string | undefined>;

const sha256Hex = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex');

/** Reads the node's fingerprint settings once and returns the per-item function (undefined: none). */
export function itemFingerprinter(
	context: IExecuteFunctions,
	source: FingerprintSource,
	rawBodyProperty: string,
): ItemFingerprinter | undefined {
	if (source === 'none') return undefined;
	if (source === 'expression') {
		const read = itemParameterReader(context, 'fingerprintExpression');
		return (item, itemIndex) => {
			const text = expressionFingerprintText(read(item, itemIndex));
			return text === undefined ? undefined : sha256Hex(text);
		};
	}
	const withoutRawBody = (item: INodeExecutionData) => {
		const bytes = bodyBytesWithoutRawBody((item.json as WebhookItemJson).body);
		return bytes === undefined ? undefined : sha256Hex(bytes);
	};
	return (item, itemIndex) => {
		const binary = item.binary?.[rawBodyProperty];
		if (binary === undefined) return withoutRawBody(item);
		// Kept in memory (n8n's default binary mode): the bytes are right here, as n8n's helper would read them.
		if (binary.id === undefined) return sha256Hex(Buffer.from(binary.data, 'base64'));
		return readRawBody(context, item, itemIndex, rawBodyProperty).then((raw) =>
			raw === undefined ? withoutRawBody(item) : sha256Hex(raw),
		);
	};
}
