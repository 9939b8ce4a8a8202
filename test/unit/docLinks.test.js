// The documentation links n8n shows in the node panel and the credential dialogs: each points at
// this repository (the package is not on the npm registry yet, so links to its npm page lead
// nowhere) and at a file and heading that exist, so a reader who clicks lands on the right text.
const { readdirSync, readFileSync, existsSync } = require('node:fs');
const path = require('node:path');
const { describe, expect, test } = require('@jest/globals');

const ROOT = path.join(__dirname, '..', '..');
const REPOSITORY = 'https://github.com/n8n-nodes-idempotency/n8n-nodes-idempotency';

/** GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading) {
	return heading
		.trim()
		.toLowerCase()
		.replace(/[^\p{L}\p{N}\s_-]/gu, '')
		.replace(/\s/g, '-');
}

function anchorsIn(file) {
	return readFileSync(file, 'utf8')
		.split('\n')
		.filter((line) => /^#{1,6} /.test(line))
		.map((line) => anchorOf(line.replace(/^#+ /, '')));
}

function documentationLinks() {
	const links = [];
	for (const node of readdirSync(path.join(ROOT, 'nodes'))) {
		const codex = path.join(ROOT, 'nodes', node, `${node}.node.json`);
		if (!existsSync(codex)) continue;
		for (const { url } of JSON.parse(readFileSync(codex, 'utf8')).resources.primaryDocumentation)
			links.push({ where: `nodes/${node}`, url });
	}
	for (const file of readdirSync(path.join(ROOT, 'credentials')).filter((f) => f.endsWith('.ts'))) {
		const url = /documentationUrl =\s*'([^']+)'/.exec(
			readFileSync(path.join(ROOT, 'credentials', file), 'utf8'),
		)?.[1];
		links.push({ where: `credentials/${file}`, url });
	}
	return links;
}

describe('documentation links in the node panel and credential dialogs', () => {
	test.each(documentationLinks())(
		'$where points at a file and heading of this repository',
		({ url }) => {
			expect(url).toMatch(new RegExp(`^${REPOSITORY}(/blob/main/|#)`));
			const [address, anchor] = url.split('#');
			const file = address.startsWith(`${REPOSITORY}/blob/main/`)
				? path.join(ROOT, address.slice(`${REPOSITORY}/blob/main/`.length))
				: path.join(ROOT, 'README.md');
			expect(existsSync(file)).toBe(true);
			if (anchor !== undefined) expect(anchorsIn(file)).toContain(anchor);
		},
	);
});
