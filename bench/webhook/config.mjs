// The command line: flags, --help, and the run's config (validated; variant names are checked
// against VARIANTS by the entry point).
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The variants of --history (bench/webhook/history.mjs), in the order they run within a round. */
export const HISTORY_VARIANTS = [
	'floor',
	'rdHistory0',
	'rdHistory1k',
	'rdHistory10k',
	'pkgHistory0',
	'pkgHistory1k',
	'pkgHistory1m',
];

export const USAGE =
	'node bench/webhook-level.mjs [--rounds 6] [--requests 120] [--concurrency 1,16] [--shapes distinct,repeated,duplicate]\n' +
	'                             [--variants floor,floorLight,floorLiteral,floorNoOp,bare,handBuilt,packageSimple,package,exactlyOnce,packageNoVerify,packageNoFingerprint,packageNoErrorOutput,floorApi,api,packageBefore,removeDuplicates,answerFirst,answerFirstNoKeeper,answerFirstLean,floorAnswerFirst,answerLast] [--warmup 60] [--env NAME=VALUE] [--profile] [--threads]\n' +
	'                             [--answer-first-costs [--idle-seconds 60] [--renewals 500]]   (bench/webhook/answerFirstCosts.mjs)\n' +
	'       node bench/webhook-level.mjs --history [--rounds 5] [--concurrency 1]   (bench/webhook/history.mjs)\n';

export function parseArgs(argv) {
	const options = { env: [] };
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
		const [name, inlineValue] = arg.slice(2).split(/=(.*)/s, 2);
		let value = inlineValue;
		if (['profile', 'threads', 'help', 'history', 'answer-first-costs'].includes(name)) {
			options[name] = true;
			continue;
		}
		if (value === undefined) {
			value = argv[++i];
			if (value === undefined) throw new Error(`--${name} needs a value`);
		}
		if (name === 'env') options.env.push(value);
		else options[name] = value;
	}
	return options;
}

// duplicate: not run unless asked (--shapes duplicate); the default runs what senders mostly send.
const ALL_SHAPES = ['distinct', 'repeated', 'duplicate'];
const DEFAULT_SHAPES = ['distinct', 'repeated'];
export const list = (value) =>
	String(value)
		.split(',')
		.map((s) => s.trim())
		.filter(Boolean);
const positiveInt = (name, value) => {
	const n = Number(value);
	if (!Number.isInteger(n) || n < 1 || n > 100_000)
		throw new Error(`--${name} must be an integer from 1 to 100000, not ${value}`);
	return n;
};

/** The run's settings from the parsed flags, with the defaults. */
export function configFrom(args) {
	const config = {
		rounds: positiveInt('rounds', args.rounds ?? 6),
		requests: positiveInt('requests', args.requests ?? 120),
		// --history: its own variants, distinct events (a history only grows with new ones), concurrency 1.
		concurrency: list(args.concurrency ?? (args.history ? '1' : '1,16')).map((c) =>
			positiveInt('concurrency', c),
		),
		shapes: list(args.shapes ?? (args.history ? 'distinct' : DEFAULT_SHAPES.join(','))),
		variants: list(
			args.variants ??
				(args.history
					? HISTORY_VARIANTS.join(',')
					: 'floor,floorNoOp,bare,handBuilt,packageSimple,package,exactlyOnce,packageNoVerify'),
		),
		history: Boolean(args.history),
		warmup: Number(args.warmup ?? 60),
		profile: Boolean(args.profile),
		threads: Boolean(args.threads),
		// bench/webhook/answerFirstCosts.mjs: the cost ratios, an idle Redrive Trigger's statements
		// over --idle-seconds, and the keeper's renewal CPU over --renewals statements.
		answerFirstCosts: Boolean(args['answer-first-costs']),
		idleSeconds: positiveInt('idle-seconds', args['idle-seconds'] ?? 60),
		renewals: positiveInt('renewals', args.renewals ?? 500),
		env: Object.fromEntries(
			args.env.map((pair) => {
				const at = pair.indexOf('=');
				if (at < 1) throw new Error(`--env wants NAME=VALUE, not ${pair}`);
				return [pair.slice(0, at), pair.slice(at + 1)];
			}),
		),
	};
	for (const shape of config.shapes)
		if (!ALL_SHAPES.includes(shape))
			throw new Error(`unknown shape ${shape} (${ALL_SHAPES.join(', ')})`);
	if (config.concurrency.some((c) => c > 256)) throw new Error('--concurrency: at most 256');
	return config;
}
