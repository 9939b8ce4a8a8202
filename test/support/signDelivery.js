// Signs any bytes as a provider of the table would, for property tests over every verifiable
// provider: HMAC with a text, base64 or whsec_ secret, Ed25519 (Discord) and ECDSA P-256 (SendGrid)
// with a key pair made here; a shared-secret sender (Graph, Okta) "signs" by repeating its secret
// in its header, or in every element of its body array (withSharedSecret). The signed content is built by the package's own reader from the
// provider's description; that the descriptions are the providers' real schemes is proven by
// test/vectors against their documented examples and official libraries.
const { createHmac, generateKeyPairSync, randomBytes, sign: signWithKey } = require('node:crypto');
const { readSignatureHeader } = require('../../dist/nodes/shared/webhook/headers');
const { SIGNATURE_SCHEMES } = require('../../dist/nodes/shared/webhook/signatureSchemes');
const { signingKey } = require('../../dist/nodes/shared/webhook/verifySignature');

function timestampText(unit, nowSeconds) {
	if (unit === 'milliseconds') return String(nowSeconds * 1000);
	if (unit === 'iso8601') return new Date(nowSeconds * 1000).toISOString();
	return String(nowSeconds);
}

/** The signature header's value holding `signature` (and the fields format's timestamp). */
function headerValue(format, signature, timestamp) {
	if (format.format === 'whole') return `${format.prefix ?? ''}${signature}`;
	if (format.format === 'versions') return `${format.version},${signature}`;
	const fields = [`${format.signatureKey}=${signature}`];
	if (format.timestampKey !== undefined) fields.unshift(`${format.timestampKey}=${timestamp}`);
	return fields.join(format.separator);
}

/**
 * A credential secret and the signer that goes with it, by the provider's secret format; an HMAC
 * scheme signs with `secret` when given (a stack's fixed secret), else with a fresh one.
 * @returns {{ secret: string, sign: (content: Uint8Array) => string }}
 */
function signerFor(signing, secret = undefined) {
	// A shared secret (Graph's clientState, Okta's header) is not a signature: the sender "signs" by
	// repeating the secret where the table says (signDelivery, withSharedSecret).
	if ('sharedSecret' in signing) {
		const shared = secret ?? `shared_${randomBytes(18).toString('hex')}`;
		return { secret: shared, sign: () => shared };
	}
	if (signing.algorithm === 'ed25519') {
		const { publicKey, privateKey } = generateKeyPairSync('ed25519');
		const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
		return {
			secret: raw.toString('hex'),
			sign: (content) => signWithKey(null, content, privateKey).toString(signing.encoding),
		};
	}
	if (signing.algorithm === 'ecdsaP256') {
		const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
		return {
			secret: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
			sign: (content) =>
				signWithKey('sha256', content, { key: privateKey, dsaEncoding: 'der' }).toString(
					signing.encoding,
				),
		};
	}
	const bytes = randomBytes(24);
	secret ??=
		signing.secret === 'whsecBase64'
			? `whsec_${bytes.toString('base64')}`
			: signing.secret === 'base64'
				? bytes.toString('base64')
				: `secret_${bytes.toString('hex')}`;
	const key = signingKey(secret, signing.secret, 'secret');
	return {
		secret,
		sign: (content) => createHmac(signing.algorithm, key).update(content).digest(signing.encoding),
	};
}

/**
 * Signs `bytes` as `provider` would, with the given headers (an id header, a timestamp header…)
 * filled in where the scheme reads them. Returns the headers to send (lower-case names).
 * @param {any} provider a verifiable entry of the provider table
 * @param {{ sign: (content: Uint8Array) => string }} signer
 * @param {{ bytes: Buffer, headers: Record<string, string>, url?: string, nowSeconds: number }} request
 */
function signDelivery(provider, signer, { bytes, headers, url, nowSeconds }) {
	const { signing } = provider;
	if ('sharedSecret' in signing) {
		const { sharedSecret } = signing;
		// In a body array, the bytes carry it already (withSharedSecret): the headers are left as they are.
		if (sharedSecret.in !== 'header') return { ...headers };
		return { ...headers, [sharedSecret.header.toLowerCase()]: signer.sign(bytes) };
	}
	const timestamp = timestampText(signing.timestamp?.unit ?? 'seconds', nowSeconds);
	const out = { ...headers };
	if (signing.timestamp?.from === 'header') out[signing.timestamp.header.toLowerCase()] = timestamp;
	for (const [, name] of signing.signs.matchAll(/\{header:([^}]+)\}/g))
		out[name.toLowerCase()] ??= `dlv_${randomBytes(6).toString('hex')}`;
	const signatureHeader = signing.signatureHeaders[0].toLowerCase();
	out[signatureHeader] = headerValue(signing.signature, 'placeholder', timestamp);
	const read = SIGNATURE_SCHEMES[provider.value].read({
		header: (name) => readSignatureHeader(out, name),
		body: bytes,
		url,
	});
	if ('invalid' in read) throw new Error(`signDelivery ${provider.value}: ${read.invalid}`);
	out[signatureHeader] = headerValue(signing.signature, signer.sign(read.content), timestamp);
	return out;
}

/**
 * A shared-secret sender's body with its secret where the table puts it: each element of a body
 * array gets `field` = secret (Graph's value[].clientState; an element added by hand counts too).
 * A header-borne secret leaves the body alone (signDelivery sets the header).
 * @param {any} provider a shared-secret entry of the provider table
 * @param {string} secret
 * @param {object} json the body
 * @returns {Buffer}
 */
function withSharedSecret(provider, secret, json) {
	const { sharedSecret } = provider.signing;
	const copy = structuredClone(json);
	if (sharedSecret.in === 'bodyArray') {
		let array = copy;
		for (const step of sharedSecret.array) array = array[step];
		for (const element of array) element[sharedSecret.field] = secret;
	}
	return Buffer.from(JSON.stringify(copy));
}

/** Sets a value at a path of plain objects, making the objects on the way. */
function setPath(target, path, value) {
	let node = target;
	for (const step of path.slice(0, -1)) {
		if (node[step] === null || typeof node[step] !== 'object') node[step] = {};
		node = node[step];
	}
	node[path[path.length - 1]] = value;
}

module.exports = {
	headerValue,
	setPath,
	signDelivery,
	signerFor,
	timestampText,
	withSharedSecret,
};
