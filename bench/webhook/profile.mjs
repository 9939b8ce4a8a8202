// CPU profile (--profile): n8n's main process sampled by V8, its samples attributed to the load
// windows of each variant, by module and by function, and the tables that show it.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { REPO_DIR } from './config.mjs';
import { fmt } from './report.mjs';

// The installed package (…/.n8n/nodes/node_modules/n8n-nodes-idempotency/dist/…). Not just
// "/n8n-nodes-idempotency/": n8n itself is cached under ~/.cache/n8n-nodes-idempotency/.
const PACKAGE_URL = /\/node_modules\/n8n-nodes-idempotency\//;

function moduleOf(url, functionName) {
	if (!url) return functionName.startsWith('(') ? functionName : '(native / builtin)';
	if (PACKAGE_URL.test(url)) return 'n8n-nodes-idempotency (this package)';
	if (url.startsWith('node:')) return 'node (internals)';
	const at = url.lastIndexOf('/node_modules/');
	if (at === -1) return 'other';
	const rest = url.slice(at + '/node_modules/'.length).split('/');
	return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
}

function analyseProfile(file, windows) {
	const profile = JSON.parse(readFileSync(file, 'utf8'));
	const byId = new Map(profile.nodes.map((node) => [node.id, node]));
	const parent = new Map();
	for (const node of profile.nodes)
		for (const child of node.children ?? []) parent.set(child, node.id);
	const insidePackage = new Map();
	const isPackage = (id) => {
		if (insidePackage.has(id)) return insidePackage.get(id);
		const node = byId.get(id);
		const own = PACKAGE_URL.test(node.callFrame.url);
		const result = own || (parent.has(id) ? isPackage(parent.get(id)) : false);
		insidePackage.set(id, result);
		return result;
	};
	const keyOf = (node) => {
		const { functionName, url, lineNumber } = node.callFrame;
		return `${functionName || '(anonymous)'} ${url ? `${url.replace(/^.*\/node_modules\//, '')}:${lineNumber + 1}` : ''}`.trim();
	};
	// Every distinct function on a node's stack (itself and its callers), for inclusive time.
	const stackKeys = new Map();
	const keysOnStack = (id) => {
		let keys = stackKeys.get(id);
		if (keys) return keys;
		const own = keyOf(byId.get(id));
		const above = parent.has(id) ? keysOnStack(parent.get(id)) : [];
		keys = above.includes(own) ? above : [...above, own];
		stackKeys.set(id, keys);
		return keys;
	};
	const stats = windows.map(emptyProfileStats);
	let t = profile.startTime;
	for (let i = 0; i < profile.samples.length; i++) {
		t += profile.timeDeltas[i];
		// A sample's time is the gap to the next sample.
		const dt = (profile.timeDeltas[i + 1] ?? 0) / 1000;
		const w = windows.findIndex((win) => t >= win.window[0] && t < win.window[1]);
		if (w === -1) continue;
		const node = byId.get(profile.samples[i]);
		const { functionName, url } = node.callFrame;
		if (functionName === '(idle)') continue;
		const s = stats[w];
		s.activeMs += dt;
		if (functionName === '(garbage collector)') s.gcMs += dt;
		if (isPackage(node.id)) s.packageMs += dt;
		const module = moduleOf(url, functionName);
		addTo(s.modules, module, dt);
		addTo(s.functions, keyOf(node), dt);
		for (const key of keysOnStack(node.id)) addTo(s.inclusive, key, dt);
	}
	return { startTime: profile.startTime, endTime: profile.endTime, stats };
}

/** Milliseconds of samples in one load window: all, in the package, in GC, and per module / function. */
function emptyProfileStats() {
	return {
		activeMs: 0,
		packageMs: 0,
		gcMs: 0,
		modules: new Map(),
		functions: new Map(),
		inclusive: new Map(),
	};
}

function addTo(totals, key, ms) {
	totals.set(key, (totals.get(key) ?? 0) + ms);
}

function mergeProfileStats(entries) {
	const merged = { requests: 0, ...emptyProfileStats() };
	for (const { stats, requests } of entries) {
		merged.requests += requests;
		merged.activeMs += stats.activeMs;
		merged.packageMs += stats.packageMs;
		merged.gcMs += stats.gcMs;
		for (const [k, v] of stats.modules) addTo(merged.modules, k, v);
		for (const [k, v] of stats.functions) addTo(merged.functions, k, v);
		for (const [k, v] of stats.inclusive) addTo(merged.inclusive, k, v);
	}
	return merged;
}

/**
 * Attributes the samples of n8n's main-process profile to the variants' load windows: appends the
 * tables to `out` and returns the summary saved with the results (undefined without a profile file).
 */
export function summariseProfile(config, profileDir, serverPid, windows, beforeStack, out) {
	const file = readdirSync(profileDir).find(
		(name) => name.endsWith('.cpuprofile') && name.split('.').includes(String(serverPid)),
	);
	if (!file) {
		out.push(
			`\nprofile: no .cpuprofile of pid ${serverPid} in ${profileDir} (n8n did not exit cleanly?)`,
		);
		return undefined;
	}
	const analysed = analyseProfile(path.join(profileDir, file), windows);
	// Both clocks are CLOCK_MONOTONIC: the profile must start after this process started the stack.
	const aligned = analysed.startTime >= beforeStack && analysed.startTime <= windows[0]?.window[0];
	out.push(
		`\n## CPU profile of n8n's main process (${path.relative(REPO_DIR, path.join(profileDir, file))})`,
	);
	if (!aligned)
		out.push(
			`WARNING: the profile's clock does not line up with the load windows (start ${analysed.startTime} µs, stack started at ${beforeStack} µs)`,
		);
	const perVariant = {};
	for (const v of config.variants) {
		const entries = windows
			.map((w, i) => ({ ...w, stats: analysed.stats[i] }))
			.filter((w) => w.variant === v);
		perVariant[v] = mergeProfileStats(entries);
	}
	const modules = new Set();
	for (const v of config.variants) for (const [m] of perVariant[v].modules) modules.add(m);
	const perReq = (v, ms) => ms / perVariant[v].requests;
	// The differences shown: the package against the floor (its whole idempotency) and against the
	// simple-mode template (what lease mode adds: Complete Key, and the IF node for duplicates).
	const diffPairs = [
		['package', 'floor'],
		['package', 'floorLight'],
		['package', 'packageSimple'],
	].filter(([a, b]) => config.variants.includes(a) && config.variants.includes(b));
	out.push(
		"\nSampled CPU of n8n's main process per request, by module (self time), all load windows of each variant:\n",
	);
	out.push(
		`| module | ${config.variants.join(' | ')} |${diffPairs.map(([a, b]) => ` ${a} − ${b} |`).join('')}`,
	);
	out.push(
		`| --- |${config.variants.map(() => ' ---: |').join('')}${diffPairs.map(() => ' ---: |').join('')}`,
	);
	const rowsOut = [...modules]
		.map((m) => ({
			m,
			values: config.variants.map((v) => perReq(v, perVariant[v].modules.get(m) ?? 0)),
		}))
		.sort((a, b) => Math.max(...b.values) - Math.max(...a.values))
		.filter((r) => Math.max(...r.values) >= 0.05);
	const diff = (r) =>
		diffPairs
			.map(
				([a, b]) =>
					` ${fmt(r.values[config.variants.indexOf(a)] - r.values[config.variants.indexOf(b)], 2)} |`,
			)
			.join('');
	out.push(
		`| **total (non-idle)** | ${config.variants.map((v) => fmt(perReq(v, perVariant[v].activeMs), 2)).join(' | ')} |${diff({ values: config.variants.map((v) => perReq(v, perVariant[v].activeMs)) })}`,
	);
	out.push(
		`| of which inside this package's code (inclusive) | ${config.variants.map((v) => fmt(perReq(v, perVariant[v].packageMs), 2)).join(' | ')} |${diff({ values: config.variants.map((v) => perReq(v, perVariant[v].packageMs)) })}`,
	);
	for (const r of rowsOut)
		out.push(`| ${r.m} | ${r.values.map((x) => fmt(x, 2)).join(' | ')} |${diff(r)}`);
	const summary = { file: path.join(profileDir, file), aligned, variants: {} };
	for (const v of config.variants) {
		const top = [...perVariant[v].functions].sort((a, b) => b[1] - a[1]).slice(0, 15);
		summary.variants[v] = {
			requests: perVariant[v].requests,
			cpuMsPerRequest: perReq(v, perVariant[v].activeMs),
			packageMsPerRequest: perReq(v, perVariant[v].packageMs),
			gcMsPerRequest: perReq(v, perVariant[v].gcMs),
			modulesMsPerRequest: Object.fromEntries(
				[...perVariant[v].modules].map(([m, ms]) => [m, perReq(v, ms)]).sort((a, b) => b[1] - a[1]),
			),
			topFunctionsMsPerRequest: top.map(([fn, ms]) => [fn, perReq(v, ms)]),
		};
	}
	for (const v of config.variants.filter((name) =>
		['package', 'packageSimple', 'floor', 'floorLight'].includes(name),
	)) {
		out.push(`\nTop functions (self ms/request), ${v}:`);
		for (const [fn, ms] of summary.variants[v].topFunctionsMsPerRequest.slice(0, 12))
			out.push(`  ${fmt(ms, 2).padStart(6)}  ${fn}`);
	}
	for (const [a, b] of diffPairs) {
		// Where the two differ: functions by inclusive time (itself and what it calls, on the
		// synchronous stack), largest difference first.
		const keys = new Set([...perVariant[a].inclusive.keys(), ...perVariant[b].inclusive.keys()]);
		const rows = [...keys]
			.map((key) => {
				const mine = perReq(a, perVariant[a].inclusive.get(key) ?? 0);
				const other = perReq(b, perVariant[b].inclusive.get(key) ?? 0);
				return { key, [a]: mine, [b]: other, diff: mine - other };
			})
			.filter((r) => !/^\((root|program|garbage collector)\)/.test(r.key))
			.sort((x, y) => Math.abs(y.diff) - Math.abs(x.diff))
			.slice(0, 30);
		// The name the results files have used for package − floor.
		summary[b === 'floor' ? 'inclusiveDiffPackageMinusFloor' : `inclusiveDiff_${a}_minus_${b}`] =
			rows;
		out.push(
			`\nLargest differences ${a} − ${b}, inclusive ms/request (function with everything it calls synchronously):`,
		);
		out.push(`| function | ${b} | ${a} | ${a} − ${b} |`);
		out.push('| --- | ---: | ---: | ---: |');
		for (const r of rows)
			out.push(
				`| ${r.key.replace(/\|/g, '\\|')} | ${fmt(r[b], 2)} | ${fmt(r[a], 2)} | ${fmt(r.diff, 2)} |`,
			);
	}
	return summary;
}
