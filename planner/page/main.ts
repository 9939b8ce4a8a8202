/**
 * The key planner page: reads the fields, asks keyPlan.ts, sqlPlan.ts and configureWorkflow.ts,
 * writes the results. No network API is used (and the page's Content-Security-Policy would refuse
 * one): hashing is crypto.subtle, the download a blob.
 */
import type { FingerprintSource } from '../../nodes/shared/reserveRules/reserveSettings';
import type { KeySource } from '../../nodes/shared/keys/keySourceTable';
import { DEFAULT_PROVIDER } from '../../nodes/shared/webhook/providers/defaultProvider';
import apiTemplate from '../../workflows/idempotent-api.json';
import template from '../../workflows/idempotent-webhook.json';
import {
	BUILT_IN_NOTES,
	BUILT_IN_SIGNATURES,
	BuiltInError,
	builtInWorkflow,
	ANSWER_FIRST_DEFAULTS,
	ANSWER_FIRST_NOTES,
} from '../builtIn/builtIn';
import { configureWorkflow, type TemplateKind } from '../setup/configureWorkflow';
import { element } from './dom';
import { startDuplicateExplainer } from './duplicateUi';
import { planKey, type KeyPlan } from '../key/keyPlan';
import {
	DEFAULT_SETTINGS,
	FINGERPRINT_EXPRESSION_DEFAULT,
	FINGERPRINT_SOURCES,
	fingerprintDefault,
	KEY_SOURCES,
	MODES,
	parameterOfSource,
	type Mode,
	type PlannerSettings,
} from '../settings';
import { startSignatureCheck } from './signatureUi';
import { planStatements, sqlText } from '../setup/sqlPlan';
import { startRetryExplainer } from './stepsUi';

const fields = {
	body: element<HTMLTextAreaElement>('body'),
	bodyFile: element<HTMLInputElement>('bodyFile'),
	bodyFileStatus: element<HTMLParagraphElement>('bodyFileStatus'),
	headers: element<HTMLTextAreaElement>('headers'),
	keySource: element<HTMLSelectElement>('keySource'),
	keySourceHelp: element<HTMLParagraphElement>('keySourceHelp'),
	eventIdField: element<HTMLDivElement>('eventIdField'),
	eventIdLabel: element<HTMLLabelElement>('eventIdLabel'),
	eventIdPath: element<HTMLInputElement>('eventIdPath'),
	namespace: element<HTMLInputElement>('namespace'),
	mode: element<HTMLSelectElement>('mode'),
	leaseField: element<HTMLDivElement>('leaseField'),
	leaseSeconds: element<HTMLInputElement>('leaseSeconds'),
	fingerprintSource: element<HTMLSelectElement>('fingerprintSource'),
	fingerprintSourceHelp: element<HTMLParagraphElement>('fingerprintSourceHelp'),
	fingerprintExpressionField: element<HTMLDivElement>('fingerprintExpressionField'),
	fingerprintExpression: element<HTMLInputElement>('fingerprintExpression'),
	schema: element<HTMLInputElement>('schema'),
	table: element<HTMLInputElement>('table'),
	retentionDays: element<HTMLInputElement>('retentionDays'),
	key: element<HTMLOutputElement>('key'),
	keyExplain: element<HTMLParagraphElement>('keyExplain'),
	fingerprint: element<HTMLOutputElement>('fingerprint'),
	fingerprintExplain: element<HTMLParagraphElement>('fingerprintExplain'),
	sql: element<HTMLPreElement>('sql'),
	keyResult: element<HTMLDivElement>('keyResult'),
	download: element<HTMLButtonElement>('downloadWorkflow'),
	downloadStatus: element<HTMLSpanElement>('downloadStatus'),
	downloadApi: element<HTMLButtonElement>('downloadApiWorkflow'),
	downloadApiStatus: element<HTMLSpanElement>('downloadApiStatus'),
	builtInProvider: element<HTMLSelectElement>('builtInProvider'),
	downloadBuiltIn: element<HTMLButtonElement>('downloadBuiltInWorkflow'),
	downloadBuiltInStatus: element<HTMLSpanElement>('downloadBuiltInStatus'),
	builtInRefusal: element<HTMLParagraphElement>('builtInRefusal'),
	builtInNotes: element<HTMLUListElement>('builtInNotes'),
	builtInAnswerFirst: element<HTMLInputElement>('builtInAnswerFirst'),
	builtInAnswerFirstNotes: element<HTMLUListElement>('builtInAnswerFirstNotes'),
};

