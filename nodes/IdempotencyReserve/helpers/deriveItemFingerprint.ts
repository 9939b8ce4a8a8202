import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { requiredExpressionFingerprintText } from '../../shared/keys/fingerprint';
import { itemParameterReader } from '../../shared/parameters/itemParameter';
import { readRequestBytes, sha256Hex } from '../../shared/delivery/rawBody';
import type { FingerprintSource } from '../../shared/reserveRules/reserveSettings';

/** One item's fingerprint, undefined where there is nothing to fingerprint (no body at all). */
export type ItemFingerprinter = (
	item: INodeExecutionData,
	itemIndex: number,
) => string | undefined | Promise<string | undefined>;

const hashOf = (bytes: Uint8Array | undefined) =>
	bytes === undefined ? undefined : sha256Hex(bytes);

/** Reads the node's fingerprint settings once and returns the per-item function (undefined: none). */
export function itemFingerprinter(
	context: IExecuteFunctions,
	source: FingerprintSource,
	rawBodyProperty: string,
): ItemFingerprinter | undefined {
	if (source === 'none') return undefined;
	if (source === 'expression') {
		const read = itemParameterReader(context, 'fingerprintExpression');
		// Required: an empty value throws (invalid-fingerprint), so no request escapes the comparison.
		return (item, itemIndex) => sha256Hex(requiredExpressionFingerprintText(read(item, itemIndex)));
	}
	return (item, itemIndex) => {
		// Synchronous for a raw body kept in memory (n8n's default binary mode): see readRawBody.
		const bytes = readRequestBytes(context, item, itemIndex, rawBodyProperty);
		return bytes instanceof Promise ? bytes.then(hashOf) : hashOf(bytes);
	};
}
