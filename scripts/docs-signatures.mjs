// `npm run docs-signatures` (after npm run build): writes docs/signatures.md's provider table and
// docs/answer-first.md's table of senders' timeouts from the provider table itself
// (nodes/shared/webhook/providers/), between the markers below, so the docs cannot drift from what
// the nodes do. test/unit/signaturesDoc.test.js and answerFirstDoc.test.js fail if they differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { ALGORITHM_NAMES, SHARED_SECRET_LIMITS, secretPlace, signatureShape } = require(
	join(root, 'dist/nodes/shared/webhook/schemeText.js'),
);
const { describeHandshake } = require(join(root, 'dist/nodes/shared/webhook/handshakes.js'));
const { UNSCOPED_PROVIDER } = require(join(root, 'dist/nodes/shared/keys/prefixes.js'));

export const DOC = join(root, 'docs', 'signatures.md');
export const START = '<!-- providers:start (npm run docs-signatures writes this table) -->';
export const END = '<!-- providers:end -->';

export const ANSWER_FIRST_DOC = join(root, 'docs', 'answer-first.md');
export const ANSWER_FIRST_START =
	'<!-- answer-first:start (npm run docs-signatures writes this table) -->';
export const ANSWER_FIRST_END = '<!-- answer-first:end -->';
/** The business steps' lengths the answer-first table has a column for, in seconds. */
export const STEP_SECONDS = [1, 5, 30];
/** What the sender's wait must leave besides the steps: the Webhook node, Reserve, the network. */
export const HEADROOM_SECONDS = 1;

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
	const prefix = code(p.value === UNSCOPED_PROVIDER ? 'evt:' : `${p.value}:`);
	if (p.eventId.kind === 'body') return `${prefix} + body ${code(p.eventId.path.join('.'))}`;
	if ('unverifiable' in p.signing)
		return `${prefix} + ${eventIdCell(p.eventId)} (nothing verified)`;
	// Nothing signed: the body as received stands for the delivery.
	if ('sharedSecret' in p.signing)
		return `${code('sha256:')} of the body as received (Replay Guard; nothing signed)`;
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

/** How long it waits for the answer: the seconds linked to the page that says so, or unknown and why. */
function timeoutCell(p) {
	return 'seconds' in p.timeout
		? `[${p.timeout.seconds} s](${p.timeout.docs})`
		: cell(`unknown: ${p.timeout.unknown}`);
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
		if ('sharedSecret' in p.signing) {
			const { sharedSecret } = p.signing;
			const every = sharedSecret.in === 'header' ? '' : 'every element; ';
			rows.push(
				`| ${name} | no signature: a shared secret, ${code(secretPlace(sharedSecret))} equal to the secret (${every}constant time) | ${cell(SHARED_SECRET_LIMITS)}. ${cell(p.signing.caveat)} | equality, constant time | none | the secret as chosen (the same value as in the sender's settings) | ${id} | ${keyCell(p)} | ${types} | ${cell(p.retries)} | ${timeoutCell(p)} | ${retryCell(p)} | ${connecting} |`,
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

/** Whether steps of this length, with the headroom, reach the sender's wait: then answer first. */
export function needsAnswerFirst(timeoutSeconds, stepSeconds) {
	return stepSeconds + HEADROOM_SECONDS >= timeoutSeconds;
}

/** The senders whose wait is known, in the table's order: answer first or last for each step length. */
export function answerFirstTable(providers) {
	const rows = [
		`| Sender | Answers within | ${STEP_SECONDS.map((s) => `Steps of ${s} s`).join(' | ')} | Answer first when the steps take |`,
		`| --- | --- | ${STEP_SECONDS.map(() => '---').join(' | ')} | --- |`,
	];
	for (const p of providers) {
		if (!('seconds' in p.timeout)) continue;
		const { seconds, docs } = p.timeout;
		const cells = STEP_SECONDS.map((step) =>
			needsAnswerFirst(seconds, step) ? '**answer first**' : 'answer last',
		);
		const from = Math.max(0, seconds - HEADROOM_SECONDS);
		rows.push(
			`| ${p.label} | [${seconds} s](${docs}) | ${cells.join(' | ')} | ${from === 0 ? 'always' : `${from} s or more`} |`,
		);
	}
	return rows.join('\n');
}

/** The senders whose wait no page of theirs states, named under the table. */
export function unknownTimeoutsLine(providers) {
	const unknown = providers.filter((p) => !('seconds' in p.timeout)).map((p) => p.label);
	return `Unknown, so not in the table (why, in the **Answers within** column of [docs/signatures.md](signatures.md#providers)): ${unknown.join(', ')}.`;
}

/** Replaces what lies between two markers of a document. */
function between(doc, start, end, text, name) {
	const from = doc.indexOf(start);
	const to = doc.indexOf(end);
	if (from < 0 || to < from) throw new Error(`${name} lacks ${start} … ${end}`);
	return `${doc.slice(0, from + start.length)}\n${text}\n${doc.slice(to)}`;
}

/** docs/answer-first.md with its table of senders between the markers replaced. */
export function answerFirstDocWithTable(doc, providers) {
	const text = `${answerFirstTable(providers)}\n\n${unknownTimeoutsLine(providers)}`;
	return between(doc, ANSWER_FIRST_START, ANSWER_FIRST_END, text, 'docs/answer-first.md');
}

/** docs/signatures.md with the table between the markers replaced. */
export function docWithTable(doc, providers) {
	return between(doc, START, END, signaturesTable(providers), 'docs/signatures.md');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
	const { PROVIDERS } = require(join(root, 'dist/nodes/shared/webhook/providers/index.js'));
	writeFileSync(DOC, docWithTable(readFileSync(DOC, 'utf8'), PROVIDERS));
	console.log(`wrote the provider table of docs/signatures.md (${PROVIDERS.length} providers)`);
	writeFileSync(
		ANSWER_FIRST_DOC,
		answerFirstDocWithTable(readFileSync(ANSWER_FIRST_DOC, 'utf8'), PROVIDERS),
	);
	console.log('wrote the senders table of docs/answer-first.md');
}
