// The names the documentation gives the nodes are the names n8n shows. README.md, CONTRIBUTING.md
// and docs/*.md are read for:
// - a bold chain that starts at one of this package's nodes, `**Idempotency Reserve → Key Source**`,
//   `Reserve → **Verify Signature**`, `**Idempotency Keys → Look Up**`, or a possessive,
//   `Reserve's **Key Source**`: every later part is a parameter, option or operation of that node;
// - a bold chain that starts at a parameter only one kind of node has, `**On Mismatch → Send to
//   Reused Key Output**`: the option is one that parameter offers;
// - a bold name that starts with "Idempotency", or one followed by "credential": a node or a
//   credential of the package, by the name n8n lists it under;
// - an output of version 1 of a node (Reserve's `true` / `false`) named as an output, unless the
//   sentence says it is version 1's;
// - a count of the key table's columns that the table never has.
// Every name comes from the built nodes and credentials (dist/, as n8n loads them) and the column
// groups from the built SQL module, not from a list kept here, so a renamed parameter fails this
// test until the documentation follows.
const { describe, test, expect } = require('@jest/globals');
const { existsSync, readFileSync, readdirSync } = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const { COLUMN_GROUPS, LEASE_COLUMNS } = require('../../dist/nodes/shared/store/sql/schema.js');

/** @param {string} file a built module exporting one class */
function instanceOf(file) {
	const exported = Object.values(require(path.join(root, file)));
	const Class = /** @type {new () => any} */ (
		exported.find((value) => typeof value === 'function')
	);
	return new Class();
}

/**
 * Every name a node's panel shows: parameter labels, the options of option lists, the fields of
 * collections (recursively).
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

/**
 * The output names a node has for a version. An `outputs` expression (n8n evaluates it with the
 * node's parameters) is run with the defaults and with each option of each option list changed on
 * its own, so every output some setting shows is found.
 * @param {any} description
 * @param {number} version
 */
function outputNames(description, version) {
	if (description.outputNames) return new Set(description.outputNames);
	if (typeof description.outputs !== 'string') return new Set();
	const body = description.outputs.replace(/^=\{\{/, '').replace(/\}\}$/, '');
	const evaluate = new Function('$parameter', '$nodeVersion', `return (${body});`);
	const defaults = Object.fromEntries(
		description.properties.map((/** @type {any} */ p) => [p.name, p.default]),
	);
	const variants = [defaults];
	for (const property of description.properties)
		if (property.type === 'options')
			for (const option of property.options)
				variants.push({ ...defaults, [property.name]: option.value });
	const names = new Set();
	for (const parameters of variants)
		for (const output of evaluate(parameters, version))
			if (output.displayName) names.add(output.displayName);
	return names;
}

const nodes = pkg.n8n.nodes.map((/** @type {string} */ file) => {
	const { description } = instanceOf(file);
	const versions = [description.version].flat();
	const latest = Math.max(...versions);
	const current = outputNames(description, latest);
	/** Output names only an older version has, such as Reserve version 1's `true` and `false`. */
	const retired = new Set(
		versions
			.filter((version) => version !== latest)
			.flatMap((version) => [...outputNames(description, version)])
			.filter((name) => !current.has(name)),
	);
	return {
		displayName: description.displayName,
		/** How the docs refer to it: "Idempotency Reserve" or "Reserve". */
		aliases: [description.displayName, description.displayName.replace(/^Idempotency /, '')],
		names: collectNames(description.properties),
		properties: description.properties,
		retired,
	};
});
const credentials = pkg.n8n.credentials.map((/** @type {string} */ file) => instanceOf(file));
const knownNames = new Set([
	...nodes.map((node) => node.displayName),
	...credentials.map((credential) => credential.displayName),
]);
const retiredOutputs = new Set(nodes.flatMap((node) => [...node.retired]));

/** @param {string} reference */
const nodeCalled = (reference) => nodes.find((node) => node.aliases.includes(reference.trim()));

/**
 * Parameters that only one node has, with the options they offer: a chain may start with one.
 * @type {Map<string, Set<string>>}
 */
