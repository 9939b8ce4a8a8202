// `npm run docs-signatures` (after npm run build): writes docs/signatures.md's provider table from the
// provider table itself (nodes/shared/webhook/providers/), between the markers below, so the docs
// cannot drift from what the nodes do. test/unit/signaturesDoc.test.js fails if they differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { ALGORITHM_NAMES, signatureShape } = require(
	join(root, 'dist/nodes/shared/webhook/schemeText.js'),
);
const { describeHandshake } = require(join(root, 'dist/nodes/shared/webhook/handshakes.js'));

export const DOC = join(root, 'docs', 'signatures.md');
export const START = '<!-- providers:start (npm run docs-signatures writes this table) -->';
export const END = '<!-- providers:end -->';

const SECRETS = {
	text: 'the secret as shown',
	whsecBase64: '`whsec_<base64>`, decoded',
	base64: 'base64, decoded',
	publicKeyHex: 'the public key (hex)',
	publicKeyBase64: 'the public key (base64 DER)',
};
const UNITS = { seconds: 's', milliseconds: 'ms', iso8601: 'ISO 8601' };
const cell = (text) => String(text).replace(/\|/g, '\\|').replace(/\n/g, ' ');
const code = (text) => `\`${text}\``;

function timestampCell(signing) {
	const t = signing.timestamp;
	if (t === undefined) return 'none';
	const where =
		t.from === 'header'
			? code(t.header)
			: t.from === 'signature'
				? `in ${code(signing.signatureHeaders[0])}`
				: `body ${code(t.path.join('.'))}`;
	return `${where} (${UNITS[t.unit]}), ±${signing.toleranceSeconds ?? 300} s`;
}

function eventIdCell(eventId) {
	if (eventId.kind === 'none') return 'none: the body hash';
	return eventId.kind === 'body'
		? `body ${code(eventId.path.join('.'))}`
		: eventId.names.map(code).join(', else ');
}

/** What a verified delivery of this provider is keyed on (the Key Source preset, Replay Guard on). */
function keyCell(p) {
	const prefix = code(p.value === 'stripe' ? 'evt:' : `${p.value}:`);
	if (p.eventId.kind === 'body') return `${prefix} + body ${code(p.eventId.path.join('.'))}`;
	if ('unverifiable' in p.signing)
		return `${prefix} + ${eventIdCell(p.eventId)} (nothing verified)`;
	const s = p.signing;
	const signed = [...s.signs.matchAll(/\{header:([^}]+)\}/g)].map((m) => m[1].toLowerCase());
	if (
		p.eventId.kind === 'headers' &&
		p.eventId.names.every((n) => signed.includes(n.toLowerCase()))
	)
		return `${prefix} + ${eventIdCell(p.eventId)} (signed)`;
	const parts = s.signs
		.replace(/\{timestamp\}|\{header:[^}]+\}/g, '')
		.replace(/[^{}]*?(\{[^}]+\})[^{}]*/g, '$1');
	const renewed = (p.retry?.renewedBodyFields?.length ?? 0) > 0 || s.timestamp?.from === 'body';
	if (parts === '{body}' && !renewed) return `${code('sha256:')} of the body (Replay Guard)`;
	return `${code('signed:')} digest of ${code(parts)}${renewed ? ' less renewed fields' : ''} (Replay Guard)`;
}

/** What one event's attempts keep and renew, from the table's `retry`. */
function retryCell(p) {
	if (p.retry === undefined) return 'unknown';
	return cell(`keeps ${p.retry.keeps}; renews ${p.retry.renews}`);
}

/** How long it waits for the answer: the seconds linked to the page that says so, or unknown. */
function timeoutCell(p) {
	return 'seconds' in p.timeout ? `[${p.timeout.seconds} s](${p.timeout.docs})` : 'unknown';
}

/** The markdown table of every provider, in the table's order. */
export function signaturesTable(providers) {
	const rows = [
		'| Provider | Signature | Signed content | Algorithm | Timestamp | Secret | Event id (Key Source preset) | Key once verified | Content types | Retries | Answers within | A retry of one event | Connecting (the handshake Reserve and Verify answer) |',
		'| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
	];
	for (const p of providers) {
		const name = `[${p.label}](${p.docs})`;
		const id = eventIdCell(p.eventId);
		const types = p.contentTypes.map(code).join(', ');
		const connecting = cell(describeHandshake(p.handshake));
		if ('unverifiable' in p.signing) {
			rows.push(
				`| ${name} | not verifiable from the request: ${cell(p.signing.unverifiable)} | | | | | ${id} | ${keyCell(p)} | ${types} | ${cell(p.retries)} | ${timeoutCell(p)} | ${retryCell(p)} | ${connecting} |`,
			);
			continue;
		}
		const s = p.signing;
		const headers = s.signatureHeaders.map(code).join(' + ');
		rows.push(
			`| ${name} | ${headers}: ${code(signatureShape(s.signature))} | ${code(s.signs)} | ${ALGORITHM_NAMES[s.algorithm]}, ${s.encoding} | ${timestampCell(s)} | ${SECRETS[s.secret]} | ${id} | ${keyCell(p)} | ${types} | ${cell(p.retries)} | ${timeoutCell(p)} | ${retryCell(p)} | ${connecting} |`,
		);
	}
	return rows.join('\n');
}

/** docs/signatures.md with the table between the markers replaced. */
export function docWithTable(doc, providers) {
	const start = doc.indexOf(START);
	const end = doc.indexOf(END);
	if (start < 0 || end < start) throw new Error(`docs/signatures.md lacks ${START} … ${END}`);
	return `${doc.slice(0, start + START.length)}\n${signaturesTable(providers)}\n${doc.slice(end)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
	const { PROVIDERS } = require(join(root, 'dist/nodes/shared/webhook/providers/index.js'));
	writeFileSync(DOC, docWithTable(readFileSync(DOC, 'utf8'), PROVIDERS));
	console.log(`wrote the provider table of docs/signatures.md (${PROVIDERS.length} providers)`);
}
