// Every command docs/cloud.md and README's "n8n Cloud" section print in ```sh/```bash blocks runs
// here exactly as printed (lines joined at a trailing backslash), in a temp copy of the repository's
// scripts and package.json (dist and node_modules linked), and writes what it promises: a file after
// `>` holds a workflow's JSON (nodes and connections); `npm run cloud-workflows` writes
// workflows/cloud/<provider>.json. Skipped, because they need the network or a real n8n/Docker/
// sender: lines starting with git clone, docker, stripe, curl, npm install/ci/pack.
const { test, expect } = require('@jest/globals');
const { execFileSync } = require('node:child_process');
const { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } = require('node:fs');
const { tmpdir } = require('node:os');
const path = require('node:path');

const root = path.join(__dirname, '..', '..');
const SKIPPED = /^(git clone|docker|stripe|curl|npm (install|ci|pack))\b/;

/** The ```sh/```bash blocks' commands of a Markdown text, continuation lines joined. */
function commandsOf(markdown) {
	const commands = [];
	for (const [, body] of markdown.matchAll(/^```(?:sh|bash)\n([\s\S]*?)^```/gm))
		for (const command of body.replace(/\\\n\s*/g, '').split('\n'))
			if (command.trim() !== '' && !command.trim().startsWith('#')) commands.push(command.trim());
	return commands;
}

function readmeCloudSection() {
	const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
	const start = readme.indexOf('## n8n Cloud\n');
	return readme.slice(start, readme.indexOf('\n## ', start + 1));
}

const printed = [
	...commandsOf(readFileSync(path.join(root, 'docs', 'cloud.md'), 'utf8')),
	...commandsOf(readmeCloudSection()),
];
const runnable = printed.filter((command) => !SKIPPED.test(command));

function expectWorkflow(file) {
	const workflow = JSON.parse(readFileSync(file, 'utf8'));
	expect(Array.isArray(workflow.nodes)).toBe(true);
	expect(workflow.nodes.length).toBeGreaterThan(0);
	expect(typeof workflow.connections).toBe('object');
	expect(workflow.nodes.every((n) => n.type.startsWith('n8n-nodes-base.'))).toBe(true);
}

test('the docs print commands, and the rule selects them', () => {
	expect(runnable.length).toBeGreaterThanOrEqual(3);
	expect(runnable.some((c) => c.includes('--built-in') && c.includes('>'))).toBe(true);
});

test.each(runnable)('as printed: %s', (command) => {
	const dir = mkdtempSync(path.join(tmpdir(), 'doc-commands-'));
	try {
		cpSync(path.join(root, 'scripts'), path.join(dir, 'scripts'), { recursive: true });
		cpSync(path.join(root, 'package.json'), path.join(dir, 'package.json'));
		// npm run cloud-workflows also rewrites docs/cloud.md's provider table.
		cpSync(path.join(root, 'docs'), path.join(dir, 'docs'), { recursive: true });
		symlinkSync(path.join(root, 'dist'), path.join(dir, 'dist'));
		symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
		execFileSync('bash', ['-c', `set -e -o pipefail; ${command}`], {
			cwd: dir,
			stdio: ['ignore', 'pipe', 'pipe'],
			timeout: 60_000,
		});
		const redirect = /\s>\s*(\S+)\s*$/.exec(command);
		if (redirect) expectWorkflow(path.join(dir, redirect[1]));
		else if (/\bcloud-workflows\b/.test(command)) {
			const files = readdirSync(path.join(dir, 'workflows', 'cloud')).filter((f) =>
				f.endsWith('.json'),
			);
			expect(files).toContain('stripe.json');
			for (const file of files) expectWorkflow(path.join(dir, 'workflows', 'cloud', file));
			// And the answer-first ones (workflows/cloud/answer-first/).
			const answerFirst = readdirSync(path.join(dir, 'workflows', 'cloud', 'answer-first'));
			expect(answerFirst).toContain('slack.json');
			for (const file of answerFirst)
				expectWorkflow(path.join(dir, 'workflows', 'cloud', 'answer-first', file));
			expect(readFileSync(path.join(dir, 'docs', 'cloud.md'), 'utf8')).toBe(
				readFileSync(path.join(root, 'docs', 'cloud.md'), 'utf8'),
			);
		} else throw new Error(`No rule says what "${command}" promises: add one to this test`);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
});
