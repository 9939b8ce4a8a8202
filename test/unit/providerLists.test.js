// No list of providers is written by hand in README.md, CONTRIBUTING.md, docs/, scripts/ or planner/: three or more provider
// names in a row ("Stripe, GitHub, Shopify", "`stripe`|`github`|`slack`", "A, B and C") go stale the
// day a provider is added (the CLI's usage line offered 4 of 23, a note named 2 of the 10 senders
// that sign a text). Such lists are made from the provider table (nodes/shared/webhook/providers/)
// and written between generated markers (`<!-- name:start … -->` … `<!-- name:end -->`), which this
// test skips; one or two names as an example are fine. And one default provider, in one constant.
const { describe, test, expect } = require('@jest/globals');
const { readFileSync, readdirSync } = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..', '..');
const { PROVIDERS } = require('../../dist/nodes/shared/webhook/providers');
const { DEFAULT_PROVIDER } = require('../../dist/nodes/shared/webhook/providers/defaultProvider');
const { SIGNATURE_SCHEMES } = require('../../dist/nodes/shared/webhook/signatureSchemes');

/** Every way a provider is written: its label, its value, the value capitalised, the label's first word. */
function providerNames(providers) {
	const names = new Set();
	for (const { label, value } of providers) {
		names.add(label);
		names.add(value);
		names.add(value[0].toUpperCase() + value.slice(1));
		names.add(label.split(' ')[0]);
	}
	return [...names].sort((a, b) => b.length - a.length);
}

/** Three or more names joined by commas, "and", "or", "/" or "|", each maybe in backticks, quotes or bold. */
function listPattern(names) {
	const escaped = names.map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
	const name = `[\`'"*]*(?:${escaped})[\`'"*]*`;
	const separator = String.raw`(?:\s*,\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+|\s*[/|]\s*)`;
	return new RegExp(String.raw`(?<![\w-])${name}(?:${separator}${name}){2,}(?![\w-])`, 'g');
}

const LIST = listPattern(providerNames(PROVIDERS));

/** Generated regions keep their line count but lose their text. */
const withoutGenerated = (text) =>
	text.replace(/<!-- ([\w-]+):start[\s\S]*?<!-- \1:end -->/g, (region) =>
		region.replace(/[^\n]/g, ' '),
	);

/** Hand-written lists in this text: "line: list". */
function handLists(text) {
	const plain = withoutGenerated(text);
	return [...plain.matchAll(LIST)].map(
		(match) =>
			`${plain.slice(0, match.index).split('\n').length}: ${match[0].replace(/\s+/g, ' ')}`,
	);
}

function filesUnder(dir, extension) {
	return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
		const relative = path.join(dir, entry.name);
		if (entry.isDirectory()) return filesUnder(relative, extension);
		return extension.test(entry.name) ? [relative] : [];
	});
}

const FILES = [
	'README.md',
	'CONTRIBUTING.md',
	...filesUnder('docs', /\.md$/),
	...filesUnder('scripts', /\.(mjs|js)$/),
	...filesUnder('planner', /\.ts$/),
];

describe('no provider list written by hand', () => {
	test('the pattern finds the lists it is meant for, and not one or two names', () => {
		expect(handLists('senders (Stripe, GitHub, Shopify, Slack) retry')).toHaveLength(1);
		expect(handLists('`--provider` `stripe`, `github`, `shopify`, `slack`')).toHaveLength(1);
		expect(handLists('<stripe|github|shopify|slack>')).toHaveLength(1);
		expect(handLists('Slack, Discord and Zoom give up')).toHaveLength(1);
		expect(handLists('Stripe and Slack sign a text')).toEqual([]);
		expect(handLists('<!-- t:start -->\n| Stripe, GitHub, Shopify |\n<!-- t:end -->')).toEqual([]);
	});

	test.each(FILES)('%s', (file) => {
		expect(handLists(readFileSync(path.join(root, file), 'utf8'))).toEqual([]);
	});
});

test('one default provider, a verifiable provider of the table', () => {
	expect(PROVIDERS.some(({ value }) => value === DEFAULT_PROVIDER)).toBe(true);
	expect(SIGNATURE_SCHEMES[DEFAULT_PROVIDER]).toBeDefined();
	// Written once: every other file takes the constant.
	const written = [...FILES, ...filesUnder('nodes', /\.ts$/)].filter((file) =>
		/(default:\s*|===\s*)'stripe'/.test(readFileSync(path.join(root, file), 'utf8')),
	);
	expect(written).toEqual([]);
});
