// --history: what deduplication costs as its history grows (issue 24). n8n's Remove Duplicates
// keeps every remembered value in ONE row of n8n's own database (processed_data: workflowId,
// context, value = { mode: 'entries', data: [md5 base64 of each value, oldest first] }) and reads
// and rewrites that whole row on every execution; this package keeps one row per key in its own
// table behind a primary key. Variants, each a copy of a workflow with its own id, path and store:
//   rdHistory0/1k/10k    bench/workflows/remove-duplicates.json with History Size raised to 100,000
//                        (at its default of 10,000 the node refuses every new value once 10,000
//                        are stored: n8n#38475), its row holding 0, 1,000 or 10,000 values at the
//                        start of every measured load (a load adds its own requests' values)
//   pkgHistory0/1k/1m    the webhook template, its key table holding 0, 1,000 or 1,000,000 keys
//                        besides the run's own (a few hundred)
// How the stores are filled, honestly:
// - Remove Duplicates: first a proof. Its row is deleted, PROOF_EVENTS events are sent one after
//   another through the workflow, and the row n8n wrote must equal, value for value and in order,
//   rowOf(the ids sent) computed here (md5 base64 of each id, as n8n's DeduplicationHelper
//   hashes). Only then is the row written directly, before each of its measured loads (outside the
//   measured window): deleted for 0, else rowOf(N history ids no load ever sends).
// - The package: after the warm-up, one key row the node itself wrote is copied N times with keys
//   'evt:hist.<n>' (and first_seen spread back over N seconds), every other column as the node set
//   it; then ANALYZE, as autovacuum would have done for a table that grew to that size.
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';

import { record } from './checks.mjs';
import { REPO_DIR } from './config.mjs';
import { waitForIdle } from './idle.mjs';
import { eventBody, post } from './load.mjs';

const REMOVE_DUPLICATES_FILE = 'bench/workflows/remove-duplicates.json';
const RAISED_HISTORY_SIZE = 100_000;
const PROOF_EVENTS = 5;

/** The value Remove Duplicates stores for a dedupe value: md5 of its string, base64 (n8n's createValueHash). */
export const removeDuplicatesHash = (value) =>
	createHash('md5').update(String(value)).digest('base64');

/** The processed_data value n8n writes for these dedupe values, received in this order. */
export const rowOf = (values) => ({ mode: 'entries', data: values.map(removeDuplicatesHash) });

/** Remove Duplicates' one history row of a workflow (scope workflow: context ''), or undefined. */
export async function removeDuplicatesRow(n8nDb, workflowId) {
	const { rows } = await n8nDb.query(
		`SELECT value FROM processed_data WHERE "workflowId" = $1 AND context = ''`,
		[workflowId],
	);
	if (!rows.length) return undefined;
	const { value } = rows[0];
	return typeof value === 'string' ? JSON.parse(value) : value;
}

/** Writes that row as n8n's DeduplicationHelper would after it had seen `values` in this order. */
async function writeRemoveDuplicatesRow(n8nDb, workflowId, values) {
	if (!values.length) {
		await n8nDb.query(`DELETE FROM processed_data WHERE "workflowId" = $1 AND context = ''`, [
			workflowId,
		]);
		return;
	}
	await n8nDb.query(
		`INSERT INTO processed_data ("workflowId", context, value, "createdAt", "updatedAt")
		 VALUES ($1, '', $2, now(), now())
		 ON CONFLICT (context, "workflowId") DO UPDATE SET value = EXCLUDED.value, "updatedAt" = now()`,
		[workflowId, JSON.stringify(rowOf(values))],
	);
}

const historyIds = (level) =>
	Array.from({ length: level }, (_, i) => `hist.${String(i).padStart(7, '0')}`);

/**
 * Sends PROOF_EVENTS new events one by one to an emptied Remove Duplicates workflow and checks that
 * the row n8n wrote is exactly rowOf(their ids): the proof that writing rowOf(ids) directly leaves
 * n8n's store as sending those ids would have. Throws otherwise.
 */
async function proveRowFormat(stack, run, variantName, url) {
	const variant = run.variants[variantName];
	await writeRemoveDuplicatesRow(stack.n8nDb, variant.workflowId, []);
	const ids = Array.from({ length: PROOF_EVENTS }, (_, i) => `proof.${randomUUID()}.${i}`);
	const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
	for (const [i, id] of ids.entries())
		record(run, variantName, id, await post(url, eventBody(id, i), agent));
	agent.destroy();
	await waitForIdle(stack, run);
	const written = await removeDuplicatesRow(stack.n8nDb, variant.workflowId);
	const expected = rowOf(ids);
	if (JSON.stringify(written) !== JSON.stringify(expected))
		throw new Error(
			`${variantName}: n8n's Remove Duplicates row is not what rowOf() computes, so it cannot be pre-filled directly:\n` +
				`n8n wrote ${JSON.stringify(written)?.slice(0, 400)}\nexpected  ${JSON.stringify(expected).slice(0, 400)}`,
		);
	process.stderr.write(
		`history: ${variantName}: the row n8n wrote for ${PROOF_EVENTS} events sent one by one equals rowOf(ids); pre-filling it directly\n`,
	);
}