// The node lists its options sorted by label (nodes/IdempotencyReserve/keyProperties.ts); so does the page.
for (const source of [...KEY_SOURCES].sort((a, b) => a.name.localeCompare(b.name))) {
	fields.keySource.add(
		new Option(source.name, source.value, false, source.value === DEFAULT_SETTINGS.keySource),
	);
}
for (const mode of MODES)
	fields.mode.add(new Option(mode.name, mode.value, false, mode.value === DEFAULT_SETTINGS.mode));
// The node's Fingerprint options, in its order, with its default for the mode.
for (const source of FINGERPRINT_SOURCES) {
	const selected = source.value === fingerprintDefault(DEFAULT_SETTINGS.mode);
	fields.fingerprintSource.add(new Option(source.name, source.value, selected, selected));
}
fields.fingerprintExpression.value = FINGERPRINT_EXPRESSION_DEFAULT;
// Every provider of the table; those the Crypto node cannot check say so when chosen (builtInSignature.ts).
for (const support of BUILT_IN_SIGNATURES) {
	const [value, label] = support.supported
		? [support.signature.provider, support.signature.label]
		: [support.provider, `${support.label} (not with built-in nodes)`];
	fields.builtInProvider.add(
		new Option(label, value, value === DEFAULT_PROVIDER, value === DEFAULT_PROVIDER),
	);
}
for (const [list, notes] of [
	[fields.builtInNotes, BUILT_IN_NOTES],
	[fields.builtInAnswerFirstNotes, ANSWER_FIRST_NOTES],
] as const) {
	for (const note of notes) {
		const item = document.createElement('li');
		item.textContent = note;
		list.append(item);
	}
}

/** The exact bytes of a loaded file; undefined when the key comes from the textarea's text. */
let fileBytes: Uint8Array | undefined;

function numberOf(input: HTMLInputElement, fallback: number): number {
	const value = input.valueAsNumber;
	return Number.isFinite(value) ? value : fallback;
}

