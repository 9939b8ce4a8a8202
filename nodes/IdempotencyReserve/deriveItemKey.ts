import { createHash } from 'crypto';
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { bodyBytesWithoutRawBody, composeKey } from '../shared/keys/composeKey';
import { KeyError } from '../shared/keys/KeyError';
import { resolveKeyIdentity, type KeySource, type WebhookItemJson } from '../shared/keys/keySources';

export interface KeySettings {
	source: KeySource;
	rawBodyProperty: string;
}

function sha256Hex(bytes: Uint8Array): string {
	return createHash('sha256').update(bytes).digest('hex');
}

/** The exact bytes the sender posted (the Webhook node's raw body), else the body as text or JSON. */
async function bodyBytes(
	context: IExecuteFunctions,
	item: INodeExecutionData,
	itemIndex: number,
	rawBodyProperty: string,
): Promise<Uint8Array> {
	if (item.binary?.[rawBodyProperty] !== undefined) {
		return await context.helpers.getBinaryDataBuffer(itemIndex, rawBodyProperty);
	}
	const bytes = bodyBytesWithoutRawBody((item.json as WebhookItemJson).body);
	if (bytes === undefined) {
		throw new KeyError(
			`The item has no event id, no binary property "${rawBodyProperty}" and no body to hash`,
			'Turn on "Raw Body" in the Webhook node options, or check the Raw Body Property name.',
		);
	}
	return bytes;
}

export async function deriveItemKey(
	context: IExecuteFunctions,
	item: INodeExecutionData,
	itemIndex: number,
	settings: KeySettings,
): Promise<string> {
	const { source } = settings;
	const parameterValue =
		source === 'eventIdOrBodyHash'
			? context.getNodeParameter('eventId', itemIndex, undefined)
			: source === 'custom'
				? context.getNodeParameter('customKey', itemIndex, undefined)
				: undefined;
	const identity = resolveKeyIdentity(source, item.json as WebhookItemJson, parameterValue);
	const namespace = String(context.getNodeParameter('namespace', itemIndex, '') ?? '');
	const hash =
		identity.kind === 'bodyHash'
			? sha256Hex(await bodyBytes(context, item, itemIndex, settings.rawBodyProperty))
			: undefined;
	return composeKey(identity, namespace, hash);
}
