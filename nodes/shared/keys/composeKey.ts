import { KeyError } from './KeyError';
import type { KeyIdentity } from './keySources';
import { assertNamespace } from './namespace';
import {
	BODY_HASH_PREFIX,
	CLIENT_KEY_PREFIX,
	eventIdPrefix,
	SIGNED_CONTENT_PREFIX,
} from './prefixes';

/** Longer keys are refused: a key is an id, and a btree entry must stay well under a page. */
export const MAX_KEY_BYTES = 1000;

/**
 * The length of the text in UTF-8, as TextEncoder would encode it (a lone surrogate as U+FFFD, three
 * bytes), counted without encoding: every key is measured, and encoding allocated a copy each time.
 */
export function utf8ByteLength(text: string): number {
	let bytes = 0;
	for (let i = 0; i < text.length; i++) {
		const unit = text.charCodeAt(i);
		if (unit < 0x80) bytes += 1;
		else if (unit < 0x800) bytes += 2;
		else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
			const next = text.charCodeAt(i + 1);
			if (next >= 0xdc00 && next <= 0xdfff) {
				bytes += 4;
				i += 1;
			} else bytes += 3;
		} else bytes += 3;
	}
	return bytes;
}

/**
 * Builds the stored key: `[namespace:]evt:<id>` (`<provider>:<id>` for a provider's preset),
 * `[namespace:]sha256:<hex>`, `[namespace:]signed:<hex>`, `[namespace:]idk:<client key>` or
 * `[namespace:]<custom>`
 * (`namespace` as namespaceText returns it: '' for none).
 * `bodySha256Hex` is only read for the body-hash identity; hashing is left to the caller so this
 * stays synchronous and runs unchanged in a browser.
 */
export function composeKey(
	identity: KeyIdentity,
	namespace: string,
	bodySha256Hex?: string,
): string {
	let core: string;
	if (identity.kind === 'eventId') core = eventIdPrefix(identity.scope) + identity.id;
	else if (identity.kind === 'signedContent') core = SIGNED_CONTENT_PREFIX + identity.sha256Hex;
	else if (identity.kind === 'clientKey') core = CLIENT_KEY_PREFIX + identity.key;
	else if (identity.kind === 'custom') core = identity.key;
	else {
		if (bodySha256Hex === undefined)
			throw new KeyError('The body hash is missing', 'This is a bug: please report it.');
		core = BODY_HASH_PREFIX + bodySha256Hex;
	}
	// Checked here too, so no caller can build a key whose namespace could be read two ways (namespace.ts).
	assertNamespace(namespace);
	const key = namespace === '' ? core : `${namespace}:${core}`;
	assertStorableKey(key);
	return key;
}

/**
 * Half of a UTF-16 surrogate pair without its other half (JSON allows `"\ud800"`). PostgreSQL stores
 * text as UTF-8, where such a half becomes U+FFFD: two different ids would be stored as one key.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function assertStorableKey(key: string): void {
	if (key.includes('\u0000')) {
		throw new KeyError(
			'The key contains a NUL character, which PostgreSQL text cannot store',
			'Remove NUL characters from the id, namespace or custom key.',
			'invalid-key',
		);
	}
	if (LONE_SURROGATE.test(key)) {
		throw new KeyError(
			'The key contains half of a UTF-16 surrogate pair (such as "\\ud800" in JSON), which is not text: PostgreSQL would store it as U+FFFD and two different ids would share a key',
			'Make the sender send valid Unicode, or use Body Hash Only for such events.',
			'invalid-key',
		);
	}
	// A UTF-16 code unit is at most 3 UTF-8 bytes: most keys are too short to need counting.
	if (key.length * 3 <= MAX_KEY_BYTES) return;
	const bytes = utf8ByteLength(key);
	if (bytes > MAX_KEY_BYTES) {
		throw new KeyError(
			`The key is ${bytes} bytes long; at most ${MAX_KEY_BYTES} are allowed`,
			'An event id is short. If you key on something long, use Body Hash Only or hash it in the Custom Key expression.',
			'invalid-key',
		);
	}
}
