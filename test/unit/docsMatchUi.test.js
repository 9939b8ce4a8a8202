// The documentation read against the screen: a newcomer who follows README.md or docs/*.md looks
// for the name the text gives, so every name that stands for something in one of the package's
// nodes or credentials must be the name n8n shows (read from the built descriptions in dist/, as
// n8n loads them), and every repository path the text names must exist. docNames.test.js checks
// the bold chains that start at a node; this file adds what it leaves out:
// - a chain from a node whose first steps are plain text (`Reserve → Mode Lease → **Answer First**`);
// - in a line that starts with a node's bold name (README's table of the nodes, a list item), every
//   other bold name is that node's parameter, option or operation, or another node or credential;
// - a settings or fields table (first header cell "Setting" or "Field"): each first cell is a name
//   the nodes or credentials show;
// - the templates' sticky notes: each bold name is a node of that template or a name its nodes
//   show, and each `$('Node')` they say a node reads from is read by some node of the template;
// - the README's Quick start drawing names the Webhook's methods the template's Webhook takes;
// - every repository path named in README.md, CONTRIBUTING.md, docs/*.md and the tests' comments.
// Each rule is tried on a planted mistake first, so it can fail.
const { describe, test, expect } = require('@jest/globals');
const { execFileSync } = require('node:child_process');
const { existsSync, readFileSync, readdirSync } = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));

/** @param {string} file a built module exporting one class */
function instanceOf(file) {
	const exported = Object.values(require(path.join(root, file)));
	const Class = /** @type {new () => any} */ (
		exported.find((value) => typeof value === 'function')
	);
	return new Class();
}

/**
 * Every name a panel shows: labels, the options of option lists, the fields of collections.
 * @param {any[]} properties
 * @param {Set<string>} names
 */
function collectNames(properties, names = new Set()) {
	for (const property of properties) {
		if (property.displayName) names.add(property.displayName);
		if (property.name && property.value !== undefined) names.add(property.name);
		if (Array.isArray(property.options)) collectNames(property.options, names);
		if (Array.isArray(property.values)) collectNames(property.values, names);
	}
	return names;
}

const nodes = pkg.n8n.nodes.map((/** @type {string} */ file) => {
	const { description } = instanceOf(file);
	return {
		displayName: /** @type {string} */ (description.displayName),
		type: `${pkg.name}.${description.name}`,
		/** "Idempotency Reserve" or "Reserve", as the docs call it. */
		aliases: [description.displayName, description.displayName.replace(/^Idempotency /, '')],
		names: collectNames(description.properties),
	};
});
const credentials = pkg.n8n.credentials.map((/** @type {string} */ file) => {
	const credential = instanceOf(file);
	return {
		displayName: /** @type {string} */ (credential.displayName),
		names: collectNames(credential.properties),
	};
});
/** Every node's and credential's name and every name their panels show. */
const everyName = new Set([
	...nodes.flatMap((node) => [node.displayName, ...node.names]),
	...credentials.flatMap((credential) => [credential.displayName, ...credential.names]),
]);
const nodeNames = new Set([...nodes, ...credentials].map((each) => each.displayName));

/** @param {string} reference */
const nodeCalled = (reference) =>
	nodes.find((node) => node.aliases.includes(reference.replace(/\*\*/g, '').trim()));

/**
 * Names that are bold in the docs and look like a node's, but are n8n's own screens or words:
 * each with why it is not read from the package's nodes.
 */
const NOT_THE_PACKAGE = new Map([
	['Settings', "n8n's own tab of every node (On Error, Retry On Fail), not the package's"],
	['On Error', "n8n's own setting of every node, on its Settings tab"],
	['Test', "the credential dialog's button n8n draws, not a field"],
	['Save', "n8n's credential dialog button"],
]);

/**
 * The paragraphs of a Markdown text outside fenced code, each joined into one line, with the
 * number of its first line; a table row and a list item are paragraphs of their own.
 * @param {string} text
 */
