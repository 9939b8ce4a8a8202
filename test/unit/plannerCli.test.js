// `npm run planner`: says where the built page is, or serves it on 127.0.0.1 with its CSP as a header too.
const { test, expect } = require('@jest/globals');
const { execFileSync } = require('node:child_process');
const { readFileSync } = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const { servePlanner } = require('../support/planner');

const script = path.join(__dirname, '..', '..', 'scripts', 'planner.mjs');
const page = path.join(__dirname, '..', '..', 'dist', 'planner', 'index.html');

test("without options it prints the page's path and file:// URL", () => {
	const out = execFileSync(process.execPath, [script], { encoding: 'utf8' });
	expect(out).toContain(`Key planner: ${page}`);
	expect(out).toContain(pathToFileURL(page).href);
});

test('--serve serves the page on 127.0.0.1 (a free port), with the same CSP as a header, nothing else', async () => {
	const { child, url } = await servePlanner();
	try {
		const response = await fetch(url);
		expect(response.status).toBe(200);
		expect(await response.text()).toBe(readFileSync(page, 'utf8'));
		expect(response.headers.get('content-security-policy')).toMatch(
			/^default-src 'none'; script-src 'sha256-/,
		);
		expect((await fetch(`${url}other.js`)).status).toBe(404);
		expect((await fetch(url, { method: 'POST', body: 'x' })).status).toBe(405);
	} finally {
		child.kill('SIGTERM');
	}
});

