// `npm run cloud-workflows` (after npm run build): writes workflows/cloud/<provider>.json, the
// built-in-nodes workflow with the default settings for every provider the built-in path can
// express, made by the planner's own code (dist/planner/builtIn.cjs) so n8n Cloud users can import
// one from its raw URL without a clone. test/unit/cloudWorkflows.test.js fails if they drift.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtInFromArgs, expressibleProviders } from './planner/builtInCli.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bundle = join(root, 'dist', 'planner', 'builtIn.cjs');

/**
 * Each prebuilt workflow's file name and JSON text, as the CLI writes it.
 * @param {string} bundlePath dist/planner/builtIn.cjs
 * @param {(path: string) => any} load
 * @returns {{ file: string, json: string }[]}
 */
export function cloudWorkflows(bundlePath, load) {
	return expressibleProviders(load(bundlePath)).map((provider) => {
		const result = builtInFromArgs(['--built-in', '--provider', provider], bundlePath);
		if (result.ok === false) throw new Error(`${provider}: ${result.message}`);
		return { file: `${provider}.json`, json: result.json };
	});
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
	const { createRequire } = await import('node:module');
	const outDir = join(root, 'workflows', 'cloud');
	mkdirSync(outDir, { recursive: true });
	for (const { file, json } of cloudWorkflows(bundle, createRequire(import.meta.url))) {
		writeFileSync(join(outDir, file), json);
		console.log(`wrote workflows/cloud/${file}`);
	}
}
