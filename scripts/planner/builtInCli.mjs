// `npm run planner -- --built-in --provider stripe [--key-source S] [--event-id EXPR] [--namespace N]
// [--schema S] [--table T] [--lease SECONDS] [--mode lease|simple] [--path P] [--n8n 2|1]
// [--replay-guard on|off]`: the planner page's
// "Download (built-in nodes only)" workflow, written to standard output. The workflow is built by
// the page's own code (planner/builtIn/builtIn.ts, bundled to dist/planner/builtIn.cjs by npm run build).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

/** Flags and the setting each one sets; --built-in itself is read by scripts/planner.mjs. */
const FLAGS = {
	'--provider': 'provider',
	'--key-source': 'keySource',
	'--event-id': 'eventIdPath',
	'--namespace': 'namespace',
	'--schema': 'schema',
	'--table': 'table',
	'--lease': 'leaseSeconds',
	'--mode': 'mode',
	'--path': 'webhookPath',
	'--n8n': 'n8nLine',
	'--replay-guard': 'replayGuard',
	'--check-every': 'checkEverySeconds',
	'--max-attempts': 'maxAttempts',
	'--backoff': 'backoffSeconds',
};

/** Flags without a value. --answer-first: the answer-first workflow (planner/builtIn/builtInAnswerFirst.ts). */
const SWITCHES = ['--built-in', '--answer-first'];
/** The flags only the answer-first workflow reads. */
const ANSWER_FIRST_FLAGS = ['checkEverySeconds', 'maxAttempts', 'backoffSeconds'];

/**
 * The usage line, its providers read from the bundle (the provider table's, in its order), so a
 * provider added to the table is offered here too.
 * @param {{ BUILT_IN_SIGNATURES: readonly { supported: boolean, signature?: { provider: string } }[] }} builtIn
 */
export function usage(builtIn) {
	return `Usage: npm run planner -- --built-in --provider <${expressibleProviders(builtIn).join('|')}> [--key-source <source>] [--event-id <expression>] [--namespace <text>] [--schema <name>] [--table <name>] [--lease <seconds>] [--mode <lease|simple>] [--path <webhook path>] [--n8n <2|1>] [--replay-guard <on|off>] [--answer-first [--check-every <seconds>] [--max-attempts <n>] [--backoff <seconds>]]`;
}

class UsageError extends Error {}

/**
 * The providers whose signature the built-in path can check (the others are refused with the reason).
 * @param {{ BUILT_IN_SIGNATURES: readonly { supported: boolean, signature?: { provider: string } }[] }} builtIn
 * @returns {string[]}
 */
export function expressibleProviders(builtIn) {
	return builtIn.BUILT_IN_SIGNATURES.flatMap((s) =>
		s.supported && s.signature ? [s.signature.provider] : [],
	);
}

/** `--name value` and `--name=value` pairs, each flag at most once. */
function parseFlags(args) {
	/** @type {Record<string, string>} */
	const values = {};
	for (let at = 0; at < args.length; at++) {
		const arg = args[at];
		if (SWITCHES.includes(arg)) continue;
		const [flag, inline] = arg.includes('=')
			? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
			: [arg, undefined];
		const setting = FLAGS[/** @type {keyof typeof FLAGS} */ (flag)];
		if (setting === undefined) throw new UsageError(`Unknown option ${flag} for --built-in`);
		if (setting in values) throw new UsageError(`${flag} is given twice`);
		const value = inline ?? args[++at];
		if (value === undefined || (inline === undefined && value.startsWith('--')))
			throw new UsageError(`${flag} needs a value`);
		values[setting] = value;
	}
	return values;
}

/**
 * The workflow JSON for these arguments, or the message to print and the exit code.
 * @param {string[]} args
 * @param {string} bundle dist/planner/builtIn.cjs
 * @returns {{ ok: true, json: string } | { ok: false, message: string }}
 */
