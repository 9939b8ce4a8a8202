/**
 * The sentences under the key: where its id came from (or why it fell back to the body hash), and
 * the Replay Guard key the downloaded workflow uses instead where the id header is unsigned.
 * Words only: the key itself is keyPlan.ts's.
 */
import { composeKey } from '../../nodes/shared/keys/composeKey';
import { headerIdText, readHeader } from '../../nodes/shared/keys/headerValue';
import type { KeyIdentity, WebhookItemJson } from '../../nodes/shared/keys/keySources';
import { keySourceDefinition, type KeySource } from '../../nodes/shared/keys/keySourceTable';
import { keyIdIsUnsigned } from '../../nodes/shared/keys/replayGuard';
import {
	PROVIDERS,
	verifiableFrom,
	type ProviderDefinition,
} from '../../nodes/shared/webhook/providers';
import { perAttemptPaths, retryStableContent } from '../../nodes/shared/webhook/retryStableContent';
import { SIGNATURE_SCHEMES } from '../../nodes/shared/webhook/signatureSchemes';

function describeId(value: unknown): string {
	if (value === undefined) return 'missing';
	if (value === null) return 'null';
	if (value === '') return 'empty text';
	return JSON.stringify(value) ?? String(value);
}

/** Why the key came from the body hash, or where the id came from, in a sentence. */
export function explainIdentity(
	source: KeySource,
	json: WebhookItemJson & Record<string, unknown>,
	identity: KeyIdentity,
	parameter: { stored: string; value: unknown } | undefined,
	numeric: boolean,
	byteCount: number,
): string {
	const definition = keySourceDefinition(source);
	const location = definition?.location;
	const exact = numeric
		? " It is a JSON number: its exact digits were read from the raw body, not from n8n's parsed (rounded) number."
		: '';
	const hash = `SHA-256 of the ${byteCount} raw body byte${byteCount === 1 ? '' : 's'} (the Webhook node's Raw Body, as sha256sum computes it)`;
	if (location === undefined) return '';
	switch (location.kind) {
		case 'none':
			return `${definition?.name}: ${hash}.`;
		case 'customKey':
			return `The Custom Key ${parameter?.stored.slice(parameter.stored.startsWith('=') ? 1 : 0)} as it is, no prefix.${exact}`;
		case 'eventIdParameter': {
			const shown = parameter?.stored.startsWith('=')
				? parameter.stored.slice(1)
				: `fixed text "${parameter?.stored}"`;
			if (identity.kind === 'eventId') return `"evt:" + the Event ID ${shown}.${exact}`;
			return `The Event ID ${shown} is ${describeId(parameter?.value)}, so the key fell back to "sha256:" + ${hash}.`;
		}
		case 'body': {
			const path = `body.${location.path.join('.')}`;
			if (identity.kind === 'eventId') return `${definition?.name}: "evt:" + ${path}.${exact}`;
			let value: unknown = json.body;
			for (const step of location.path)
				value =
					value !== null && typeof value === 'object'
						? (value as Record<string, unknown>)[step]
						: undefined;
			return `${definition?.name}: ${path} is ${describeId(value)}, so the key fell back to "sha256:" + ${hash}.`;
		}
		case 'headers': {
			for (const name of location.names) {
				const id = headerIdText(readHeader(json.headers, name.toLowerCase()), name);
				if (id !== undefined) return `${definition?.name}: "evt:" + the ${name} header.`;
			}
			const missing =
				location.names.length === 1
					? `the ${location.names[0]} header is missing or empty`
					: `none of the ${location.names.join(', ')} headers has a value`;
			return `${definition?.name}: ${missing}, so the key fell back to "sha256:" + ${hash}.`;
		}
		case 'amqpMessage':
			return `${definition?.name}: "evt:" + the message-id property, else "sha256:" + the content's SHA-256.`;
		case 'emailMessage':
			return `${definition?.name}: "email:" + the Message-ID header, else "sha256:" + the SHA-256 of what identifies the email.`;
		case 'idempotencyKeyHeader':
			return `"idk:" + the client's Idempotency-Key header (quoted or bare), after the namespace that scopes it to the client.`;
	}
}

/** The pasted body as JSON, where it is JSON: the renewed fields are left out of the guard's digest. */
function parsedJson(bytes: Uint8Array): unknown {
	try {
		return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as unknown;
	} catch {
		return undefined;
	}
}

/**
 * The key above is Reserve's without a signature check. The downloaded workflow checks the preset's
 * own signature, and where that leaves the id header unsigned (GitHub or Linear, for instance) its
 * Replay Guard keys on the retry-stable signed content instead (retryStableContent.ts): say so,
 * with that key where the pasted delivery holds all of it (a signed URL is not pasted).
 */
export async function replayGuardNote(
	source: KeySource,
	identity: KeyIdentity,
	namespace: string,
	bytes: Uint8Array,
	sha256Hex: (bytes: Uint8Array) => Promise<string>,
): Promise<string> {
	if (identity.kind !== 'eventId' || !(source in SIGNATURE_SCHEMES)) return '';
	const scheme = SIGNATURE_SCHEMES[source as keyof typeof SIGNATURE_SCHEMES];
	const location = keySourceDefinition(source)?.location;
	if (location === undefined || !keyIdIsUnsigned(location, scheme)) return '';
	const provider: ProviderDefinition | undefined = verifiableFrom(PROVIDERS).find(
		({ value }) => value === source,
	);
	if (provider === undefined || !('algorithm' in provider.signing)) return '';
	const renewed = perAttemptPaths(provider.signing, provider.retry?.renewedBodyFields);
	const content = retryStableContent(provider.signing, renewed, {
		body: bytes,
		parsedBody: renewed.length > 0 ? parsedJson(bytes) : undefined,
	});
	const said = `In the downloaded workflow Reserve checks ${scheme.label}'s signature, which does not cover this header: its Replay Guard (Options) keys the delivery on the signed content instead`;
	const after = "so a copy resent under a new id, and the sender's own retry, are duplicates.";
	if (content === undefined) return `${said} (the signed URL is part of it), ${after}`;
	const guarded =
		content.kind === 'rawBody'
			? composeKey({ kind: 'bodyHash' }, namespace, await sha256Hex(bytes))
			: composeKey({ kind: 'signedContent', sha256Hex: await sha256Hex(content.bytes) }, namespace);
	return `${said}, "${guarded}", ${after}`;
}
