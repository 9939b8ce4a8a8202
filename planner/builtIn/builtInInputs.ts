/**
 * The one place where the built-in workflow's inputs are checked (planner/builtIn/builtIn.ts): every setting
 * and option that is written into the workflow, by name, so a refusal names the input (and its CLI
 * flag). The rule they all share: no "{{" or "}}". n8n cuts an expression at the first "}}" and
 * starts one at "{{" wherever they stand, even inside a quoted string of the expression
 * (@n8n/tournament's splitExpression), so a namespace `ord}}ers` would end the Key node's expression
 * early and every delivery would fail with 500. Text that passes is written into the expressions
 * only as JSON string literals (valid JavaScript for any text), so it reads back unchanged.
 */
import { assertStorableKey } from '../../nodes/shared/keys/composeKey';
import { keySourceDefinition } from '../../nodes/shared/keys/keySourceTable';
import { assertNamespace } from '../../nodes/shared/keys/namespace';
import { BODY_HASH_PREFIX, EVENT_ID_PREFIX } from '../../nodes/shared/keys/prefixes';
import { tableRef } from '../../nodes/shared/store/identifiers';
import { BuiltInError } from './builtInError';
import type { PlannerSettings } from '../settings';
import type { AnswerFirstOptions } from './builtInAnswerFirst';

/** On: for senders that do not sign their event id (GitHub, Shopify), the key is the body's SHA-256. */
export type ReplayGuard = 'on' | 'off';
export const REPLAY_GUARDS: readonly ReplayGuard[] = ['on', 'off'];

export interface BuiltInOptions {
	/** A provider of nodes/shared/webhook/providers/ whose signature the Crypto node checks. */
	provider: string;
	webhookPath?: string;
	/**
	 * n8n's major version. 2 (default, and n8n Cloud): Crypto v2, the HMAC secret in a Crypto
	 * credential. 1: n8n 1.x has only Crypto v1, whose HMAC secret is a node parameter: it reads the
	 * environment variable SECRET_ENV, so the secret is not written into the workflow.
	 */
	n8nLine?: 1 | 2;
	/**
	 * 'on' (default): a sender whose event id is an unsigned header (GitHub's X-GitHub-Delivery,
	 * Shopify's X-Shopify-Event-Id) is keyed on the SHA-256 of the signed body, so a captured delivery
	 * resent under a fresh id is a duplicate. 'off' keys on the header, for senders that legitimately
	 * send identical bodies as different events.
	 */
	replayGuard?: ReplayGuard;
	/**
	 * Answer first (lease mode): the verified delivery stored with its key, 200 `accepted` before the
	 * business step, and a Schedule Trigger that runs what a crash or a failure left
	 * (builtInAnswerFirst.ts). Undefined: answered when the business step has finished.
	 */
	answerFirst?: AnswerFirstOptions;
}

/**
 * The Webhook node's path when none is given: one per provider, so two providers' workflows
 * (workflows/cloud/<provider>.json) can be published side by side on one n8n. n8n refuses to
 * publish a second workflow on a path already taken.
 */
export function defaultWebhookPath(provider: string, answerFirst = false): string {
	return answerFirst
		? `idempotent-webhook-answer-first-${provider}`
		: `idempotent-webhook-builtin-${provider}`;
}

/** The Event ID or Custom Key field: one `{{ … }}` expression (its JavaScript), or fixed text used as it is. */
export type IdField = { kind: 'expression'; code: string } | { kind: 'fixed'; text: string };

/** The inputs, checked: what builtIn.ts builds the workflow from besides the settings. */
export interface CheckedInputs {
	line: 1 | 2;
	replayGuard: ReplayGuard;
	webhookPath: string;
	/** Undefined when the key source reads no Event ID or Custom Key field. */
	idField: IdField | undefined;
}

/** An input as a refusal names it: its name on the page and its flag on the command line. */
interface Input {
	name: string;
	flag: string;
	value: unknown;
}

const shown = (value: unknown) => JSON.stringify(value) ?? String(value);

function refuse(input: Input, why: string, hint: string): never {
	throw new BuiltInError(
		`The ${input.name} ${shown(input.value)} ${why}`,
		`${hint} (${input.flag} on the command line)`,
	);
}

/** The key source's field, when it reads one: 'Event ID' or 'Custom Key'. */
function idFieldName(keySource: string): string | undefined {
	const kind = keySourceDefinition(keySource)?.location.kind;
	if (kind === 'eventIdParameter') return 'Event ID';
	if (kind === 'customKey') return 'Custom Key';
	return undefined;
}

