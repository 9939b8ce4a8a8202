// Why not Remove Duplicates? (issue 24) n8n's own Remove Duplicates v2 ("Remove Items Processed in
// Previous Executions", scope workflow) against this package's webhook template, in one real n8n
// 2.41.1: N deliveries of one new event sent at the same moment, N = 2, 4, 16, a few fresh events
// each, and the business rows each one leaves. Remove Duplicates keeps its whole history in one row
// of n8n's database that every execution reads and rewrites, so executions that overlap can each
// find the event new (or race to insert that first row); its counts are printed, and only what is
// certain is asserted of it. This package must leave exactly one row every time.
// Also what happens at Remove Duplicates' History Size cap (n8n#38475), on a copy with a cap of 3.
// Run with `npm run test:e2e` (node --test), or alone: node --test test/e2e/remove-duplicates.e2e.mjs
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import {
	formatTable,
	runBurst,
	sendEvent,
	startStack,
	withStackLogs,
} from '../../scripts/harness/index.mjs';
import { removeDuplicatesHash, removeDuplicatesRow } from '../../bench/webhook/history.mjs';

const REPO_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const REMOVE_DUPLICATES_FILE = 'bench/workflows/remove-duplicates.json';
const removeDuplicates = JSON.parse(
	readFileSync(path.join(REPO_DIR, REMOVE_DUPLICATES_FILE), 'utf8'),
);
const CAP = 3;
const BURST_SIZES = [2, 4, 16];
const EVENTS_PER_SIZE = 3;

/** The same workflow with its own id and path (and History Size, if given). */
function copyOf(id, webhookPath, historySize) {
	const workflow = structuredClone(removeDuplicates);
	workflow.id = id;
	workflow.name = `${removeDuplicates.name} (${webhookPath})`;
	for (const node of workflow.nodes) {
		if (node.type === 'n8n-nodes-base.webhook') {
			node.parameters.path = webhookPath;
			node.webhookId = randomUUID();
		}
		if (node.type === 'n8n-nodes-base.removeDuplicates' && historySize)
			node.parameters.options = { ...node.parameters.options, historySize };
	}
	return workflow;
}
/** History Size CAP: reaches the cap in a few requests. */
const capped = copyOf('E2eRemoveDupsCap1', 'e2e-remove-duplicates-cap', CAP);
/** Gets nothing until its first burst: the deliveries that meet an empty history (no row yet). */
const untouched = copyOf('E2eRemoveDupsNew1', 'e2e-remove-duplicates-first-burst');

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;
let removeDuplicatesUrl;
let cappedUrl;
let untouchedUrl;

before(
	async () => {
		stack = await startStack({
			label: 'rmdup',
			extraWorkflows: [REMOVE_DUPLICATES_FILE, { workflow: capped }, { workflow: untouched }],
		});
		const urlOf = (id) => stack.extraWorkflows.find((w) => w.id === id)?.webhookUrl;
		removeDuplicatesUrl = urlOf(removeDuplicates.id);
		cappedUrl = urlOf(capped.id);
		untouchedUrl = urlOf(untouched.id);
		assert.ok(
			removeDuplicatesUrl && cappedUrl && untouchedUrl,
			'the Remove Duplicates workflows are published',
		);
	},
	{ timeout: 60 * 60_000 },
);

after(
	async () => {
		await stack?.stop();
	},
	{ timeout: 120_000 },
);

/** "200 processed ×1, 500 ×3": the answers of one burst, counted. */
function answersOf(responses) {
	const counts = new Map();
	for (const r of responses) {
		const label = `${r.status}${r.json?.status ? ` ${r.json.status}` : ''}`;
		counts.set(label, (counts.get(label) ?? 0) + 1);
	}
	return [...counts]
		.sort()
		.map(([label, n]) => `${label} ×${n}`)
		.join(', ');
}

const processedAnswers = (responses) =>
	responses.filter((r) => r.status === 200 && r.json?.status === 'processed').length;
