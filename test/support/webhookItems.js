// Items shaped like the ones n8n's Webhook node emits with "Raw Body" on: parsed body in
// json.body, the exact request bytes in binary.data. JSON by default; a form (Twilio, a Slack slash
// command, GitHub's form deliveries) with `mediaType: FORM_MEDIA_TYPE`, its body the flat parse of
// its bytes, as n8n's Webhook node makes it. A verified delivery is only taken when its Content-Type
// is one its sender uses and `$json.body` is the parse of the signed bytes (signedParse.ts).
const { createHash } = require('node:crypto');

const JSON_MEDIA_TYPE = 'application/json';
const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';

/**
 * A form's fields as n8n's Webhook node reads them: flat, in order of first appearance, a name sent
 * twice an array of its values.
 * @param {string} text
 * @returns {Record<string, string | string[]>}
 */
function formFields(text) {
	/** @type {Record<string, string | string[]>} */
	const fields = {};
	for (const [name, value] of new URLSearchParams(text)) {
		const before = fields[name];
		if (before === undefined) fields[name] = value;
		else fields[name] = Array.isArray(before) ? [...before, value] : [before, value];
	}
	return fields;
}

/** A form's bytes from its fields (an array: the name repeated). */
function formText(fields) {
	const form = new URLSearchParams();
	for (const [name, value] of Object.entries(fields))
		for (const one of Array.isArray(value) ? value : [value]) form.append(name, String(one));
	return form.toString();
}

/** The bytes parsed as the media type (a form: flat fields), or undefined when they are not that. */
function parsedAs(bytes, mediaType) {
	const text = Buffer.from(bytes).toString('utf8');
	if (mediaType === FORM_MEDIA_TYPE) return { body: formFields(text) };
	try {
		return { body: JSON.parse(text) };
	} catch {
		return undefined;
	}
}

/**
 * The media type a sender of the provider table posts these bytes as: JSON where it posts JSON and
 * the bytes are JSON, else a form where it posts forms (Twilio, a Slack slash command); undefined
 * when the bytes are none of the media types it uses (a documented example signing plain text).
 * @param {{ contentTypes: readonly string[] }} provider
 * @param {string | Buffer} bytes
 */
function senderMediaType(provider, bytes) {
	if (provider.contentTypes.includes(JSON_MEDIA_TYPE) && parsedAs(bytes, JSON_MEDIA_TYPE))
		return JSON_MEDIA_TYPE;
	return provider.contentTypes.includes(FORM_MEDIA_TYPE) ? FORM_MEDIA_TYPE : undefined;
}

/** The media type of a Content-Type header's value, lower case, without parameters. */
function declaredMediaType(headers) {
	const entry = Object.entries(headers).find(([name]) => name.toLowerCase() === 'content-type');
	return entry === undefined ? undefined : String(entry[1]).split(';')[0].trim().toLowerCase();
}

/**
 * The item n8n's Webhook node emits for a provider's delivery: the media type the headers declare,
 * else the one the provider posts these bytes as (senderMediaType, else its first), and the body
 * parsed from the bytes in it. Bytes that are not that media type (a byte changed inside JSON) keep
 * their text as the body: a check refuses them before it reads the body.
 * @param {{ contentTypes: readonly string[] }} provider
 * @param {{ rawBody: string | Buffer, headers?: Record<string, string> }} delivery
 */
function deliveryItem(provider, { rawBody, headers = {} }) {
	const mediaType =
		declaredMediaType(headers) ?? senderMediaType(provider, rawBody) ?? provider.contentTypes[0];
	const body = parsedAs(rawBody, mediaType)?.body ?? Buffer.from(rawBody).toString('utf8');
	return webhookItem({ body, rawBody, headers, mediaType });
}

/**
 * @param {object} request
 * @param {unknown} [request.body] json.body, as n8n's body parser made it (default for a form: the
 *   flat parse of rawBody)
 * @param {string | Buffer} [request.rawBody] the bytes sent (default: JSON.stringify(body), or the
 *   form of body's fields)
 * @param {Record<string, string>} [request.headers] (a content-type here wins over mediaType)
 * @param {string} [request.mediaType] the Content-Type sent (default application/json)
 * @param {boolean} [request.withRawBody] false: an item without the raw body, as with Raw Body off
 */
function webhookItem({
	body,
	rawBody,
	headers = {},
	withRawBody = true,
	mediaType = JSON_MEDIA_TYPE,
}) {
	const form = mediaType === FORM_MEDIA_TYPE;
	const bytes =
		rawBody !== undefined
			? Buffer.from(rawBody)
			: Buffer.from(form ? formText(body) : JSON.stringify(body));
	if (form && body === undefined) body = formFields(bytes.toString('utf8'));
	/** @type {{ json: object, binary?: object }} */
	const item = {
		json: {
			headers: { 'content-type': mediaType, ...headers },
			params: {},
			query: {},
			body,
			webhookUrl: 'http://127.0.0.1:5678/webhook/idempotent-webhook',
			executionMode: 'production',
		},
	};
	if (withRawBody) {
		item.binary = {
			data: {
				data: bytes.toString('base64'),
				mimeType: mediaType,
				fileSize: String(bytes.length),
			},
		};
	}
	return item;
}