export function builtInFromArgs(args, bundle) {
	if (!existsSync(bundle))
		return {
			ok: false,
			message: `The planner is not built yet (${bundle} is missing): run npm run build first.`,
		};
	const builtIn = createRequire(import.meta.url)(bundle);
	try {
		const values = parseFlags(args);
		if (values.provider === undefined) throw new UsageError('--provider is required');
		// Checked first: an unknown provider would otherwise be reported as an unknown key source.
		const providers = builtIn.BUILT_IN_SIGNATURES.map(
			(
				/** @type {{ supported: boolean, provider?: string, signature?: { provider: string } }} */ s,
			) => (s.supported ? s.signature?.provider : s.provider),
		);
		if (!providers.includes(values.provider))
			throw new UsageError(
				`Unknown --provider ${values.provider}: use one of ${expressibleProviders(builtIn).join(', ')}`,
			);
		const defaults = builtIn.DEFAULT_SETTINGS;
		// The signature and the key come from one sender: the provider's own key source unless one is given.
		const keySource = values.keySource ?? values.provider;
		if (!builtIn.KEY_SOURCES.some((/** @type {{ value: string }} */ s) => s.value === keySource))
			throw new UsageError(
				`Unknown --key-source ${keySource}: use one of ${builtIn.KEY_SOURCES.map((/** @type {{ value: string }} */ s) => s.value).join(', ')}`,
			);
		if (
			values.eventIdPath !== undefined &&
			keySource !== 'eventIdOrBodyHash' &&
			keySource !== 'custom'
		)
			throw new UsageError('--event-id is read only with --key-source eventIdOrBodyHash or custom');
		const leaseSeconds =
			values.leaseSeconds === undefined ? defaults.leaseSeconds : Number(values.leaseSeconds);
		if (values.leaseSeconds !== undefined && !(Number.isFinite(leaseSeconds) && leaseSeconds > 0))
			throw new UsageError(
				`--lease needs a positive number of seconds, not ${values.leaseSeconds}`,
			);
		const settings = {
			...defaults,
			keySource,
			eventIdPath: values.eventIdPath ?? (keySource === 'custom' ? '' : defaults.eventIdPath),
			namespace: values.namespace ?? defaults.namespace,
			schema: values.schema ?? defaults.schema,
			table: values.table ?? defaults.table,
			mode: values.mode ?? defaults.mode,
			leaseSeconds,
			fingerprint: 'none',
		};
		if (values.n8nLine !== undefined && values.n8nLine !== '1' && values.n8nLine !== '2')
			throw new UsageError(`--n8n is 2 (n8n 2.x, n8n Cloud) or 1 (n8n 1.x), not ${values.n8nLine}`);
		if (keySource === 'custom' && settings.eventIdPath === '')
			throw new UsageError('--key-source custom needs --event-id with the Custom Key expression');
		const answerFirst = args.includes('--answer-first');
		const extra = ANSWER_FIRST_FLAGS.find((name) => values[name] !== undefined);
		if (!answerFirst && extra !== undefined)
			throw new UsageError(
				`--${Object.entries(FLAGS)
					.find(([, name]) => name === extra)?.[0]
					.slice(2)} is read only with --answer-first`,
			);
		/** @param {string} name */
		const number = (name) =>
			values[name] === undefined ? builtIn.ANSWER_FIRST_DEFAULTS[name] : Number(values[name]);
		const workflow = builtIn.builtInWorkflow(settings, {
			provider: values.provider,
			...(values.webhookPath ? { webhookPath: values.webhookPath } : {}),
			...(values.n8nLine ? { n8nLine: Number(values.n8nLine) } : {}),
			...(values.replayGuard !== undefined ? { replayGuard: values.replayGuard } : {}),
			...(answerFirst
				? {
						answerFirst: {
							checkEverySeconds: number('checkEverySeconds'),
							maxAttempts: number('maxAttempts'),
							backoffSeconds: number('backoffSeconds'),
						},
					}
				: {}),
		});
		return { ok: true, json: `${JSON.stringify(workflow, null, 2)}\n` };
	} catch (error) {
		if (error instanceof UsageError)
			return { ok: false, message: `${error.message}\n${usage(builtIn)}` };
		if (error instanceof builtIn.BuiltInError)
			return {
				ok: false,
				message: `${error.message}\n${/** @type {{ hint: string }} */ (error).hint}`,
			};
		throw error;
	}
}
