// `npm run cloud-workflows` (after npm run build): writes workflows/cloud/<provider>.json, the
// built-in-nodes workflow with the default settings for every provider the built-in path can
// express, made by the planner's own code (dist/planner/builtIn.cjs) so n8n Cloud users can import
// one from its raw URL without a clone, workflows/cloud/answer-first/<provider>.json (the same with
// --answer-first), and docs/cloud.md's provider tables (each file's URL, or why a provider has none). test/unit/cloudWorkflows.test.js fails if either drifts.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtInFromArgs, expressibleProviders } from './planner/builtInCli.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bundle = join(root, 'dist', 'planner', 'builtIn.cjs');

/**
 * Each prebuilt workflow's file name and JSON text, as the CLI writes it.
 * @param {string} bundlePath dist/planner/builtIn.cjs
 * @param {(path: string) => any} load
 * @returns {{ file: string, json: string }[]}
 */
export function cloudWorkflows(bundlePath, load) {
	return expressibleProviders(load(bundlePath)).map((provider) => {
		const result = builtInFromArgs(['--built-in', '--provider', provider], bundlePath);
		if (result.ok === false) throw new Error(`${provider}: ${result.message}`);
		return { file: `${provider}.json`, json: result.json };
	});
}

/**
 * Each prebuilt answer-first workflow (workflows/cloud/answer-first/<provider>.json), as the CLI writes
 * it with --answer-first and the default settings.
 * @param {string} bundlePath dist/planner/builtIn.cjs
 * @param {(path: string) => any} load
 * @returns {{ file: string, json: string }[]}
 */
export function answerFirstCloudWorkflows(bundlePath, load) {
	return load(bundlePath)
		.answerFirstProviders()
		.map((/** @type {string} */ provider) => {
			const result = builtInFromArgs(
				['--built-in', '--answer-first', '--provider', provider],
				bundlePath,
			);
			if (result.ok === false) throw new Error(`${provider}: ${result.message}`);
			return { file: `${provider}.json`, json: result.json };
		});
}

export const DOC = join(root, 'docs', 'cloud.md');
export const START = '<!-- cloud-providers:start (npm run cloud-workflows writes this table) -->';
export const END = '<!-- cloud-providers:end -->';
/** Where n8n Cloud's Import → From URL finds the files: the repository's main branch, raw. */
export const RAW_BASE =
	'https://raw.githubusercontent.com/n8n-nodes-idempotency/n8n-nodes-idempotency/main/workflows/cloud/';

const cell = (/** @type {string} */ text) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/**
 * The markdown table of every provider of the table: whether its workflow answers the sender's
 * endpoint handshake, and its workflow's URL, or why built-in nodes cannot check it (the first
 * sentence of the generator's own refusal).
 * @param {any} builtIn dist/planner/builtIn.cjs: BUILT_IN_SIGNATURES (what the generator does for
 *   each provider) and builtInHandshake
 * @param {readonly any[]} providers the provider table
 */
export function providersTable(builtIn, providers) {
	const rows = [
		'| provider | built-in nodes | endpoint handshake | import from URL, or why not | seeing "duplicate" |',
		'| --- | --- | --- | --- | --- |',
	];
	const firstSentence = (/** @type {string} */ text) => /^.*?\.(?=\s|$)/.exec(text)?.[0] ?? text;
	for (const support of builtIn.BUILT_IN_SIGNATURES) {
		if (support.supported) {
			const { label, provider } = support.signature;
			const handshake = builtIn.builtInHandshake(providers.find((p) => p.value === provider));
			const answers =
				handshake === undefined
					? '—'
					: handshake.answered
						? `answered (${handshake.name})`
						: `not answered: ${cell(firstSentence(handshake.reason))}`;
			const entry = providers.find((p) => p.value === provider);
			rows.push(
				`| ${label} (\`${provider}\`) | yes | ${answers} | \`${RAW_BASE}${provider}.json\` | ${cell(builtIn.seeDuplicate(entry))} |`,
			);
		} else {
			// Its first sentence: the rest (what to use instead) is said once below the table.
			rows.push(`| ${support.label} | **no** | — | ${cell(firstSentence(support.cause))} | — |`);
		}
	}
	return rows.join('\n');
}