/**
 * An item shaped like the one n8n 2.41's Webhook node emits for a multipart/form-data request
 * (handleFormData): the form fields in json.body, each file part a binary named after its field, with
 * the file name copyBinaryFile always sets; Raw Body is ignored for multipart.
 * @param {object} request
 * @param {Record<string, string>} request.fields json.body
 * @param {string | Buffer} request.file the bytes of the file part named `data`
 * @param {string} [request.fileName]
 * @param {string} [request.boundary]
 * @param {Record<string, string>} [request.headers]
 */
function multipartItem({
	fields,
	file,
	fileName = 'captured.json',
	boundary = '----n8nFormBoundary7MA4YWxkTrZu0gW',
	headers = {},
}) {
	const bytes = Buffer.from(file);
	return {
		json: {
			headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, ...headers },
			params: {},
			query: {},
			body: fields,
			webhookUrl: 'http://127.0.0.1:5678/webhook/idempotent-webhook',
			executionMode: 'production',
		},
		binary: {
			data: {
				data: bytes.toString('base64'),
				mimeType: 'application/json',
				fileType: 'json',
				fileExtension: 'json',
				fileName,
				fileSize: `${bytes.length} B`,
			},
		},
	};
}

function sha256Hex(bytes) {
	return createHash('sha256').update(bytes).digest('hex');
}

/** The value without the fields at `paths` (`*` steps over every element of an array). */
function withoutPaths(value, paths) {
	if (paths.length === 0 || value === null || typeof value !== 'object') return value;
	const copy = Array.isArray(value) ? [...value] : { ...value };
	for (const name of Object.keys(copy)) {
		const here = paths.filter((path) => path[0] === name || path[0] === '*');
		if (!Array.isArray(copy) && here.some((path) => path.length === 1)) {
			delete copy[name];
			continue;
		}
		const deeper = here.filter((path) => path.length > 1).map((path) => path.slice(1));
		if (deeper.length > 0) copy[name] = withoutPaths(copy[name], deeper);
	}
	return copy;
}

/** Twilio's form as it signs it: fields decoded, sorted by name then value, each name + value. */
function sortedFormText(bytes) {
	const pairs = [...new URLSearchParams(Buffer.from(bytes).toString('utf8'))];
	pairs.sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
	return pairs
		.filter(([n, v], i) => i === 0 || n !== pairs[i - 1][0] || v !== pairs[i - 1][1])
		.map(([n, v]) => n + v)
		.join('');
}

/**
 * The replay guard's digest of a delivery whose signature holds, written out from the rule (not the
 * package's code): `sha256:` + SHA-256 of the raw bytes when the scheme signs the raw body alone
 * (timestamps, signed headers and literal text left out) and the provider renews no body field per
 * attempt; else `signed:` + SHA-256 of the signed parts — the body (as JSON without the renewed
 * fields, when there are any), the sorted form, the URL — where parts signed one after another
 * with nothing between them are one text (Twilio's URL then form), each such run framed `<length>:`.
 * @param {any} provider a provider table entry
 * @param {{ rawBody: string | Buffer, headers?: Record<string, string>, url?: string }} delivery
 */
function expectedDigest(provider, { rawBody, url }) {
	const { signing } = provider;
	const bytes = Buffer.from(rawBody);
	// A shared secret signs nothing: the body as received, hashed as it is.
	if ('sharedSecret' in signing) return `sha256:${sha256Hex(bytes)}`;
	const renewed = [...(provider.retry?.renewedBodyFields ?? [])];
	if (signing.timestamp?.from === 'body') renewed.push(signing.timestamp.path);
	// Runs of parts signed one after another (nothing between them): each run one text, as signed.
	/** @type {Buffer[][]} */
	const runs = [];
	/** @type {Buffer[] | undefined} */
	let run;
	let rawAlone = true;
	for (const piece of signing.signs.split(/(\{[^}]+\})/)) {
		if (piece === '') continue;
		const name = /^\{([^}]+)\}$/.exec(piece)?.[1];
		// Literal text, timestamps and signed headers (renewed by some senders on each attempt): left out.
		if (name === undefined || name === 'timestamp' || name.startsWith('header:')) {
			run = undefined;
			continue;
		}
		if (run === undefined) runs.push((run = []));
		if (name === 'body') {
			if (renewed.length === 0) run.push(bytes);
			else {
				rawAlone = false;
				const json = withoutPaths(JSON.parse(bytes.toString('utf8')), renewed);
				run.push(Buffer.from(JSON.stringify(json)));
			}
			continue;
		}
		rawAlone = false;
		if (name === 'form') run.push(Buffer.from(sortedFormText(bytes)));
		else run.push(Buffer.from(url));
	}
	if (rawAlone && runs.length === 1 && runs[0].length === 1) return `sha256:${sha256Hex(bytes)}`;
	const parts = runs.map((chunks) => Buffer.concat(chunks));
	const framed = Buffer.concat(parts.flatMap((part) => [Buffer.from(`${part.length}:`), part]));
	return `signed:${sha256Hex(framed)}`;
}

module.exports = {
	webhookItem,
	deliveryItem,
	multipartItem,
	sha256Hex,
	formFields,
	senderMediaType,
	expectedDigest,
	JSON_MEDIA_TYPE,
	FORM_MEDIA_TYPE,
};