function settings(): PlannerSettings {
	return {
		keySource: fields.keySource.value as KeySource,
		eventIdPath: fields.eventIdPath.value,
		namespace: fields.namespace.value,
		schema: fields.schema.value,
		table: fields.table.value,
		retentionDays: numberOf(fields.retentionDays, DEFAULT_SETTINGS.retentionDays),
		mode: fields.mode.value as Mode,
		leaseSeconds: numberOf(fields.leaseSeconds, DEFAULT_SETTINGS.leaseSeconds),
		fingerprint: fields.fingerprintSource.value as FingerprintSource,
		fingerprintExpression: fields.fingerprintExpression.value,
	};
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
	if (window.crypto?.subtle === undefined)
		throw new Error(
			'This browser offers no crypto.subtle here (open the page from a file or from https)',
		);
	const digest = await window.crypto.subtle.digest('SHA-256', bytes);
	return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

function showFields(current: PlannerSettings): void {
	const definition = KEY_SOURCES.find((source) => source.value === current.keySource);
	fields.keySourceHelp.textContent = definition?.description ?? '';
	const parameter = parameterOfSource(current.keySource);
	fields.eventIdField.hidden = parameter === undefined;
	if (parameter !== undefined) fields.eventIdLabel.textContent = parameter.label;
	fields.leaseField.hidden = current.mode !== 'lease';
	fields.fingerprintSourceHelp.textContent =
		FINGERPRINT_SOURCES.find((source) => source.value === current.fingerprint)?.description ?? '';
	fields.fingerprintExpressionField.hidden = current.fingerprint !== 'expression';
}

/** The fingerprint result: the hex Reserve records, none, or why the page cannot tell. */
function showFingerprint(plan: KeyPlan | undefined): string | null | undefined {
	if (plan === undefined || !plan.ok) {
		fields.fingerprint.textContent = '—';
		fields.fingerprintExplain.textContent =
			plan?.kind === 'itemError' || plan?.kind === 'refused'
				? 'No key is reserved for this delivery, so Reserve records no fingerprint.'
				: plan?.kind === 'beyond'
					? "Recorded with the key that n8n's expression engine derives; the page shows it once it can read the key."
					: '';
		return undefined;
	}
	const { fingerprint } = plan;
	fields.fingerprint.textContent = {
		value: fingerprint.kind === 'value' ? fingerprint.fingerprint : '',
		none: 'none',
		beyond: 'evaluated by n8n',
	}[fingerprint.kind];
	fields.fingerprintExplain.textContent = fingerprint.explain;
	if (fingerprint.kind === 'value') return fingerprint.fingerprint;
	return fingerprint.kind === 'none' ? null : undefined;
}

let run = 0;

/**
 * aria-busy on the live region (the key and its explanation; the SQL is not read out on every change):
 * assistive technology, and the tests, wait for the latest result.
 */
function busy(value: boolean): void {
	fields.keyResult.setAttribute('aria-busy', String(value));
}

async function update(): Promise<void> {
	const current = settings();
	showFields(current);
	const mine = ++run;
	busy(true);
	const bytes = fileBytes ?? new TextEncoder().encode(fields.body.value);
	let key: string | undefined;
	let fingerprint: string | null | undefined;
	try {
		const plan = await planKey({ bytes, headersText: fields.headers.value }, current, sha256Hex);
		if (mine !== run) return;
		fingerprint = showFingerprint(plan);
		fields.key.classList.toggle('problem', !plan.ok);
		fields.keyExplain.replaceChildren();
		if (plan.ok) {
			key = plan.key;
			fields.key.textContent = plan.key;
			fields.keyExplain.textContent = plan.explain;
		} else {
			const lead = {
				itemError: 'No key: the node raises an item error. ',
				refused: 'No key. ',
				beyond: 'The page cannot tell. ',
				failed: '',
			}[plan.kind];
			fields.key.textContent = {
				itemError: 'item error',
				refused: 'request refused by n8n',
				beyond: 'evaluated by n8n',
				failed: 'error',
			}[plan.kind];
			fields.keyExplain.append(lead + plan.message + (/[.!?)]$/.test(plan.message) ? '' : '.'));
			if (plan.kind === 'itemError') {
				const hint = document.createElement('span');
				hint.className = 'hint';
				hint.textContent = `Hint: ${plan.hint}`;
				fields.keyExplain.append(hint);
			}
			if (plan.explain !== '') fields.keyExplain.append(` ${plan.explain}`);
		}
	} catch (error) {
		if (mine !== run) return;
		fields.key.classList.add('problem');
		fields.key.textContent = 'error';
		fields.keyExplain.textContent = (error as Error).message;
		showFingerprint(undefined);
	}
	try {
		fields.sql.textContent = sqlText(planStatements(current, key, fingerprint));
		fields.download.disabled = false;
		fields.downloadApi.disabled = false;
		showBuiltInRefusal();
	} catch (error) {
		// Schema or table refused (nodes/shared/store/identifiers.ts): the node refuses them before any SQL runs.
		fields.sql.textContent = `-- The node refuses these settings before any SQL runs: ${(error as Error).message}`;
		fields.download.disabled = true;
		fields.downloadApi.disabled = true;
		fields.downloadBuiltIn.disabled = true;
		fields.builtInRefusal.textContent = '';
	}
	busy(false);
}

let timer: number | undefined;
/** A change while a result is being computed makes that result stale: it is dropped, and the next one shown. */
function invalidate(): void {
	run++;
	busy(true);
}

function scheduleUpdate(): void {
	invalidate();
	if (timer !== undefined) window.clearTimeout(timer);
	timer = window.setTimeout(() => void update(), 120);
}

fields.body.addEventListener('input', () => {
	// Typing in the body means the text is the body again, not the file.
	if (fileBytes !== undefined) {
		fileBytes = undefined;
		fields.bodyFile.value = '';
		fields.bodyFileStatus.textContent = 'No file loaded: the key is computed from the text above.';
	}
	scheduleUpdate();
});