/** Every input written into the workflow for these settings (an unused one is not checked). */
function inputsOf(settings: PlannerSettings, options: BuiltInOptions): Input[] {
	const idName = idFieldName(settings.keySource);
	return [
		{ name: 'provider', flag: '--provider', value: options.provider },
		{ name: 'key source', flag: '--key-source', value: settings.keySource },
		...(idName ? [{ name: idName, flag: '--event-id', value: settings.eventIdPath }] : []),
		{ name: 'namespace', flag: '--namespace', value: settings.namespace },
		{ name: 'schema', flag: '--schema', value: settings.schema },
		{ name: 'table', flag: '--table', value: settings.table },
		{ name: 'mode', flag: '--mode', value: settings.mode },
		...(settings.mode === 'lease'
			? [{ name: 'lease', flag: '--lease', value: settings.leaseSeconds }]
			: []),
		// The default path is made from a provider value, checked once the provider is known (builtIn.ts).
		...(options.webhookPath === undefined
			? []
			: [{ name: 'webhook path', flag: '--path', value: options.webhookPath }]),
		{ name: 'n8n version', flag: '--n8n', value: options.n8nLine ?? 2 },
		{ name: 'replay guard', flag: '--replay-guard', value: options.replayGuard ?? 'on' },
		...(options.answerFirst === undefined
			? []
			: [
					{
						name: 'check interval',
						flag: '--check-every',
						value: options.answerFirst.checkEverySeconds,
					},
					{ name: 'max attempts', flag: '--max-attempts', value: options.answerFirst.maxAttempts },
					{ name: 'backoff', flag: '--backoff', value: options.answerFirst.backoffSeconds },
				]),
	];
}

/** The Event ID / Custom Key field read as the package's node reads it, or undefined when it is neither form. */
function readIdField(stored: string): IdField | undefined {
	const single = /^=?\s*\{\{([\s\S]*)\}\}\s*$/.exec(stored);
	if (single && !single[1].includes('{{') && !single[1].includes('}}') && single[1].trim() !== '')
		return { kind: 'expression', code: single[1].trim() };
	if (stored.startsWith('=') || stored.includes('{{') || stored.includes('}}')) return undefined;
	return { kind: 'fixed', text: stored };
}

/** The first of "{{" and "}}" in this text, if any. */
function expressionMark(text: string): string | undefined {
	return ['{{', '}}'].find((mark) => text.includes(mark));
}

/** No input may carry "{{" or "}}" (the id field may be one `{{ … }}` expression). */
function assertNoExpressionMarks(inputs: Input[]): void {
	for (const input of inputs) {
		if (typeof input.value !== 'string' && typeof input.value !== 'number')
			refuse(input, 'is not text', `Give the ${input.name} as text`);
		if (input.flag === '--event-id') {
			if (readIdField(String(input.value)) === undefined)
				refuse(
					input,
					'mixes text and expressions, or has a stray "{{", "}}" or leading "=": the built-in workflow takes one {{ … }} expression, or fixed text without "{{" and "}}"',
					`Write it as one expression, for example {{ 'order-' + $json.body.id }}`,
				);
			continue;
		}
		const mark = expressionMark(String(input.value));
		if (mark !== undefined)
			refuse(
				input,
				`contains "${mark}", which n8n reads as the ${mark === '{{' ? 'start' : 'end'} of an expression: the workflow's expressions would break and every delivery would fail with 500`,
				`Remove "{{" and "}}" from the ${input.name}`,
			);
	}
}

/** The message of a check's error, or undefined when it passes. */
function problemOf(check: () => void): string | undefined {
	try {
		check();
		return undefined;
	} catch (error) {
		return (error as Error).message;
	}
}

/** Letters, digits, "-", ".", "_", "~" and "/": a path any client sends as it is, which n8n never reads as an expression ("=") or a parameter (":"). */
const WEBHOOK_PATH = /^[A-Za-z0-9][A-Za-z0-9\-._~/]*$/;

/**
 * Checks every input; throws BuiltInError naming the first bad one. Run before anything else of the
 * workflow is built, so nothing of a refused input reaches a node.
 */