export const ANSWER_FIRST_START =
	'<!-- cloud-answer-first:start (npm run cloud-workflows writes this table) -->';
export const ANSWER_FIRST_END = '<!-- cloud-answer-first:end -->';
export const ANSWER_FIRST_NOTES_START =
	'<!-- cloud-answer-first-notes:start (npm run cloud-workflows writes this list) -->';
export const ANSWER_FIRST_NOTES_END = '<!-- cloud-answer-first-notes:end -->';

/**
 * The answer-first workflows: each provider's wait for the answer (the provider table's), shortest
 * first (the senders that need it most on top), and its file's URL.
 * @param {any} builtIn dist/planner/builtIn.cjs
 * @param {readonly any[]} providers the provider table
 */
export function answerFirstTable(builtIn, providers) {
	const waits = (/** @type {any} */ p) => ('seconds' in p.timeout ? p.timeout.seconds : Infinity);
	const rows = builtIn
		.answerFirstProviders()
		.map((/** @type {string} */ value) => providers.find((p) => p.value === value))
		.sort((/** @type {any} */ a, /** @type {any} */ b) => waits(a) - waits(b))
		.map(
			(/** @type {any} */ p) =>
				`| ${p.label} (\`${p.value}\`) | ${waits(p) === Infinity ? 'not known' : `${waits(p)} s`} | \`${RAW_BASE}answer-first/${p.value}.json\` |`,
		);
	return [
		'| provider | waits for the answer | import from URL |',
		'| --- | --- | --- |',
		...rows,
	].join('\n');
}

export const NOTES_START = '<!-- cloud-notes:start (npm run cloud-workflows writes this list) -->';
export const NOTES_END = '<!-- cloud-notes:end -->';

/** The text between two markers of the doc replaced. */
function between(
	/** @type {string} */ doc,
	/** @type {string} */ from,
	/** @type {string} */ to,
	/** @type {string} */ text,
) {
	const start = doc.indexOf(from);
	const end = doc.indexOf(to);
	if (start < 0 || end < start) throw new Error(`docs/cloud.md lacks ${from} … ${to}`);
	return `${doc.slice(0, start + from.length)}\n${text}\n${doc.slice(end)}`;
}

/**
 * docs/cloud.md with the provider table and the workflow's notes (BUILT_IN_NOTES, which name senders
 * from the provider table) between their markers replaced.
 */
export function docWithProvidersTable(
	/** @type {string} */ doc,
	/** @type {any} */ builtIn,
	/** @type {readonly any[]} */ providers,
) {
	const list = (/** @type {readonly string[]} */ notes) =>
		notes.map((note) => `- ${note}`).join('\n');
	let text = between(doc, START, END, providersTable(builtIn, providers));
	text = between(text, NOTES_START, NOTES_END, list(builtIn.BUILT_IN_NOTES));
	text = between(text, ANSWER_FIRST_START, ANSWER_FIRST_END, answerFirstTable(builtIn, providers));
	return between(
		text,
		ANSWER_FIRST_NOTES_START,
		ANSWER_FIRST_NOTES_END,
		list(builtIn.ANSWER_FIRST_NOTES),
	);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
	const { createRequire } = await import('node:module');
	const load = createRequire(import.meta.url);
	const outDir = join(root, 'workflows', 'cloud');
	mkdirSync(outDir, { recursive: true });
	for (const { file, json } of cloudWorkflows(bundle, load)) {
		writeFileSync(join(outDir, file), json);
		console.log(`wrote workflows/cloud/${file}`);
	}
	const answerFirstDir = join(outDir, 'answer-first');
	mkdirSync(answerFirstDir, { recursive: true });
	for (const { file, json } of answerFirstCloudWorkflows(bundle, load)) {
		writeFileSync(join(answerFirstDir, file), json);
		console.log(`wrote workflows/cloud/answer-first/${file}`);
	}
	const { PROVIDERS } = load(join(root, 'dist', 'nodes', 'shared', 'webhook', 'providers'));
	writeFileSync(DOC, docWithProvidersTable(readFileSync(DOC, 'utf8'), load(bundle), PROVIDERS));
	console.log('wrote the provider table of docs/cloud.md');
}
