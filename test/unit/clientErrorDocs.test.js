// The client-error kinds (nodes/shared/keys/clientErrors.ts) and docs/errors.md agree: the
// problem+json `type` the templates send is `…/docs/errors.md#<kind>`, so every kind needs a
// heading of that name there (its GitHub anchor is the kind itself), saying its status, and the
// section lists no kind the code does not have.
const { test, expect } = require('@jest/globals');
const { readFileSync } = require('node:fs');
const path = require('node:path');
const {
	CLIENT_ERRORS,
	CLIENT_ERROR_DOCS,
	clientErrorDetails,
} = require('../../dist/nodes/shared/keys/clientErrors');

const docs = readFileSync(path.join(__dirname, '..', '..', 'docs', 'errors.md'), 'utf8');

/** The `###` headings of the section that lists the kinds, with the text up to the next heading. */
function kindSections() {
	const section = docs.split(/^## What the sender is told$/m)[1]?.split(/^## /m)[0] ?? '';
	return section
		.split(/^### /m)
		.slice(1)
		.map((part) => {
			const [heading, ...body] = part.split('\n');
			return { heading: heading.trim(), body: body.join('\n') };
		})
		.filter(({ heading }) => /^[a-z]+(-[a-z]+)*$/.test(heading));
}

test('every kind has a section whose anchor is the kind, and every such section is a kind', () => {
	const headings = kindSections().map((section) => section.heading);
	expect([...headings].sort()).toEqual(Object.keys(CLIENT_ERRORS).sort());
});

test("each kind's section starts with the status the templates answer it with", () => {
	for (const { heading, body } of kindSections())
		expect([heading, body.trim().match(/^\*\*(\d{3})\.\*\*/)?.[1]]).toEqual([
			heading,
			String(CLIENT_ERRORS[heading].status),
		]);
});

test('the type of each kind points at docs/errors.md on the default branch, at its anchor', () => {
	expect(CLIENT_ERROR_DOCS).toMatch(/\/blob\/main\/docs\/errors\.md$/);
	const kinds = /** @type {Array<keyof typeof CLIENT_ERRORS>} */ (Object.keys(CLIENT_ERRORS));
	for (const kind of kinds)
		expect(clientErrorDetails(kind).type).toBe(`${CLIENT_ERROR_DOCS}#${kind}`);
	// Client errors are 4xx, so the sender stops retrying; nothing else is one.
	for (const { status } of Object.values(CLIENT_ERRORS)) {
		expect(status).toBeGreaterThanOrEqual(400);
		expect(status).toBeLessThan(500);
	}
});

test('each answer that says "retry later" has its anchor under "Not an error of the request", with its status', () => {
	const {
		RETRY_LATER_ANSWERS,
		retryLaterDetails,
	} = require('../../dist/nodes/shared/keys/clientErrors');
	const section = docs.split(/^## Not an error of the request$/m)[1]?.split(/^## /m)[0] ?? '';
	const headings = [...section.matchAll(/^### ([a-z]+(?:-[a-z]+)*)\n+\*\*(\d{3})\b/gm)].map(
		(match) => [match[1], Number(match[2])],
	);
	expect(headings).toEqual(
		Object.entries(RETRY_LATER_ANSWERS).map(([answer, { status }]) => [answer, status]),
	);
	const answers = /** @type {Array<keyof typeof RETRY_LATER_ANSWERS>} */ (
		Object.keys(RETRY_LATER_ANSWERS)
	);
	for (const answer of answers) {
		expect(retryLaterDetails(answer).type).toBe(`${CLIENT_ERROR_DOCS}#${answer}`);
		// Not a client-error kind: no item error carries it, and it does not tell the sender to stop.
		expect(Object.keys(CLIENT_ERRORS)).not.toContain(answer);
	}
});