export function checkBuiltInInputs(
	settings: PlannerSettings,
	options: BuiltInOptions,
): CheckedInputs {
	const inputs = inputsOf(settings, options);
	assertNoExpressionMarks(inputs);
	const input = (flag: string) => inputs.find((candidate) => candidate.flag === flag) as Input;

	if (settings.mode !== 'lease' && settings.mode !== 'simple')
		refuse(input('--mode'), 'is neither lease nor simple', 'Use lease or simple');
	if (
		settings.mode === 'lease' &&
		!(
			typeof settings.leaseSeconds === 'number' &&
			Number.isFinite(settings.leaseSeconds) &&
			settings.leaseSeconds > 0
		)
	)
		refuse(
			input('--lease'),
			'is not a positive number of seconds',
			'Give the longest time the business step may take, for example 300',
		);
	const line = options.n8nLine ?? 2;
	if (line !== 1 && line !== 2)
		refuse(
			input('--n8n'),
			'is not an n8n version this path writes',
			'Use 2 (n8n 2.x and n8n Cloud) or 1',
		);
	const replayGuard = options.replayGuard ?? 'on';
	if (!REPLAY_GUARDS.includes(replayGuard))
		refuse(input('--replay-guard'), 'is neither on nor off', 'Use on (the default) or off');

	if (options.answerFirst !== undefined) checkAnswerFirst(settings, options.answerFirst, input);

	const webhookPath =
		options.webhookPath ?? defaultWebhookPath(options.provider, options.answerFirst !== undefined);
	if (options.webhookPath !== undefined && !WEBHOOK_PATH.test(webhookPath))
		refuse(
			input('--path'),
			'is not a plain webhook path',
			'Use letters, digits, "-", ".", "_", "~" and "/", starting with a letter or digit, for example stripe-hook',
		);

	const namespace = input('--namespace');
	const namespaceProblem = problemOf(() => {
		assertNamespace(settings.namespace);
		// Every key starts with the namespace: one that cannot be stored would refuse every delivery.
		if (settings.namespace !== '')
			assertStorableKey(`${settings.namespace}:${BODY_HASH_PREFIX}${'0'.repeat(64)}`);
	});
	if (namespaceProblem !== undefined)
		refuse(
			namespace,
			`cannot be a namespace: ${namespaceProblem}`,
			'Give the namespace as plain text, for example orders',
		);

	const tableProblem = problemOf(() => tableRef(settings.schema, settings.table));
	if (tableProblem !== undefined)
		refuse(
			input(/^The schema/.test(tableProblem) ? '--schema' : '--table'),
			`cannot be used: ${tableProblem}`,
			'Use a plain schema and table name, such as public and processed_events',
		);

	const idInput = inputs.find((candidate) => candidate.flag === '--event-id');
	const idField = idInput ? readIdField(settings.eventIdPath) : undefined;
	if (idInput && idField?.kind === 'fixed') assertFixedId(idInput, idField.text, settings);
	return { line, replayGuard, webhookPath, idField };
}

/** Answer first needs lease mode (the claim is fenced by the lease) and whole numbers the nodes take. */
function checkAnswerFirst(
	settings: PlannerSettings,
	answerFirst: AnswerFirstOptions,
	input: (flag: string) => Input,
): void {
	if (settings.mode !== 'lease')
		refuse(
			input('--mode'),
			'cannot answer first: the redrive takes a key over by its lease, which simple mode has not',
			'Use lease mode with answer first',
		);
	const whole = (value: number, min: number, max: number) =>
		Number.isInteger(value) && value >= min && value <= max;
	const every = answerFirst.checkEverySeconds;
	if (!(whole(every, 1, 59) || (whole(every, 60, 3600) && every % 60 === 0)))
		refuse(
			input('--check-every'),
			"is not a check interval n8n's Schedule Trigger takes",
			'Give whole seconds from 1 to 59, or whole minutes in seconds (60, 120, … 3600)',
		);
	if (!whole(answerFirst.maxAttempts, 1, 100))
		refuse(input('--max-attempts'), 'is not a whole number from 1 to 100', 'For example 5');
	if (!whole(answerFirst.backoffSeconds, 0, 3600))
		refuse(input('--backoff'), 'is not whole seconds from 0 to 3600', 'For example 30');
}

/** A fixed Event ID or Custom Key is every delivery's key: refuse one no delivery could be stored under. */
function assertFixedId(input: Input, text: string, settings: PlannerSettings): void {
	const custom = input.name === 'Custom Key';
	if (text === '' && !custom) return; // no id: every delivery is keyed on its body
	if (text === '')
		refuse(input, 'is empty', 'Give the Custom Key expression, for example {{ $json.body.id }}');
	const core = custom ? text : `${EVENT_ID_PREFIX}${text}`;
	const problem = problemOf(() =>
		assertStorableKey(settings.namespace === '' ? core : `${settings.namespace}:${core}`),
	);
	if (problem !== undefined)
		refuse(input, `cannot be part of a key: ${problem}`, 'Use a short text id');
}