const serverErrors = (responses) => responses.filter((r) => r.status >= 500).length;

test(
	`N simultaneous deliveries of one new event (N = ${BURST_SIZES.join(', ')}): this package leaves one business row every time; Remove Duplicates' rows are counted`,
	{ timeout: 240_000 },
	() =>
		withStackLogs(stack, async () => {
			const started = Date.now();
			const table = [];
			for (const size of BURST_SIZES) {
				for (let e = 1; e <= EVENTS_PER_SIZE; e++) {
					const id = `evt_overlap_${size}_${e}_${randomUUID().slice(0, 8)}`;
					const event = { id, type: 'invoice.paid' };
					// Remove Duplicates first, then the same event to the package.
					const rd = await runBurst(stack, event, {
						webhookUrl: removeDuplicatesUrl,
						workflowId: removeDuplicates.id,
						size,
						label: 'remove duplicates',
					});
					const pkg = await runBurst(stack, event, { size, label: 'package' });
					const rdRows = (await stack.businessRows(`rmdup:${id}`)).length;
					const pkgRows = (await stack.businessRows(`evt:${id}`)).length;
					table.push({
						N: size,
						event: e,
						'Remove Duplicates rows': rdRows,
						'its answers': answersOf(rd.responses),
						'package rows': pkgRows,
						'package answers': answersOf(pkg.responses),
					});

					// This package: exactly one row, one "processed", the rest duplicate or 409 in flight.
					assert.equal(pkgRows, 1, `package, N = ${size}: ${answersOf(pkg.responses)}`);
					assert.equal(pkg.processed.length, 1, answersOf(pkg.responses));
					assert.equal(pkg.processed.length + pkg.inFlight.length + pkg.duplicates.length, size);
					assert.equal(serverErrors(pkg.responses), 0);

					// Remove Duplicates: every delivery answered and recorded; at least one execution
					// found the event new, and each row is one "processed" answer (the workflow answers
					// processed exactly when its insert succeeded). How many: printed below.
					assert.ok(rd.responses.every((r) => r.status > 0));
					assert.equal(rd.executions.length, size);
					assert.ok(rdRows >= 1 && rdRows <= size, `Remove Duplicates: ${rdRows} rows`);
					assert.equal(rdRows, processedAnswers(rd.responses), answersOf(rd.responses));
				}
			}
			process.stderr.write(
				`\nN simultaneous deliveries of one new event, business rows per event (wall ${((Date.now() - started) / 1000).toFixed(1)} s):\n` +
					`${formatTable(Object.keys(table[0]), table)}\n`,
			);
			for (const size of BURST_SIZES) {
				const mine = table.filter((row) => row.N === size);
				const rows = mine.map((row) => row['Remove Duplicates rows']);
				process.stderr.write(
					`N = ${size}: Remove Duplicates ${Math.min(...rows)}–${Math.max(...rows)} rows per event; this package 1\n`,
				);
			}
		}),
);

test(
	'16 simultaneous deliveries of one new event to a Remove Duplicates workflow that has no history yet: answers and rows counted',
	{ timeout: 120_000 },
	() =>
		withStackLogs(stack, async () => {
			const id = `evt_first_burst_${randomUUID().slice(0, 8)}`;
			const burst = await runBurst(
				stack,
				{ id, type: 'invoice.paid' },
				{ webhookUrl: untouchedUrl, workflowId: untouched.id, size: 16, label: 'first burst' },
			);
			const rows = (await stack.businessRows(`rmdup:${id}`)).length;
			const failed = burst.executions.filter((e) => e.status === 'error');
			const errors = [...new Set(failed.map((e) => e.error))];
			process.stderr.write(
				`\nRemove Duplicates, first burst of 16 on an empty history: ${rows} business rows; answers ${answersOf(burst.responses)}; ` +
					`${failed.length} executions failed${errors.length ? `: ${errors.join(' | ').slice(0, 300)}` : ''}\n`,
			);
			// Certain: each row is one "processed" answer, and one of the first inserts of its row wins.
			assert.ok(rows >= 1 && rows <= 16, `${rows} rows`);
			assert.equal(rows, processedAnswers(burst.responses), answersOf(burst.responses));
		}),
);

