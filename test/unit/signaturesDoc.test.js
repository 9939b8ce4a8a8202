// docs/signatures.md's provider table is what scripts/docs-signatures.mjs writes from the provider
// table today: regenerated in memory, any difference fails. Run `npm run docs-signatures` to refresh.
const { test, expect } = require('@jest/globals');
const { readFileSync } = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { PROVIDERS } = require('../../dist/nodes/shared/webhook/providers');

const script = path.join(__dirname, '..', '..', 'scripts', 'docs-signatures.mjs');

test('the provider table in docs/signatures.md is the one the table writes (npm run docs-signatures)', async () => {
	const { DOC, docWithTable } = await import(pathToFileURL(script).href);
	const doc = readFileSync(DOC, 'utf8');
	expect(doc).toBe(docWithTable(doc, PROVIDERS));
});

test('every provider has its row, linked to its own documentation', async () => {
	const { signaturesTable } = await import(pathToFileURL(script).href);
	const rows = signaturesTable(PROVIDERS).split('\n').slice(2);
	expect(rows.map((row) => /^\| \[([^\]]+)\]\((https:[^)]+)\)/.exec(row)?.[1])).toEqual(
		PROVIDERS.map(({ label }) => label),
	);
});
