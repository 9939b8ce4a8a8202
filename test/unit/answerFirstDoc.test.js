// docs/answer-first.md's table of senders is what scripts/docs-signatures.mjs writes from the
// provider table's timeouts today: regenerated in memory, any difference fails. Run
// `npm run docs-signatures` to refresh.
const { test, expect } = require('@jest/globals');
const { readFileSync } = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { PROVIDERS } = require('../../dist/nodes/shared/webhook/providers');

const script = path.join(__dirname, '..', '..', 'scripts', 'docs-signatures.mjs');

test('the senders table in docs/answer-first.md is the one the table writes (npm run docs-signatures)', async () => {
	const { ANSWER_FIRST_DOC, answerFirstDocWithTable } = await import(pathToFileURL(script).href);
	const doc = readFileSync(ANSWER_FIRST_DOC, 'utf8');
	expect(doc).toBe(answerFirstDocWithTable(doc, PROVIDERS));
});

test('every sender with a known timeout has its row, every other one is named as unknown', async () => {
	const { answerFirstTable, unknownTimeoutsLine } = await import(pathToFileURL(script).href);
	const rows = answerFirstTable(PROVIDERS).split('\n').slice(2);
	const known = PROVIDERS.filter(({ timeout }) => 'seconds' in timeout);
	expect(rows.map((row) => row.split(' | ')[0].slice(2))).toEqual(known.map(({ label }) => label));
	// The names listed after the colon, whole ("Discord" is not "Discord Webhook Events").
	const named = unknownTimeoutsLine(PROVIDERS).split('): ')[1].replace(/\.$/, '').split(', ');
	for (const { label, timeout } of PROVIDERS)
		expect([label, named.includes(label)]).toEqual([label, !('seconds' in timeout)]);
});

test('a step answers last only while it and the headroom stay under the wait', async () => {
	const { needsAnswerFirst, HEADROOM_SECONDS } = await import(pathToFileURL(script).href);
	expect(HEADROOM_SECONDS).toBe(1);
	// Slack's 3 s: a 1 s step fits, 2 s leaves no room, 6 s (issue 53's run) is far over.
	expect([1, 2, 6].map((step) => needsAnswerFirst(3, step))).toEqual([false, true, true]);
	// LINE's 2 s: even 1 s is too close.
	expect(needsAnswerFirst(2, 1)).toBe(true);
});
