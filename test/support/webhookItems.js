// Items shaped like the ones n8n's Webhook node emits with "Raw Body" on: parsed body in
// json.body, the exact request bytes in binary.data.
const { createHash } = require('node:crypto');

/**
 * @param {object} request
 * @param {unknown} [request.body] json.body, as n8n's body parser made it
 * @param {string | Buffer} [request.rawBody] the bytes sent (default: JSON.stringify(body))
 * @param {Record<string, string>} [request.headers]
 * @param {boolean} [request.withRawBody] false: an item without the raw body, as with Raw Body off
 */
function webhookItem({ body, rawBody, headers = {}, withRawBody = true }) {
	const bytes = rawBody !== undefined ? Buffer.from(rawBody) : Buffer.from(JSON.stringify(body));
	/** @type {{ json: object, binary?: object }} */
	const item = {
		json: {
			headers: { 'content-type': 'application/json', ...headers },
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
				mimeType: 'application/json',
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

module.exports = { webhookItem, multipartItem, sha256Hex };
