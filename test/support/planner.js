// Drives the built key planner (dist/planner/index.html) in a real headless Chromium (Debian's
// /usr/bin/chromium through playwright-core), and builds the items n8n's Webhook node would make
// from the same bytes and headers, to run them through the real Idempotency Reserve node.
const { spawn } = require('node:child_process');
const { mkdtempSync, readFileSync, readdirSync, rmSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const { CHROMIUM, chromiumAvailable, launchChromium } = require('./chromium');

const PAGE_FILE = path.join(__dirname, '..', '..', 'dist', 'planner', 'index.html');
const PAGE_URL = pathToFileURL(PAGE_FILE).href;
const SCREENSHOTS = path.join(__dirname, '..', '..', 'test-output', 'planner');

/** A fresh browser profile, no network features; every request of every page is recorded. */
async function openPlanner() {
	const profile = mkdtempSync(path.join(os.tmpdir(), 'planner-chromium-'));
	const context = await launchChromium(profile, { acceptDownloads: true });
	const requests = [];
	const problems = [];
	context.on('request', (request) => requests.push(request.url()));
	const failed = [];
	context.on('requestfailed', (request) =>
		failed.push({ url: request.url(), failure: request.failure()?.errorText }),
	);
	const page = context.pages()[0] ?? (await context.newPage());
	page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
	page.on('console', (message) => {
		if (message.type() === 'error' || message.type() === 'warning')
			problems.push(`console ${message.type()}: ${message.text()}`);
	});
	try {
		await page.goto(PAGE_URL);
		await settled(page);
	} catch (error) {
		// No browser left running behind a failed start (Jest would wait for it).
		await context.close();
		rmSync(profile, { recursive: true, force: true });
		throw error;
	}
	return {
		context,
		page,
		requests,
		failed,
		problems,
		async close() {
			await context.close();
			rmSync(profile, { recursive: true, force: true });
		},
		/**
		 * Closes the browser, then lists the files of its profile (storage, form history, caches) that
		 * hold any of `needles`, in UTF-8 or UTF-16 (how Chromium stores some strings); then removes it.
		 * @param {string[]} needles
		 */
		async closeAndSearchProfile(needles) {
			await context.close();
			const hits = [];
			try {
				for (const entry of readdirSync(profile, { recursive: true, withFileTypes: true })) {
					if (!entry.isFile()) continue;
					const file = path.join(entry.parentPath, entry.name);
					const bytes = readFileSync(file);
					for (const needle of needles) {
						if (
							bytes.includes(Buffer.from(needle, 'utf8')) ||
							bytes.includes(Buffer.from(needle, 'utf16le'))
						)
							hits.push(`${path.relative(profile, file)}: ${needle.slice(0, 6)}…`);
					}
				}
			} finally {
				rmSync(profile, { recursive: true, force: true });
			}
			return hits;
		},
	};
}

/** Sets fields by id, each with the event a person's input fires (one round trip). */
async function fill(page, values) {
	await page.evaluate((fields) => {
		for (const [id, value] of Object.entries(fields)) {
			if (value === undefined || value === null) continue;
			const field = /** @type {HTMLInputElement} */ (document.getElementById(id));
			if (field.value === String(value)) continue;
			field.value = String(value);
			field.dispatchEvent(
				new Event(field.tagName === 'SELECT' ? 'change' : 'input', { bubbles: true }),
			);
		}
	}, values);
}

/** `{ name: value }` as `Name: value` lines. */
const headerText = (headers) =>
	Object.entries(headers)
		.map(([name, value]) => `${name}: ${value}`)
		.join('\n');

/**
 * Fills "Check a signature" and returns what it shows. `body` (bytes) is loaded through
 * #sigBodyFile; `bodyText` is typed into #sigBody instead.
 * @param {import('playwright-core').Page} page
 * @param {{ provider: string, secret: string, previousSecret?: string, headers: Record<string, string> | string,
 *   body?: string | Buffer, bodyText?: string, toleranceSeconds?: number,
 *   hmac?: { signatureHeader?: string, algorithm?: string, encoding?: string, signaturePrefix?: string, timestampHeader?: string } }} delivery
 */
async function checkSignature(
	page,
	{
		provider,
		secret,
		previousSecret = '',
		headers,
		body,
		bodyText,
		toleranceSeconds = 300,
		hmac = {},
	},
) {
	await fill(page, {
		sigProvider: provider,
		sigSecret: secret,
		sigPreviousSecret: previousSecret,
		sigTolerance: toleranceSeconds,
		sigHmacHeader: hmac.signatureHeader ?? 'X-Signature',
		sigHmacAlgorithm: hmac.algorithm ?? 'sha256',
		sigHmacEncoding: hmac.encoding ?? 'hex',
		sigHmacPrefix: hmac.signaturePrefix ?? '',
		sigHmacTimestampHeader: hmac.timestampHeader ?? '',
		sigHeaders: typeof headers === 'string' ? headers : headerText(headers),
	});
	if (bodyText !== undefined) {
		// Always as typed, even when the text equals the preview of a file loaded before.
		await page.evaluate((text) => {
			const field = /** @type {HTMLTextAreaElement} */ (document.getElementById('sigBody'));
			field.value = text;
			field.dispatchEvent(new Event('input', { bubbles: true }));
		}, bodyText);
	}
	if (body !== undefined) {
		await page.setInputFiles('#sigBodyFile', {
			name: 'delivery.bin',
			mimeType: 'application/octet-stream',
			buffer: Buffer.from(body),
		});
	}
	await page.waitForSelector('#sigResult[aria-busy="false"]', { state: 'attached' });
	return await page.evaluate(() => ({
		verdict: document.getElementById('sigVerdict').textContent,
		hint: document.getElementById('sigHint').textContent,
		signed: document.getElementById('sigSigned').textContent,
		signedInfo: document.getElementById('sigSignedInfo').textContent,
		expected: document.getElementById('sigExpected').textContent,
	}));
}

/**
 * Fills "Explain a duplicate" (and the planner's Mode it is judged for) and returns what it shows.
 * @param {import('playwright-core').Page} page
 * @param {{ key: string, row?: string, mode?: string }} input
 */
async function explainDuplicate(page, { key, row = '', mode }) {
	await fill(page, { dupKey: key, dupRow: row, ...(mode ? { mode } : {}) });
	return await page.evaluate(() => ({
		verdict: document.getElementById('dupVerdict').textContent,
		explain: document.getElementById('dupExplain').textContent,
		next: document.getElementById('dupNext').textContent,
		keyNote: document.getElementById('dupKeyNote').textContent,
		warnings: document.getElementById('dupWarnings').textContent,
		sql: document.getElementById('dupSql').textContent,
	}));
}

/**
 * Fills "Explain a retry of a multi-step event" and returns what it shows.
 * @param {import('playwright-core').Page} page
 * @param {{ steps: string[], row?: string }} input
 */
async function explainRetry(page, { steps, row = '' }) {
	await fill(page, { retrySteps: steps.join('\n'), retryRow: row });
	return await page.evaluate(() => ({
		verdict: document.getElementById('retryVerdict').textContent,
		plan: [...document.querySelectorAll('#retryPlan li')].map((item) => item.textContent),
		warnings: document.getElementById('retryWarnings').textContent,
	}));
}

/** Waits until the page has shown the result of the latest input (aria-busy on the key's live region). */
async function settled(page) {
	await page.waitForSelector('#keyResult[aria-busy="false"]', { state: 'attached' });
}

/**
 * Sets the page's fields; `body` (bytes) is loaded through #bodyFile so the page keys on exactly
 * those bytes. Returns what the page shows. `fingerprintSource` is set after `mode` (a mode change
 * resets it to the mode's default, as in the node).
 * @param {import('playwright-core').Page} page
 * @param {{ body?: string | Buffer, headers?: string, keySource?: string, eventIdPath?: string,
 *   namespace?: string, mode?: string, leaseSeconds?: number, schema?: string, table?: string,
 *   retentionDays?: number, fingerprintSource?: string, fingerprintExpression?: string }} settings
 */
async function plan(
	page,
	{
		body,
		headers = '',
		keySource = 'eventIdOrBodyHash',
		eventIdPath,
		namespace = '',
		mode,
		leaseSeconds,
		schema,
		table,
		retentionDays,
		fingerprintSource,
		fingerprintExpression,
	},
) {
	// One round trip for all fields, each with the event a person's input fires.
	const values = {
		keySource,
		eventIdPath,
		headers,
		namespace,
		mode,
		leaseSeconds,
		schema,
		table,
		retentionDays,
		fingerprintSource,
		fingerprintExpression,
	};
	await page.evaluate((fields) => {
		for (const [id, value] of Object.entries(fields)) {
			if (value === undefined || value === null) continue;
			const field = /** @type {HTMLInputElement} */ (document.getElementById(id));
			if (field.value === String(value)) continue;
			field.value = String(value);
			field.dispatchEvent(
				new Event(field.tagName === 'SELECT' ? 'change' : 'input', { bubbles: true }),
			);
		}
	}, values);
	if (body !== undefined) {
		await page.setInputFiles('#bodyFile', {
			name: 'body.bin',
			mimeType: 'application/octet-stream',
			buffer: Buffer.from(body),
		});
	}
	await settled(page);
	return await page.evaluate(() => ({
		key: document.getElementById('key').textContent,
		problem: document.getElementById('key').classList.contains('problem'),
		explain: document.getElementById('keyExplain').textContent,
		fingerprint: document.getElementById('fingerprint').textContent,
		fingerprintExplain: document.getElementById('fingerprintExplain').textContent,
		sql: document.getElementById('sql').textContent,
	}));
}

// ---- what n8n's Webhook node makes of a request (n8n 2.41, Raw Body on) ----------------------

/** `Name: value` lines as Node.js gives them to n8n: names lower-cased, values trimmed, repeats joined with ", ". */
function nodeHeaders(lines) {
	/** @type {Record<string, string>} */
	const headers = {};
	for (const line of lines.split(/\r?\n/)) {
		if (line.trim() === '') continue;
		const colon = line.indexOf(':');
		const name = line.slice(0, colon).trim().toLowerCase();
		const value = line.slice(colon + 1).trim();
		headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
	}
	return headers;
}

/**
 * The item n8n's Webhook node emits: `json.body` as n8n's body parser makes it (application/json:
 * JSON.parse of the UTF-8 text after one byte order mark; an empty body gives none), the exact bytes
 * as the raw-body binary `data`.
 */
function n8nWebhookItem(bytes, headerLines) {
	const headers = { 'content-type': 'application/json', ...nodeHeaders(headerLines) };
	let body;
	if (bytes.length > 0 && headers['content-type'] === 'application/json') {
		const text = bytes.toString('utf8');
		body = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
	}
	return {
		json: {
			headers,
			params: {},
			query: {},
			body,
			webhookUrl: 'http://127.0.0.1:5678/webhook/idempotent-webhook',
			executionMode: 'production',
		},
		binary: {
			data: {
				data: bytes.toString('base64'),
				mimeType: 'application/json',
				fileSize: String(bytes.length),
			},
		},
	};
}

/**
 * Node parameters for the page's settings.
 * @param {{ keySource?: string, eventIdPath?: string, namespace?: string }} settings
 */
function reserveParameters({
	keySource = 'eventIdOrBodyHash',
	eventIdPath = '{{ $json.body.id }}',
	namespace = '',
}) {
	const asParameter = (text) => (text.includes('{{') && !text.startsWith('=') ? `=${text}` : text);
	const parameters = { keySource, namespace: asParameter(namespace) };
	if (keySource === 'eventIdOrBodyHash') parameters.eventId = asParameter(eventIdPath);
	if (keySource === 'custom') parameters.customKey = asParameter(eventIdPath);
	return parameters;
}

/** Starts `npm run planner -- --serve` (the script itself) and resolves the URL it prints. */
async function servePlanner() {
	const script = path.join(__dirname, '..', '..', 'scripts', 'planner.mjs');
	const child = spawn(process.execPath, [script, '--serve'], {
		stdio: ['ignore', 'pipe', 'inherit'],
	});
	try {
		const url = await new Promise((resolve, reject) => {
			let text = '';
			child.stdout.on('data', (chunk) => {
				text += chunk;
				const match = /http:\/\/127\.0\.0\.1:\d+\//.exec(text);
				if (match) resolve(match[0]);
			});
			child.on('exit', (code) => reject(new Error(`planner --serve exited with ${code}`)));
		});
		return { child, url };
	} catch (error) {
		child.kill();
		throw error;
	}
}

module.exports = {
	checkSignature,
	explainDuplicate,
	explainRetry,
	headerText,
	nodeHeaders,
	servePlanner,
	chromiumAvailable,
	CHROMIUM,
	PAGE_FILE,
	PAGE_URL,
	SCREENSHOTS,
	openPlanner,
	plan,
	settled,
	n8nWebhookItem,
	reserveParameters,
};