/** Copies one key row the node wrote `count` times under new keys: a table as the node fills it. */
async function prefillKeyTable(keysDb, table, count) {
	const { rows: columns } = await keysDb.query(
		`SELECT column_name FROM information_schema.columns
		 WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position`,
		[table],
	);
	const names = columns.map((c) => c.column_name);
	if (!names.includes('key')) throw new Error(`${table} has no key column`);
	const { rows: source } = await keysDb.query(
		`SELECT key FROM ${table} WHERE key LIKE 'evt:%' ORDER BY first_seen LIMIT 1`,
	);
	if (!source.length) throw new Error(`${table}: no key row written by the node to copy`);
	const quoted = names.map((n) => `"${n.replaceAll('"', '""')}"`);
	const values = names.map((n, i) => {
		if (n === 'key') return `'evt:hist.' || lpad(g::text, 7, '0')`;
		if (n === 'first_seen') return `src.first_seen - g * interval '1 second'`;
		return `src.${quoted[i]}`;
	});
	const started = Date.now();
	await keysDb.query(
		`INSERT INTO ${table} (${quoted.join(', ')})
		 SELECT ${values.join(', ')} FROM generate_series(1, $1::int) AS g
		 CROSS JOIN (SELECT * FROM ${table} WHERE key = $2) AS src`,
		[count, source[0].key],
	);
	await keysDb.query(`ANALYZE ${table}`);
	process.stderr.write(
		`history: ${table}: ${count} key rows copied from ${source[0].key} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
	);
}

/**
 * The variants of --history (see the top of this file), their workflows written to `generatedDir`.
 * `templateFile` is the webhook template, `businessKey` as the webhook variants'.
 */
export function historyVariants(generatedDir, templateFile) {
	const variants = {};
	const removeDuplicates = JSON.parse(
		readFileSync(path.join(REPO_DIR, REMOVE_DUPLICATES_FILE), 'utf8'),
	);
	for (const { suffix, level } of [
		{ suffix: '0', level: 0 },
		{ suffix: '1k', level: 1_000 },
		{ suffix: '10k', level: 10_000 },
	]) {
		const workflow = structuredClone(removeDuplicates);
		workflow.id = `BenchRmDupHist${suffix.padStart(3, '0')}`;
		workflow.name = `${removeDuplicates.name} (history ${level})`;
		for (const node of workflow.nodes) {
			if (node.type === 'n8n-nodes-base.webhook') {
				node.parameters.path = `bench-remove-duplicates-history-${suffix}`;
				node.webhookId = randomUUID();
			}
			if (node.type === 'n8n-nodes-base.removeDuplicates')
				node.parameters.options = {
					...node.parameters.options,
					historySize: RAISED_HISTORY_SIZE,
				};
		}
		const file = path.join(generatedDir, `remove-duplicates-history-${suffix}.json`);
		writeFileSync(file, JSON.stringify(workflow, null, 2));
		const name = `rdHistory${suffix}`;
		const ids = historyIds(level);
		variants[name] = {
			file,
			tag: `rh${suffix}`,
			dedupe: true,
			raceProne: true,
			keyedByBody: false,
			businessKey: (id) => `rmdup:${id}`,
			historyLevel: level,
			prepare: (stack, run, url) => proveRowFormat(stack, run, name, url),
			// Before each measured load: the row back to exactly `level` values.
			beforeLoad: (stack) => writeRemoveDuplicatesRow(stack.n8nDb, variants[name].workflowId, ids),
		};
	}

	const template = JSON.parse(readFileSync(path.join(REPO_DIR, templateFile), 'utf8'));
	for (const { suffix, level } of [
		{ suffix: '0', level: 0 },
		{ suffix: '1k', level: 1_000 },
		{ suffix: '1m', level: 1_000_000 },
	]) {
		const table = `processed_events_hist${suffix}`;
		const workflow = structuredClone(template);
		workflow.id = `IdemWebhookHist${suffix.padStart(2, '0')}`;
		workflow.name = `${template.name} (history ${level})`;
		for (const node of workflow.nodes) {
			if (node.type === 'n8n-nodes-base.webhook') {
				node.parameters.path = `idempotent-webhook-history-${suffix}`;
				node.webhookId = randomUUID();
			}
			if (node.type.startsWith('n8n-nodes-idempotency.') && 'table' in node.parameters)
				node.parameters.table = table;
		}
		const file = path.join(generatedDir, `template-history-${suffix}.json`);
		writeFileSync(file, JSON.stringify(workflow, null, 2));
		variants[`pkgHistory${suffix}`] = {
			file,
			tag: `ph${suffix}`,
			dedupe: true,
			inFlight409: true,
			keyTable: table,
			businessKey: (id) => `evt:${id}`,
			historyLevel: level,
			/** rows in keyTable that no request carried (the checks count them in) */
			prefilledKeys: level,
			prepare: level ? (stack) => prefillKeyTable(stack.keysDb, table, level) : undefined,
		};
	}
	return variants;
}