const parameterOptions = (() => {
	/** @type {Map<string, Set<string>>} */
	const options = new Map();
	/** @type {Map<string, number>} */
	const owners = new Map();
	for (const node of nodes)
		for (const property of node.properties) {
			if (property.type !== 'options') continue;
			const offered = options.get(property.displayName) ?? new Set();
			for (const option of property.options) offered.add(option.name);
			options.set(property.displayName, offered);
			owners.set(property.displayName, (owners.get(property.displayName) ?? 0) + 1);
		}
	for (const [name, count] of owners) if (count > 1 && name !== 'Mode') options.delete(name);
	return options;
})();

/** Column counts the key table can have, and the counts of columns a group of columns adds. */
const columnCounts = (() => {
	const groups = Object.values(COLUMN_GROUPS).map((columns) => columns.length);
	const added = new Set([0]);
	for (const size of groups) for (const sum of [...added]) added.add(sum + size);
	added.delete(0);
	const base = 2; // key and first_seen: the hand-built pattern's table
	return { added, totals: new Set([base, ...[...added].map((sum) => base + sum)]) };
})();
const NUMBER_WORDS = [
	'zero',
	'one',
	'two',
	'three',
	'four',
	'five',
	'six',
	'seven',
	'eight',
	'nine',
	'ten',
	'eleven',
	'twelve',
];

/**
 * The paragraphs of a Markdown text outside fenced code, each joined into one line (bold may wrap
 * across lines), with the number of its first line; a table row is a paragraph of its own.
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
		if (current && !/^\s*\|/.test(line)) current.line += ` ${line.trim()}`;
		else {
			current = { line: line.trim(), number: index + 1 };
			found.push(current);
			if (/^\|/.test(current.line)) current = null;
		}
	}
	return found;
}

/**
 * What is wrong with the names in one line of a document.
 * @param {string} line
 * @param {string} [before] the line before it: a sentence that says "version 1" may start there
 * @returns {string[]}
 */
function problemsIn(line, before = '') {
	const problems = [];
	const prose = line.replace(/`[^`]*`/g, (code) => code.replace(/\*/g, ' '));
	/** The bold spans, paired in order (`**a** and **b**` is a and b, never " and "). */
	const bold = prose.split('**').filter((_, index) => index % 2 === 1);

	// A chain from a node: in one bold span, or a node's name, then → and a bold span.
	const chains = [];
	for (const span of bold) {
		const parts = span.split('→').map((part) => part.trim());
		if (parts.length > 1) chains.push(parts);
	}
	for (const match of prose.matchAll(
		/(?:\*\*)?([A-Z][\w-]*(?: [A-Z][\w-]*)*)(?:\*\*)? → \*\*([^*]+?)\*\*/g,
	))
		if (nodeCalled(match[1]))
			chains.push([match[1], ...match[2].split('→').map((part) => part.trim())]);
	for (const match of prose.matchAll(/([A-Z][\w-]*(?: [A-Z][\w-]*)*)'s \*\*([^*]+?)\*\*/g))
		if (nodeCalled(match[1]))
			chains.push([match[1], ...match[2].split('→').map((part) => part.trim())]);
	for (const [first, ...rest] of chains) {
		const node = nodeCalled(first);
		// n8n's own Settings tab (On Error, Retry On Fail) is every node's, not this package's.
		if (node && rest[0] === 'Settings') continue;
		if (node) {
			for (const part of rest)
				if (!node.names.has(part))
					problems.push(`${node.displayName} has no parameter, option or operation "${part}"`);
			continue;
		}
		const offered = parameterOptions.get(first);
		if (offered && rest.length > 0 && !offered.has(rest[0]))
			problems.push(`${first} offers no "${rest[0]}" (it offers ${[...offered].join(', ')})`);
	}

	// Nodes and credentials by name.
	for (const span of bold) {
		const name = span.trim();
		// "**Idempotency Keys' in-progress index …**" starts with a name; "**Idempotency Complete**" is none.
		const startsWithName = [...knownNames].some(
			(known) => name === known || new RegExp(`^${known}(?![\\w -])`).test(name),
		);
		if (/^Idempotency /.test(name) && !name.includes('→') && !startsWithName)
			problems.push(`no node or credential is called "${name}"`);
	}
	for (const match of prose.matchAll(/\*\*([^*]+?)\*\* credential/g)) {
		const name = match[1].trim();
		if (!credentials.some((credential) => credential.displayName === name))
			problems.push(`no credential is listed as "${name}"`);
	}

	// Outputs only an older version has, named as outputs.
	if (!/version 1|v1\b/i.test(`${before} ${line}`))
		for (const name of retiredOutputs) {
			const quoted = `\`${name}\``;
			const near = new RegExp(
				`${quoted}[^.;]{0,40}\\boutputs?\\b|\\boutputs?\\b[^.;]{0,40}${quoted}`,
				'i',
			);
			if (near.test(line)) problems.push(`${quoted} is an output of version 1 only`);
		}

	// Column counts.
	for (const match of prose.matchAll(
		/\b(\w+)[- ](lease |more |new |optional )?(?:nullable )?columns?\b/gi,
	)) {
		const word = match[1].toLowerCase();
		const count = NUMBER_WORDS.includes(word) ? NUMBER_WORDS.indexOf(word) : Number(word);
		if (!Number.isInteger(count) || count === 0) continue;
		const qualifier = (match[2] ?? '').trim();
		if (qualifier === 'lease') {
			if (count !== LEASE_COLUMNS.length)
				problems.push(`lease mode has ${LEASE_COLUMNS.length} lease columns, not ${count}`);
		} else if (!columnCounts.added.has(count) && !columnCounts.totals.has(count))
			problems.push(`the key table never has or adds ${count} columns`);
	}
	return problems;
}

