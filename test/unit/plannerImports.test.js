// The key planner bundles the nodes' own rules for the browser; it may reach only modules without
// n8n's types or Node.js APIs (CONTRIBUTING.md, Layout). Follows every relative import from planner/.
const { test, expect } = require('@jest/globals');
const { existsSync, readFileSync, readdirSync } = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..', '..');
const IMPORT = /^\s*(?:import|export)\b[^;]*?from\s*['"]([^'"]+)['"]/gm;

function resolve(from, specifier) {
	const base = path.resolve(path.dirname(from), specifier);
	return [`${base}.ts`, path.join(base, 'index.ts'), base].find(
		(file) => existsSync(file) && file.endsWith('.ts'),
	);
}

function reachedFromPlanner() {
	// Every room of planner/ (builtIn/, signature/, page/, …) but node/, the browser's stand-ins for
	// Node.js's crypto and Buffer.
	const pending = readdirSync(path.join(root, 'planner'), { recursive: true, encoding: 'utf8' })
		.filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))
		.filter((name) => !name.startsWith(`node${path.sep}`))
		.map((name) => path.join(root, 'planner', name));
	expect(pending.length).toBeGreaterThan(30);
	const reached = new Map();
	while (pending.length > 0) {
		const file = pending.pop();
		if (reached.has(file)) continue;
		const packages = [];
		for (const [, specifier] of readFileSync(file, 'utf8').matchAll(IMPORT)) {
			if (!specifier.startsWith('.')) packages.push(specifier);
			else {
				const target = resolve(file, specifier);
				if (target !== undefined) pending.push(target);
			}
		}
		reached.set(file, packages);
	}
	return reached;
}

test('the planner reaches node modules, and none of them imports n8n or a Node.js API', () => {
	const reached = reachedFromPlanner();
	const nodeModules = [...reached.keys()].filter((file) =>
		file.includes(`${path.sep}nodes${path.sep}`),
	);
	expect(nodeModules.length).toBeGreaterThan(10);
	const offenders = [...reached]
		.filter(([file]) => file.includes(`${path.sep}nodes${path.sep}`))
		.flatMap(([file, packages]) =>
			packages.map((name) => `${path.relative(root, file)} imports ${name}`),
		);
	// The signature code's `crypto` is the one Node.js import, and the planner's build points it at
	// planner/node/crypto.ts (scripts/build-planner.mjs).
	expect(offenders.filter((line) => !line.endsWith(' imports crypto'))).toEqual([]);
});