/** @param {string[]} args */
function runCli(args) {
	try {
		const stdout = execFileSync(process.execPath, [script, ...args], {
			encoding: 'utf8',
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		return { code: 0, stdout, stderr: '' };
	} catch (error) {
		const failed = /** @type {{ status: number, stdout: string, stderr: string }} */ (error);
		return { code: failed.status, stdout: failed.stdout, stderr: failed.stderr };
	}
}

test('--built-in writes the page workflow for these settings to standard output', () => {
	const { builtInWorkflow, DEFAULT_SETTINGS } = require('../../dist/planner/builtIn.cjs');
	const { code, stdout } = runCli([
		'--built-in',
		'--provider',
		'github',
		'--namespace=orders',
		'--schema',
		'billing',
		'--table',
		'keys',
		'--lease',
		'45',
		'--path',
		'gh',
	]);
	expect(code).toBe(0);
	const expected = builtInWorkflow(
		{
			...DEFAULT_SETTINGS,
			keySource: 'github',
			namespace: 'orders',
			schema: 'billing',
			table: 'keys',
			leaseSeconds: 45,
			fingerprint: 'none',
		},
		{ provider: 'github', webhookPath: 'gh' },
	);
	expect(JSON.parse(stdout)).toEqual(expected);
	expect(
		JSON.parse(stdout).nodes.every((/** @type {{ type: string }} */ n) =>
			n.type.startsWith('n8n-nodes-base.'),
		),
	).toBe(true);
	const simple = JSON.parse(
		runCli(['--built-in', '--provider', 'stripe', '--mode', 'simple']).stdout,
	);
	expect(simple.name).toContain('simple mode');
});

test.each([
	[['--built-in'], /--provider is required/],
	[
		['--built-in', '--provider', 'standardWebhooks'],
		/Standard Webhooks cannot be checked with built-in nodes/,
	],
	[['--built-in', '--provider', 'svix'], /Svix cannot be checked/],
	[
		['--built-in', '--provider', 'standard-webhooks'],
		/Unknown --provider standard-webhooks: use one of stripe, github, shopify, slack, /,
	],
	[['--built-in', '--provider', 'stripe', '--lease', 'soon'], /--lease needs a positive number/],
	[
		['--built-in', '--provider', 'stripe', '--mode', 'sometimes'],
		/The mode "sometimes" is neither lease nor simple/,
	],
	[
		['--built-in', '--provider', 'stripe', '--namespace', 'ord}}ers'],
		/^The namespace "ord}}ers" contains "}}", which n8n reads as the end of an expression[^\n]*\nRemove "{{" and "}}" from the namespace \(--namespace on the command line\)/,
	],
	[
		[
			'--built-in',
			'--provider',
			'stripe',
			'--key-source',
			'eventIdOrBodyHash',
			'--event-id',
			'evt_}}',
		],
		/^The Event ID "evt_}}" mixes text and expressions/,
	],
	[
		['--built-in', '--provider', 'stripe', '--path', 'a{{b'],
		/^The webhook path "a{{b" contains "{{"/,
	],
	[['--built-in', '--provider', 'stripe', '--schema', '}}'], /^The schema "}}" contains "}}"/],
	[
		['--built-in', '--provider', 'stripe', '--replay-guard', 'maybe'],
		/^The replay guard "maybe" is neither on nor off/,
	],
	[['--built-in', '--provider', 'stripe', '--colour', 'red'], /Unknown option --colour/],
	[['--built-in', '--provider', 'stripe', '--key-source', 'nope'], /Unknown --key-source nope/],
	[['--built-in', '--provider', 'stripe', '--table'], /--table needs a value/],
	[['--built-in', '--provider', 'stripe', '--key-source', 'custom'], /needs --event-id/],
	[['--built-in', '--provider', 'stripe', '--provider', 'github'], /given twice/],
])('--built-in %j fails with a clear message and exit 1', (args, message) => {
	const { code, stdout, stderr } = runCli(args);
	expect(code).toBe(1);
	expect(stdout).toBe('');
	expect(stderr).toMatch(message);
});

test('--built-in --n8n 1: Crypto v1 nodes, the secret read from the environment, no Crypto credential', () => {
	const { code, stdout } = runCli(['--built-in', '--provider', 'stripe', '--n8n', '1']);
	expect(code).toBe(0);
	const workflow = JSON.parse(stdout);
	const crypto = workflow.nodes.filter(
		(/** @type {{ type: string }} */ n) => n.type === 'n8n-nodes-base.crypto',
	);
	expect(crypto.map((/** @type {{ typeVersion: number }} */ n) => n.typeVersion)).toEqual([
		1, 1, 1,
	]);
	const hmac = crypto.find((/** @type {{ name: string }} */ n) => n.name === 'Signature HMAC');
	expect(hmac.parameters.secret).toBe('={{ $env.WEBHOOK_SIGNING_SECRET }}');
	expect(hmac.credentials).toBeUndefined();
	expect(runCli(['--built-in', '--provider', 'stripe', '--n8n', '3']).stderr).toMatch(
		/--n8n is 2 \(n8n 2.x, n8n Cloud\) or 1/,
	);
});

test('--built-in --replay-guard: GitHub keyed on the body by default, on its delivery header with off', () => {
	const keyOf = (/** @type {string[]} */ extra) =>
		JSON.parse(runCli(['--built-in', '--provider', 'github', ...extra]).stdout).nodes.find(
			(/** @type {{ name: string }} */ n) => n.name === 'Key',
		).parameters.assignments.assignments[0].value;
	expect(keyOf([])).toBe(`={{ "" + 'sha256:' + $json.bodySha256 }}`);
	expect(keyOf(['--replay-guard', 'on'])).toBe(keyOf([]));
	expect(keyOf(['--replay-guard=off'])).toContain('$json.headers["x-github-delivery"]');
});

test('an unknown provider is answered with only the providers the built-in path can express', () => {
	const { BUILT_IN_SIGNATURES } = require('../../dist/planner/builtIn.cjs');
	const expressible = BUILT_IN_SIGNATURES.filter((s) => s.supported).map(
		(s) => s.signature.provider,
	);
	const refused = BUILT_IN_SIGNATURES.filter((s) => !s.supported).map((s) => s.provider);
	expect(expressible.length).toBeGreaterThan(0);
	expect(refused).toEqual(expect.arrayContaining(['standardWebhooks', 'svix']));
	const { stderr, code } = runCli(['--built-in', '--provider', 'acme-hooks']);
	expect(code).toBe(1);
	const listed = /Unknown --provider acme-hooks: use one of ([^\n]*)\n/.exec(stderr)?.[1];
	expect(listed?.split(', ')).toEqual(expressible);
	for (const provider of refused) expect(listed).not.toContain(provider);
});