test(
	'16 different new events at once, then each sent again one by one: what Remove Duplicates remembered, and how many repeats ran the business step again',
	{ timeout: 120_000 },
	() =>
		withStackLogs(stack, async () => {
			const tag = randomUUID().slice(0, 8);
			const ids = Array.from({ length: 16 }, (_, i) => `evt_lost_${tag}_${i}`);
			// One event first, alone, so the history row exists and no first-insert race is measured here.
			await sendEvent(removeDuplicatesUrl, { id: `evt_lost_${tag}_seed`, type: 'invoice.paid' });
			const first = await Promise.all(
				ids.map((id) => sendEvent(removeDuplicatesUrl, { id, type: 'invoice.paid' })),
			);
			// Every answer is in: each execution's Remove Duplicates step, which writes the row, is over.
			const row = await removeDuplicatesRow(stack.n8nDb, removeDuplicates.id);
			const remembered = new Set(row?.data ?? []);
			const forgotten = ids.filter((id) => !remembered.has(removeDuplicatesHash(id)));
			// The sender's retries, after every original was answered: none overlaps anything.
			const again = [];
			for (const id of ids)
				again.push(await sendEvent(removeDuplicatesUrl, { id, type: 'invoice.paid' }));
			const rows = await Promise.all(
				ids.map(async (id) => (await stack.businessRows(`rmdup:${id}`)).length),
			);
			process.stderr.write(
				`\nRemove Duplicates, 16 different events at once: first answers ${answersOf(first)}; ` +
					`${forgotten.length} of 16 missing from its history afterwards; each sent again one by one: ${answersOf(again)}; ` +
					`business rows per event ${rows.join(',')}\n`,
			);
			// Certain: every first delivery of a new event is kept (the history cannot hold it yet), and
			// a repeat runs the business step again exactly when its event was missing from the history.
			assert.equal(processedAnswers(first), 16, answersOf(first));
			assert.equal(processedAnswers(again), forgotten.length, answersOf(again));
		}),
);

test(
	`Remove Duplicates at its History Size cap (${CAP} here, 10,000 by default; n8n#38475): what a new event and a repeat get once it is full`,
	{ timeout: 120_000 },
	() =>
		withStackLogs(stack, async () => {
			const tag = randomUUID().slice(0, 8);
			const send = async (id) => {
				const answer = await sendEvent(cappedUrl, { id, type: 'invoice.paid' });
				const execution = await stack.executions.waitForRequest(capped.id, answer.requestId);
				return { id, answer, execution };
			};
			const steps = [];
			for (let i = 1; i <= CAP; i++) steps.push(await send(`evt_cap_${tag}_${i}`));
			steps.push(await send(`evt_cap_${tag}_${CAP + 1}`));
			steps.push(await send(`evt_cap_${tag}_${CAP + 2}`));
			steps.push(await send(`evt_cap_${tag}_1`));
			const table = steps.map(({ id, answer, execution }, i) => ({
				delivery: i + 1,
				event: id.replace(`evt_cap_${tag}_`, '#'),
				answer: `${answer.status} ${answer.text.slice(0, 60)}`,
				execution: execution.status,
				error: execution.error ?? '',
			}));
			process.stderr.write(
				`\nRemove Duplicates with History Size ${CAP}: ${CAP} new events, then 2 more new ones, then #1 again:\n` +
					`${formatTable(Object.keys(table[0]), table)}\n`,
			);
			// Certain: below the cap it keeps every new event.
			for (const { answer } of steps.slice(0, CAP))
				assert.deepEqual([answer.status, answer.json?.status], [200, 'processed']);
		}),
);
