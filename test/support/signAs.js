// Signs a delivery the way a provider of the table would, from its signing description: for tests
// that need fresh deliveries of any body (the built-in workflows in a real n8n, whose tolerance a
// documented example's old timestamp would fail). That the descriptions are the providers' own
// schemes is proven by test/vectors (their documented examples and official libraries); this only
// builds the content with the package's reader and signs it with an HMAC (text or whsec_ secrets).
// The body is sent in the provider's own media type (the table's contentTypes): JSON where the
// sender posts JSON, else a URL-encoded form of the body's fields (Twilio), each value as text.
const { createHmac, randomUUID } = require('node:crypto');
const { readSignatureHeader } = require('../../dist/nodes/shared/webhook/headers');
const { SIGNATURE_SCHEMES } = require('../../dist/nodes/shared/webhook/signatureSchemes');
const { signingKey } = require('../../dist/nodes/shared/webhook/verifySignature');
const { headerValue, setPath, timestampText } = require('./signDelivery');

const PLACEHOLDER = 'placeholder';
const JSON_MEDIA_TYPE = 'application/json';
const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';

/** The media type the provider posts: JSON when the table lists it, else a form when it lists one. */
function mediaTypeOf(provider) {
	const types = provider.contentTypes ?? [JSON_MEDIA_TYPE];
	if (types.includes(JSON_MEDIA_TYPE)) return JSON_MEDIA_TYPE;
	if (types.includes(FORM_MEDIA_TYPE)) return FORM_MEDIA_TYPE;
	throw new Error(`signAs ${provider.value}: sends ${types.join(', ')}, neither JSON nor a form`);
}

/** The body's fields as a URL-encoded form, in their order; a value that is not text as its JSON. */
function formBytes(fields) {
	const form = new URLSearchParams();
	for (const [name, value] of Object.entries(fields))
		for (const one of Array.isArray(value) ? value : [value])
			form.append(name, typeof one === 'string' ? one : JSON.stringify(one));
	return Buffer.from(form.toString());
}

/**
 * @param {import('../../dist/nodes/shared/webhook/providers').ProviderDefinition} provider
 * @param {{ body: object, secret: string, nowSeconds?: number, url?: string, eventId?: string }} request
 * @returns {{ body: Buffer, headers: Record<string, string> }}
 */
function signAs(
	provider,
	{ body, secret, nowSeconds = Math.floor(Date.now() / 1000), url, eventId },
) {
	const { signing } = provider;
	if ('unverifiable' in signing) throw new Error(`${provider.value} signs nothing`);
	// A shared secret is no signature: withSharedSecret and signDelivery (signDelivery.js) place it.
	if ('sharedSecret' in signing) throw new Error(`${provider.value} sends a shared secret`);
	const timestamp = timestampText(signing.timestamp?.unit ?? 'seconds', nowSeconds);
	/** @type {Record<string, unknown>} */
	const json = structuredClone(body);
	const mediaType = mediaTypeOf(provider);
	/** @type {Record<string, string>} */
	const headers = { 'content-type': mediaType };
	const id = eventId ?? `evt_${provider.value}_${randomUUID()}`;
	if (provider.eventId.kind === 'headers') headers[provider.eventId.names[0].toLowerCase()] = id;
	else if (provider.eventId.kind === 'body') setPath(json, provider.eventId.path, id);
	if (signing.timestamp?.from === 'header')
		headers[signing.timestamp.header.toLowerCase()] = timestamp;
	if (signing.timestamp?.from === 'body') setPath(json, signing.timestamp.path, nowSeconds * 1000);
	for (const [, name] of signing.signs.matchAll(/\{header:([^}]+)\}/g))
		headers[name.toLowerCase()] ??= `dlv_${randomUUID()}`;
	const bytes = mediaType === FORM_MEDIA_TYPE ? formBytes(json) : Buffer.from(JSON.stringify(json));
	const scheme = SIGNATURE_SCHEMES[provider.value];
	const signatureHeader = signing.signatureHeaders[0].toLowerCase();
	headers[signatureHeader] = headerValue(signing.signature, PLACEHOLDER, timestamp);
	const read = scheme.read({
		header: (name) => readSignatureHeader(headers, name),
		body: bytes,
		url,
	});
	if ('invalid' in read) throw new Error(`signAs ${provider.value}: ${read.invalid}`);
	const key = signingKey(secret, signing.secret, 'secret');
	const signature = createHmac(signing.algorithm, key)
		.update(read.content)
		.digest(signing.encoding);
	headers[signatureHeader] = headerValue(signing.signature, signature, timestamp);
	return { body: bytes, headers };
}

module.exports = { signAs };
