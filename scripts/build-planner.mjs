// Builds the key planner, dist/planner/index.html: one self-contained file (script and style inline)
// that opens from file:// or any static host. The script is planner/page/main.ts bundled by esbuild with
// the nodes' own key, SQL and signature modules (nodes/shared/keys, nodes/shared/store/sql.ts,
// nodes/shared/webhook), so the page cannot drift from what the nodes do. The signature code imports
// Node.js's crypto and uses its Buffer: planner/node/ provides both for the browser (resolved and
// injected here), so that code is bundled as the node runs it. The Content-Security-Policy allows
// only this script and this style (by their SHA-256) and nothing else: no request can leave the page.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rm, rmdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist/planner/index.html');

// esbuild does not type-check: the page's code is checked against the nodes' types first.
execFileSync(
	process.execPath,
	[join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'planner/tsconfig.json')],
	{
		stdio: 'inherit',
	},
);

const { version } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
const bundle = await build({
	entryPoints: [join(root, 'planner/page/main.ts')],
	bundle: true,
	write: false,
	platform: 'browser',
	format: 'iife',
	target: ['chrome100', 'firefox100', 'safari15'],
	minify: true,
	legalComments: 'none',
	logLevel: 'warning',
	// verifySignature.ts's `import { createHmac, timingSafeEqual } from 'crypto'` and its `Buffer`.
	alias: { crypto: join(root, 'planner/node/crypto.ts') },
	inject: [join(root, 'planner/node/buffer.ts')],
});
// "</script" inside the script would end it early; esbuild escapes it in strings, this makes sure.
const script = bundle.outputFiles[0].text.replace(/<\/(script)/gi, '<\\/$1').trimEnd();
const style = (await readFile(join(root, 'planner/page/style.css'), 'utf8')).trim();

const sha256 = (text) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
const csp = [
	"default-src 'none'",
	`script-src ${sha256(script)}`,
	`style-src ${sha256(style)}`,
	"base-uri 'none'",
	"form-action 'none'",
].join('; ');

const page = (await readFile(join(root, 'planner/page/page.html'), 'utf8'))
	.replace('__CSP__', csp)
	.replace('__VERSION__', version)
	// Functions as replacements: `$` in the script or style must stay as it is.
	.replace('__STYLE__', () => style)
	.replace('__SCRIPT__', () => script);

await mkdir(dirname(out), { recursive: true });
await writeFile(out, page);

// The built-in-nodes workflow for Node.js too: `npm run planner -- --built-in` (scripts/planner.mjs)
// and the tests build it with the same code as the page's button.
await build({
	entryPoints: [join(root, 'planner/builtIn/builtIn.ts')],
	bundle: true,
	outfile: join(root, 'dist/planner/builtIn.cjs'),
	platform: 'node',
	format: 'cjs',
	target: 'node20',
	legalComments: 'none',
	logLevel: 'warning',
});

// n8n-node build copies every .png and .svg of the repository into dist/ (for node icons): the README's
// screenshot of this page and the browser tests' screenshots are not part of the package.
await rm(join(root, 'dist/test-output'), { recursive: true, force: true });
await rm(join(root, 'dist/docs/planner.png'), { force: true });
await rm(join(root, 'dist/docs/images'), { recursive: true, force: true });
if ((await readdir(join(root, 'dist/docs')).catch(() => ['?'])).length === 0)
	await rmdir(join(root, 'dist/docs'));
console.log(`Key planner: ${out} (${Math.round(page.length / 1024)} KB)`);