function paragraphs(text) {
	let fence = null;
	/** @type {Array<{ line: string, number: number }>} */
	const found = [];
	let current = null;
	for (const [index, line] of text.split('\n').entries()) {
		const opening = /^\s*(`{3,}|~{3,})/.exec(line);
		if (opening && (fence === null || opening[1].startsWith(fence))) {
			fence = fence === null ? opening[1] : null;
			current = null;
			continue;
		}
		if (fence !== null || line.trim() === '') {
			current = null;
			continue;
		}
		const starts = /^\s*(\||[-*] |\d+\. |#)/.test(line);
		if (current && !starts) current.line += ` ${line.trim()}`;
		else {
			current = { line: line.trim(), number: index + 1 };
			found.push(current);
			if (/^\|/.test(current.line)) current = null;
		}
	}
	return found;
}

/** Code spans blanked (their `**` and `→` are not the prose's). @param {string} line */
const prose = (line) => line.replace(/`[^`]*`/g, (code) => ' '.repeat(code.length));

/**
 * A chain that starts at one of the package's nodes and reaches a bold step, its steps read as
 * written, bold or not: `Reserve → Mode Lease → **Answer First (Store the Delivery)**` is Reserve,
 * "Mode Lease", "Answer First (Store the Delivery)". A chain of plain steps only is a drawing of a
 * workflow (`Webhook → Reserve → Business Step`), not a path through a panel, and is left alone.
 * @param {string} line
 * @returns {string[]}
 */
function chainProblems(line) {
	const problems = [];
	const parts = prose(line).split('→');
	for (let start = 0; start < parts.length - 1; start++) {
		const tail = /(?:\*\*)?([A-Z][\w-]*(?: [A-Z][\w-]*)*)(?:\*\*)?\s*$/.exec(parts[start]);
		const node = tail && nodeCalled(tail[1]);
		if (!node) continue;
		/** @type {Array<{ name: string, bold: boolean }>} */
		const steps = [];
		for (let next = start + 1; next < parts.length; next++) {
			const part = parts[next];
			const bold = /^\s*\*\*([^*]+?)\*\*/.exec(part);
			const plain =
				/^\s*([A-Z][\w-]*(?: (?:[A-Z][\w-]*|a|an|the|of|for|to|and|or|by|if))*(?: \([^)]*\))?)/.exec(
					part,
				);
			// `**A → B**`: the bold span runs over the arrow; its first step is this part's head.
			const open = /^\s*\*\*([^*]+?)\s*$/.exec(part);
			const step = bold?.[1] ?? open?.[1] ?? plain?.[1];
			if (!step) break;
			steps.push({ name: step.trim(), bold: Boolean(bold || open || /^[^*]*\*\*\s*$/.test(part)) });
			const rest = part.slice(part.indexOf(step) + step.length).replace(/^\*\*/, '');
			if (rest.trim() !== '') break;
		}
		if (!steps.some((step) => step.bold)) continue;
		const last = steps.map((step) => step.bold).lastIndexOf(true);
		for (const { name } of steps.slice(0, last + 1)) {
			if (NOT_THE_PACKAGE.has(name)) break;
			if (!node.names.has(name))
				problems.push(`${node.displayName} has no parameter, option or operation "${name}"`);
		}
	}
	return problems;
}

/**
 * A table row or list item that starts with a node's bold name (README's table of the nodes, a list
 * of a workflow's nodes): its other bold names are that node's, or another node's or credential's.
 * Bold that starts in lower case is emphasis (**in one transaction**), and a name after another
 * node's possessive (`Reserve's **Answer First (Store the Delivery)**`) is docNames.test.js's to check.
 * @param {string} line
 * @returns {string[]}
 */
function rowProblems(line) {
	const text = prose(line);
	const lead = /^(?:\|\s*|[-*]\s+|\d+\.\s+)\*\*([^*]+?)\*\*/.exec(text);
	const node = lead && nodeCalled(lead[1]);
	if (!node) return [];
	const rest = text.slice(lead.index + lead[0].length);
	const problems = [];
	for (const match of rest.matchAll(/(\S+'s )?\*\*([^*]+?)\*\*/g)) {
		const name = match[2].trim();
		if (match[1] || name.includes('→') || !/^[A-Z]/.test(name)) continue;
		if (
			node.names.has(name) ||
			nodeCalled(name) ||
			nodeNames.has(name) ||
			NOT_THE_PACKAGE.has(name)
		)
			continue;
		problems.push(`${node.displayName} has no parameter, option or operation "${name}"`);
	}
	return problems;
}

/**
 * A table of settings or fields (first header cell "Setting" or "Field", its first cells plain
 * names): each first cell is a name the nodes or credentials show.
 * @param {string} text
 * @returns {Array<{ number: number, problem: string }>}
 */
function tableProblems(text) {
	const problems = [];
	const rows = paragraphs(text).filter(({ line }) => line.startsWith('|'));
	let inTable = false;
	let previous = -2;
	for (const { line, number } of rows) {
		const cells = line.split('|').map((cell) => cell.trim());
		if (number !== previous + 1) inTable = /^(Setting|Field)s?$/.test(cells[1]);
		previous = number;
		if (!inTable || /^(Setting|Field)s?$|^-+$|^:?-+:?$/.test(cells[1])) continue;
		if (cells[1].startsWith('`')) continue; // an output field, `key`: not a panel name
		const name = cells[1].replace(/\*\*/g, '');
		if (!everyName.has(name))
			problems.push({ number, problem: `no node or credential shows "${name}"` });
	}
	return problems;
}

const documents = [
	'README.md',
	...readdirSync(path.join(root, 'docs'))
		.filter((file) => file.endsWith('.md'))
		.map((file) => `docs/${file}`),
];

describe('each rule catches a planted mistake and passes the right name', () => {
	test.each([
		[
			'Reserve → Mode Lease → **Answer First (Store the Delivery)**',
			/no parameter, option or operation "Mode Lease"/,
		],
		[
			'| **Idempotency Keys** | **Look Up**, and **Retry** or **Drop Dead Letters** |',
			/no parameter, option or operation "Retry"/,
		],
	])('%s', (line, why) => {
		expect([...chainProblems(line), ...rowProblems(line)].join('\n')).toMatch(why);
	});

	test.each([
		'Reserve → **Mode → Reserve With a Lease (Recommended)** → **Answer First (Store the Delivery)**',
		'Reserve → Mode → Reserve With a Lease (Recommended) → **Answer First (Store the Delivery)**',
		'| **Idempotency Keys** | **Look Up**, and **Retry Dead Letters** or **Drop Dead Letters** |',
		'Webhook → Reserve → Business Step → Complete Key',
		'In the node, **Settings → On Error → Continue (using error output)**',
	])('passes: %s', (line) => {
		expect([...chainProblems(line), ...rowProblems(line)]).toEqual([]);
	});

	test('a settings table with a name no panel shows', () => {
		const table =
			'| Setting | Default |\n| --- | --- |\n| Check Every | 10 s |\n| Check Often | 5 |\n';
		expect(tableProblems(table)).toEqual([
			{ number: 4, problem: 'no node or credential shows "Check Often"' },
		]);
	});
});

describe.each(documents)('%s names what the screen shows', (file) => {
	const text = readFileSync(path.join(root, file), 'utf8');

	test("chains from a node, bold names in a node's line, settings tables", () => {
		const problems = [
			...paragraphs(text).flatMap(({ line, number }) =>
				[...chainProblems(line), ...rowProblems(line)].map(
					(problem) => `line ${number}: ${problem}`,
				),
			),
			...tableProblems(text).map(({ number, problem }) => `line ${number}: ${problem}`),
		];
		expect(problems).toEqual([]);
	});
});

const WORKFLOWS = path.join(root, 'workflows');
const templates = readdirSync(WORKFLOWS)
	.filter((file) => file.endsWith('.json'))
	.map((file) => ({
		file,
		workflow: JSON.parse(readFileSync(path.join(WORKFLOWS, file), 'utf8')),
	}));

/**
 * What a template's sticky notes say its nodes read that they do not: every `$('Node')` a note
 * names is a node of the template, and where the note says nodes take something from it, some
 * node's parameters do read it.
 * @param {{ nodes: any[] }} workflow
 */
function noteProblems(workflow) {
	const problems = [];
	const notes = workflow.nodes.filter((node) => node.type === 'n8n-nodes-base.stickyNote');
	const others = workflow.nodes.filter((node) => node.type !== 'n8n-nodes-base.stickyNote');
	const templateNames = new Set(others.map((node) => node.name));
	const parameters = JSON.stringify(others.map((node) => node.parameters));
	for (const note of notes) {
		const content = String(note.parameters.content ?? '');
		for (const sentence of content.split(/(?<=[.!?])\s+|\n/)) {
			for (const [, name] of sentence.matchAll(/`\$\('([^']+)'\)/g)) {
				if (!templateNames.has(name))
					problems.push(`${note.name}: no node "${name}" in the template`);
				else if (/\btakes? [^.]*\bfrom\b/.test(sentence) && !parameters.includes(`$('${name}')`))
					problems.push(`${note.name}: says nodes take something from $('${name}'), none reads it`);
			}
		}
	}
	return problems;
}

describe("the templates' sticky notes name what the template has", () => {
	test('a planted mistake is caught', () => {
		const workflow = {
			nodes: [
				{ name: 'Event to Run', type: 'n8n-nodes-base.noOp', parameters: {} },
				{
					name: 'Note',
					type: 'n8n-nodes-base.stickyNote',
					parameters: {
						content:
							"Complete takes the key from `$('Event to Run')`. Never `$('Webhook')`. Or `$json`, or `$('Event to Run').item`.",
					},
				},
			],
		};
		expect(noteProblems(workflow)).toEqual([
			"Note: says nodes take something from $('Event to Run'), none reads it",
			'Note: no node "Webhook" in the template',
		]);
	});

	test.each(templates)('$file', ({ workflow }) => {
		expect(noteProblems(workflow)).toEqual([]);
	});
});

test("the README's Quick start draws the Webhook with the methods its template's Webhook takes", () => {
	const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
	const start = readme.indexOf('## Quick start');
	const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
	const template = /\(workflows\/([\w.-]+\.json)\)/.exec(section)?.[1];
	const drawing = /```\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
	const drawn = /^Webhook \(([^)]*)\)/m.exec(drawing)?.[1] ?? '';
	const webhook = JSON.parse(
		readFileSync(path.join(WORKFLOWS, String(template)), 'utf8'),
	).nodes.find((/** @type {any} */ node) => node.type === 'n8n-nodes-base.webhook');
	const methods = [webhook.parameters.httpMethod ?? 'GET'].flat();
	const drawnMethods = drawn.match(/\b(GET|POST|PUT|PATCH|DELETE|HEAD)\b/g) ?? [];
	expect(drawnMethods.sort()).toEqual([...methods].sort());
});

// ---- paths -------------------------------------------------------------------------------------

const tracked = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' })
	.split('\n')
	.filter(Boolean);
const trackedPaths = new Set(tracked);
for (const file of tracked) {
	const parts = file.split('/');
	for (let end = 1; end < parts.length; end++) {
		trackedPaths.add(parts.slice(0, end).join('/'));
		trackedPaths.add(`${parts.slice(0, end).join('/')}/`);
	}
}
/** Folder names anywhere in the repository: a path that starts elsewhere is another project's. */
const folderNames = new Set(tracked.flatMap((file) => file.split('/').slice(0, -1)));
const basenames = new Set(tracked.map((file) => path.basename(file)));
const EXTENSIONS = 'ts|js|mjs|cjs|json|md|yml|yaml|sql|html|css|png|svg|sh';
const ROOTS = /^(?:nodes|credentials|test|scripts|docs|workflows|bench|planner|\.github|\.ci)\//;

/**
 * Paths named where no repository file is meant: each with why.
 */
const NOT_REPOSITORY_PATHS = new Map([
	['credentials/Postgres.credentials.ts', "n8n's own Postgres credential, in n8n-nodes-base"],
	['bench/workflows/x.json', "readme.test.js's example of a path its rule accepts"],
	['../workflows/x.json', "readme.test.js's example of a path its rule accepts"],
]);

/**
 * Why a named path is not in the repository, or null. A path with a folder is found from the
 * repository's root, or as the tail of a tracked path when the text gave its folder before
 * (`providers/providerTypes.ts` in nodes/shared/webhook/); a bare file name is some tracked
 * file's name. dist/ and node_modules/ are the build's and npm's, read on disk.
 * @param {string} named
 */
function missingPath(named) {
	const clean = named.replace(/[.,:;]+$/, '').replace(/^\.\//, '');
	if (/[<>*{}$]|\.\.\.|…/.test(clean) || NOT_REPOSITORY_PATHS.has(clean)) return null;
	if (/^(dist|node_modules)\//.test(clean))
		return existsSync(path.join(root, clean)) ? null : `${clean}: not on disk after the build`;
	if (!clean.includes('/') || (clean.endsWith('/') && !clean.slice(0, -1).includes('/')))
		return basenames.has(clean) ||
			trackedPaths.has(clean) ||
			[...trackedPaths].some((p) => p.endsWith(`/${clean}`))
			? null
			: `${clean}: no file of that name in the repository`;
	if (trackedPaths.has(clean) || existsSync(path.join(root, clean))) return null;
	if (ROOTS.test(clean)) return `${clean}: not in the repository`;
	if (!folderNames.has(clean.split('/')[0])) return null; // n8n's or another package's path
	return [...trackedPaths].some((p) => p.endsWith(`/${clean}`))
		? null
		: `${clean}: no path of the repository ends so`;
}

/**
 * Paths a text names: in code spans, link targets, and (in comments) bare words that look like
 * repository paths.
 * @param {string} text
 * @param {{ bare: boolean }} options
 */
function pathsNamed(text, { bare }) {
	const found = new Set();
	const pathLike = new RegExp(`^(?:[\\w.-]+/)*[\\w.-]+\\.(?:${EXTENSIONS})$|^(?:[\\w.-]+/)+$`);
	for (const [, code] of text.matchAll(/(?<!`)`([^`\s]+)`(?!`)/g)) {
		const candidate = code.replace(/:\d+$/, '').replace(/#.*$/, '');
		if (candidate.startsWith('/') || candidate.startsWith('~') || /^[a-z]+:\/\//i.test(candidate))
			continue;
		if (
			pathLike.test(candidate) &&
			(candidate.includes('/') || ROOTS.test(candidate) || /\.(ts|mjs|md|yml|sql)$/.test(candidate))
		)
			found.add(candidate);
	}
	if (bare)
		for (const [match] of text.matchAll(
			new RegExp(
				`(?<![\\w./~@-])(?:nodes|credentials|test|scripts|docs|workflows|bench|planner)/[\\w./-]*[\\w/]`,
				'g',
			),
		))
			found.add(match.replace(/\.$/, ''));
	return [...found];
}

/** A JavaScript file's comments: // lines and the lines of /* … *\/ blocks. @param {string} source */
function commentsOf(source) {
	const comments = [];
	for (const [block] of source.matchAll(/\/\*[\s\S]*?\*\//g)) comments.push(block);
	for (const [, line] of source.matchAll(/(?:^|[^:'"`\\])\/\/(.*)$/gm)) comments.push(line);
	return comments.join('\n');
}

const testFiles = tracked.filter((file) => /^test\/.*\.(js|mjs|cjs)$/.test(file));

describe("every repository path the docs and the tests' comments name exists", () => {
	test('a planted wrong path is caught, a right one passes', () => {
		const text =
			'see `nodes/shared/signature/answerHandshakes.ts`, `NO-SUCH-NOTES.md` and `providers/providerTypes.ts`';
		expect(pathsNamed(text, { bare: false }).map(missingPath)).toEqual([
			'nodes/shared/signature/answerHandshakes.ts: not in the repository',
			'NO-SUCH-NOTES.md: no file of that name in the repository',
			null,
		]);
	});

	test.each(['README.md', 'CONTRIBUTING.md', ...documents.filter((file) => file !== 'README.md')])(
		'%s',
		(file) => {
			const text = readFileSync(path.join(root, file), 'utf8');
			const missing = pathsNamed(text, { bare: false }).map(missingPath).filter(Boolean);
			expect(missing).toEqual([]);
		},
	);

	test.each(testFiles)('%s (comments)', (file) => {
		const comments = commentsOf(readFileSync(path.join(root, file), 'utf8'));
		const missing = pathsNamed(comments, { bare: true }).map(missingPath).filter(Boolean);
		expect(missing).toEqual([]);
	});
});