fields.bodyFile.addEventListener('change', () => {
	const file = fields.bodyFile.files?.[0];
	if (file === undefined) return;
	invalidate();
	void file.arrayBuffer().then((buffer) => {
		fileBytes = new Uint8Array(buffer);
		fields.body.value = new TextDecoder('utf-8', { ignoreBOM: true }).decode(fileBytes);
		fields.bodyFileStatus.textContent = `Keying on the ${fileBytes.length} exact bytes of ${file.name} (the text above is only a preview; typing in it switches back to the text).`;
		void update();
	});
});

for (const input of [
	fields.headers,
	fields.eventIdPath,
	fields.namespace,
	fields.schema,
	fields.table,
	fields.retentionDays,
	fields.leaseSeconds,
	fields.fingerprintExpression,
]) {
	input.addEventListener('input', scheduleUpdate);
}
for (const select of [fields.keySource, fields.fingerprintSource])
	select.addEventListener('change', () => void update());
fields.mode.addEventListener('change', () => {
	// A new mode starts from the node's Fingerprint default for it, as a fresh node does.
	fields.fingerprintSource.value = fingerprintDefault(fields.mode.value as Mode);
	void update();
});

/** Saves a template with the page's settings as a file (a blob: nothing leaves the page). */
function downloadTemplate(
	source: unknown,
	kind: TemplateKind,
	fileName: string,
	status: HTMLElement,
): void {
	saveJson(configureWorkflow(source, settings(), kind), fileName);
	status.textContent = `Saved as ${fileName}.`;
}

/** Saves JSON as a file through a blob link: nothing leaves the page. */
function saveJson(value: unknown, fileName: string): void {
	const blob = new Blob([`${JSON.stringify(value, null, '\t')}\n`], {
		type: 'application/json',
	});
	const link = document.createElement('a');
	link.href = URL.createObjectURL(blob);
	link.download = fileName;
	document.body.append(link);
	link.click();
	link.remove();
	window.setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}

fields.download.addEventListener('click', () =>
	downloadTemplate(template, 'webhook', 'idempotent-webhook.json', fields.downloadStatus),
);
/** The built-in workflow for the page's settings, or why these settings cannot have one. */
function builtInFor(current: PlannerSettings): ReturnType<typeof builtInWorkflow> | BuiltInError {
	try {
		return builtInWorkflow(current, {
			provider: fields.builtInProvider.value,
			...(fields.builtInAnswerFirst.checked ? { answerFirst: ANSWER_FIRST_DEFAULTS } : {}),
		});
	} catch (error) {
		// Anything else is a bug in the page: shown the same way, so the button cannot save a broken file.
		return error instanceof BuiltInError
			? error
			: new BuiltInError((error as Error).message, 'This is a bug: please report it.');
	}
}

function showBuiltInRefusal(): void {
	const result = builtInFor(settings());
	const refused = result instanceof BuiltInError;
	fields.downloadBuiltIn.disabled = refused;
	fields.builtInRefusal.textContent = refused ? `${result.message} ${result.hint}` : '';
}

for (const field of [fields.builtInProvider, fields.builtInAnswerFirst])
	field.addEventListener('change', () => {
		fields.downloadBuiltInStatus.textContent = '';
		showBuiltInRefusal();
	});
fields.keySource.addEventListener('change', () => {
	// The signature and the key come from one sender: a provider's preset chooses its signature too.
	const provider = [...fields.builtInProvider.options].find(
		(option) => option.value === fields.keySource.value,
	);
	if (provider !== undefined) fields.builtInProvider.value = provider.value;
	showBuiltInRefusal();
});

fields.downloadBuiltIn.addEventListener('click', () => {
	const result = builtInFor(settings());
	if (result instanceof BuiltInError) return showBuiltInRefusal();
	const fileName = `idempotent-webhook-${fields.builtInAnswerFirst.checked ? 'answer-first' : 'builtin'}-${fields.builtInProvider.value}.json`;
	saveJson(result, fileName);
	fields.downloadBuiltInStatus.textContent = `Saved as ${fileName}.`;
});

fields.downloadApi.addEventListener('click', () =>
	downloadTemplate(apiTemplate, 'api', 'idempotent-api.json', fields.downloadApiStatus),
);

void update();
startSignatureCheck();
startDuplicateExplainer();
startRetryExplainer();