const documents = [
	'README.md',
	'CONTRIBUTING.md',
	...readdirSync(path.join(root, 'docs'))
		.filter((file) => file.endsWith('.md'))
		.map((file) => `docs/${file}`),
].filter((file) => existsSync(path.join(root, file)));

describe('the names the built nodes have', () => {
	test('are found: every node, its parameters, and version 1 outputs of Reserve', () => {
		const reserve = nodes.find((node) => node.displayName === 'Idempotency Reserve');
		expect(reserve?.names.has('Key Source')).toBe(true);
		expect([...(reserve?.retired ?? [])].sort()).toEqual(['false', 'true']);
		expect(knownNames.size).toBe(pkg.n8n.nodes.length + pkg.n8n.credentials.length);
	});

	test.each([
		['Idempotency Reserve → **Key**', /no parameter, option or operation "Key"/],
		["Reserve's **Event Id**", /no parameter, option or operation "Event Id"/],
		['**Idempotency Keys → Lookup**', /no parameter, option or operation "Lookup"/],
		['**Mode → Simple**', /offers no "Simple"/],
		['**Idempotency Complete**', /no node or credential is called "Idempotency Complete"/],
		['a **Webhook Signing Secrets** credential', /no credential is listed as/],
		['Reserve sends a new event to its `true` output.', /`true` is an output of version 1 only/],
		['Lease mode adds seven lease columns.', /5 lease columns, not 7/],
		['a twelve-column table', /never has or adds 12 columns/],
	])('a planted mistake is caught: %s', (line, why) => {
		expect(problemsIn(line).join('\n')).toMatch(why);
	});

	test('the right names pass', () => {
		for (const line of [
			'**Idempotency Reserve → Key Source** decides what a key is made of.',
			"Idempotency Reserve's **Verify Signature** and **Key Source**",
			'**Idempotency Keys → Look Up** lists them',
			'**On Mismatch → Send to Reused Key Output**',
			'**Mode → Simple (At Most Once)**',
			'the **Idempotency Postgres** credential',
			'exactly one gets `new` (`true` in version 1) for a key',
			'Lease mode adds five lease columns; a two-column table keeps working.',
		])
			expect({ line, problems: problemsIn(line) }).toEqual({ line, problems: [] });
	});
});

describe.each(documents)('%s', (file) => {
	test('names only nodes, parameters, outputs and column counts the built nodes have', () => {
		const lines = paragraphs(readFileSync(path.join(root, file), 'utf8'));
		const problems = lines.flatMap(({ line, number }, index) =>
			problemsIn(line, lines[index - 1]?.line).map((problem) => `line ${number}: ${problem}`),
		);
		expect(problems).toEqual([]);
	});
});
