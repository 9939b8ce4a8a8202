// Fault suite, bad input through the real server and the unchanged template: odd content types,
// empty and huge bodies, ids of every wrong kind, and (through a copy of the template whose only
// change is the table, on its own webhook path) key tables someone created with other columns. Each
// case's HTTP answer, the nodes n8n recorded, and what landed in processed_events / business_log
// are compared with the matrix in docs/faults.md. Run with `npm run test:faults`.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { BUSINESS_STEP, sendEvent, startStack } from '../../scripts/harness/index.mjs';
import { sha256Hex } from '../support/webhookItems.js';
import { assertMatchesDoc, cell, healthz, nodesCell, REPO_DIR, withLogs } from './support.mjs';

const ALT_TABLE = 'processed_events_alt';
const ALT_PATH = 'idempotent-webhook-alt';
const ALT_WORKFLOW_ID = 'IdemWebhookAltTbl';
const MB = 1024 * 1024;
const REPO_URL = 'https://github.com/n8n-nodes-idempotency/n8n-nodes-idempotency';

/** @type {Awaited<ReturnType<typeof startStack>>} */
let stack;
let altUrl;
const matrix = [];

/** The template with only its table changed (Reserve, Complete and Release), on a webhook path of its own so both can be published. */
function altTableCopy() {
	const template = JSON.parse(
		readFileSync(path.join(REPO_DIR, 'workflows', 'idempotent-webhook.json'), 'utf8'),
	);
	const copy = structuredClone(template);
	copy.id = ALT_WORKFLOW_ID;
	copy.name = `${template.name} (table ${ALT_TABLE})`;
	for (const node of copy.nodes) {
		if (
			['idempotencyReserve', 'idempotencyComplete', 'idempotencyRelease'].some(
				(name) => node.type === `n8n-nodes-idempotency.${name}`,
			)
		) {
			node.parameters.table = ALT_TABLE;
		}
		if (node.type === 'n8n-nodes-base.webhook') {
			node.parameters.path = ALT_PATH;
			node.webhookId = randomUUID();
		}
	}
	// Everything else as in the template.
	assert.deepEqual(
		copy.nodes.map((n) => [n.name, n.type]),
		template.nodes.map((n) => [n.name, n.type]),
	);
	assert.deepEqual(copy.connections, template.connections);
	return copy;
}

before(
	async () => {
		stack = await startStack({
			label: 'faults_input',
			extraWorkflows: [{ workflow: altTableCopy() }],
		});
		altUrl = stack.extraWorkflows.find((w) => w.id === ALT_WORKFLOW_ID)?.webhookUrl;
		assert.ok(altUrl, 'the table copy is published');
	},
	{ timeout: 30 * 60_000 },
);

after(async () => await stack?.stop(), { timeout: 180_000 });

async function counts(table = 'processed_events') {
	const exists = await stack.keysDb.query(`SELECT to_regclass($1) IS NOT NULL AS ok`, [
		`public.${table}`,
	]);
	const keys = exists.rows[0].ok
		? (await stack.keysDb.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n
		: 0;
	const business = (await stack.keysDb.query('SELECT count(*)::int AS n FROM business_log')).rows[0]
		.n;
	return { keys, business };
}

/**
 * Sends one case, reads what n8n recorded and what changed in the tables, adds the matrix row.
 * `expect` holds the checks that do not depend on the doc: { status, keys (new rows), business (new rows), key? }
 */
async function runCase(
	id,
	description,
	{ body, contentType, url = stack.webhookUrl, table = 'processed_events' },
	expect,
) {
	const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
	const bodyKey = `sha256:${sha256Hex(bytes)}`;
	const countsBefore = await counts(table);
	const response = await sendEvent(url, bytes, { contentType, timeoutMs: 120_000 });
	let execution;
	const workflowId = url === stack.webhookUrl ? stack.webhookWorkflowId : ALT_WORKFLOW_ID;
	try {
		execution = await stack.executions.waitForRequest(workflowId, response.requestId, {
			timeoutMs: expect.execution === false ? 5_000 : 30_000,
		});
	} catch {
		execution = undefined;
	}
	const afterCounts = await counts(table);
	const newKeys = afterCounts.keys - countsBefore.keys;
	const newBusiness = afterCounts.business - countsBefore.business;
	// Values that vary or are too long for a table, written the way the doc shows them.
	const expectedKey = expect.key === 'body' ? bodyKey : expect.key;
	const symbolic = (text) => {
		let out = String(text ?? '')
			.replaceAll(bodyKey, 'sha256:<body>')
			// problem+json types point into this repository's docs (docs/errors.md): shown shortened.
			.replaceAll(`${REPO_URL}/blob/main/`, '…/');
		if (expectedKey && expectedKey.length > 60)
			out = out.replaceAll(
				expectedKey,
				`${expectedKey.slice(0, 4)}<${expectedKey.length - 4} × ${expectedKey[4]}>`,
			);
		return out;
	};

	// Checks that hold whatever the doc says.
	assert.equal(
		response.status,
		expect.status,
		`${id}: ${response.status} ${response.text.slice(0, 300)}`,
	);
	assert.equal(newKeys, expect.keys, `${id}: rows added to ${table}`);
	assert.equal(newBusiness, expect.business, `${id}: rows added to business_log`);
	if (expect.execution === false)
		assert.equal(execution, undefined, `${id}: n8n recorded no execution`);
	else assert.ok(execution, `${id}: n8n recorded the execution`);
	if (response.status >= 500)
		assert.ok(
			!execution || execution.status !== 'success',
			`${id}: a 5xx answer with a successful execution`,
		);
	// A client error (4xx) the template answered is the sender's to fix: the execution succeeded.
	if (response.status < 500 && response.status >= 400 && execution)
		assert.equal(execution.status, 'success', `${id}: an answered client error`);
	if (response.status >= 400) {
		assert.ok(
			!execution?.nodesRun.includes(BUSINESS_STEP),
			`${id}: the business step ran for a refused delivery`,
		);
	}
	if (expectedKey !== undefined) {
		const key = expectedKey;
		// A duplicate names its key; a new event's 200 is Complete Key's fixed body.
		if (response.json?.status !== 'processed')
			assert.equal(response.json?.key, key, `${id}: answered key`);
		assert.equal(
			(await stack.keysDb.query(`SELECT 1 FROM ${table} WHERE key = $1`, [key])).rowCount,
			1,
			`${id}: ${key} is reserved`,
		);
		assert.equal(
			(await stack.keysDb.query('SELECT 1 FROM business_log WHERE event_key = $1', [key])).rowCount,
			1,
			`${id}: one business row for ${key}`,
		);
	}
	assert.equal(await healthz(stack), 200, `${id}: n8n is up`);

	const shown = symbolic(response.text);
	const answer =
		shown.length > 200 ? `${shown.slice(0, 150)}… (${response.text.length} chars)` : shown;
	const storedKey = expectedKey === undefined ? '' : ` \`${symbolic(expectedKey)}\``;
	matrix.push([
		id,
		description,
		String(response.status),
		answer ? cell(`\`${answer}\``) : '(empty)',
		cell(
			execution
				? `${nodesCell(execution)}${execution.error ? `: \`${execution.error}\`` : ''}`
				: 'no execution recorded',
		),
		newKeys === 0 ? 'nothing' : cell(`${newKeys} row${storedKey}`),
		newBusiness === 0 ? 'none' : `${newBusiness} row`,
	]);
	return { response, execution };
}

const json = 'application/json';

test(
	'bad input through the template: each answered with a clear error or routed correctly, n8n stays up, nothing reserved wrongly',
	{ timeout: 600_000 },
	() =>
		withLogs(stack, async () => {
			const processed = (key) => ({ status: 200, keys: 1, business: 1, key });
			// An id that can never be a key is the sender's to fix: 400 problem+json (docs/errors.md).
			const refused = { status: 400, keys: 0, business: 0 };
			// A key table that cannot work is ours: 500, so the provider retries once it is fixed.
			const broken = { status: 500, keys: 0, business: 0 };

			// A signed body sent in a media type its sender does not use, or not parseable as the one it
			// claims, is refused before anything reads it (docs/errors.md#unsupported-media-type): n8n
			// would read other fields from the same signed bytes.
			const unsupported = { status: 415, keys: 0, business: 0 };
			await runCase(
				'I1',
				'text/plain body, JSON text with an id',
				{ body: '{"id":"evt_text_plain","type":"t"}', contentType: 'text/plain' },
				unsupported,
			);
			await runCase(
				'I2',
				'text/plain body without id',
				{ body: 'hello, plain text', contentType: 'text/plain' },
				unsupported,
			);
			await runCase(
				'I3',
				'application/x-www-form-urlencoded with id',
				{ body: 'id=evt_form_1&type=form.sent', contentType: 'application/x-www-form-urlencoded' },
				unsupported,
			);
			await runCase(
				'I4',
				'application/x-www-form-urlencoded without id',
				{ body: 'type=form.sent&n=2', contentType: 'application/x-www-form-urlencoded' },
				unsupported,
			);
			await runCase(
				'I5',
				'empty body, application/json',
				{ body: '', contentType: json },
				unsupported,
			);
			await runCase(
				'I6',
				'empty body, no content type',
				// null: sendEvent's default (application/json) is for undefined.
				{ body: '', contentType: null },
				unsupported,
			);

			const big = Buffer.from(
				JSON.stringify({ id: 'evt_big_10mb', type: 'big', pad: 'x'.repeat(10 * MB) }),
				'utf8',
			);
			const bigCase = await runCase(
				'I7',
				'10 MB JSON body with an id',
				{ body: big, contentType: json },
				processed('evt:evt_big_10mb'),
			);
			process.stderr.write(`[faults] 10 MB body answered in ${bigCase.response.ms} ms\n`);
			const tooBig = Buffer.from(
				JSON.stringify({ id: 'evt_big_17mb', type: 'too.big', pad: 'x'.repeat(17 * MB) }),
				'utf8',
			);
			await runCase(
				'I8',
				"17 MB JSON body with an id (over n8n's 16 MB N8N_PAYLOAD_SIZE_MAX)",
				{ body: tooBig, contentType: json },
				{ status: 500, keys: 0, business: 0, execution: false },
			);

			await runCase(
				'I9',
				'body is a JSON array `[{"id":…}]`',
				{ body: '[{"id":"evt_in_array","type":"a"}]', contentType: json },
				processed('body'),
			);
			await runCase(
				'I10',
				'invalid JSON with a JSON content type',
				{ body: '{"id":"evt_broken",', contentType: json },
				{ status: 422, keys: 0, business: 0, execution: false },
			);
			await runCase(
				'I11',
				'id is a number (12345)',
				{ body: '{"id":12345,"type":"n"}', contentType: json },
				processed('evt:12345'),
			);
			await runCase(
				'I12',
				'id is an object',
				{ body: '{"id":{"nested":"evt_obj"},"type":"o"}', contentType: json },
				refused,
			);
			await runCase(
				'I13',
				'id is true',
				{ body: '{"id":true,"type":"b"}', contentType: json },
				refused,
			);
			await runCase(
				'I14',
				'id is null',
				{ body: '{"id":null,"type":"null.id"}', contentType: json },
				processed('body'),
			);
			await runCase(
				'I15',
				'id is ""',
				{ body: '{"id":"","type":"empty.id"}', contentType: json },
				processed('body'),
			);
			await runCase(
				'I16',
				'id contains a NUL (JSON "\\u0000")',
				{ body: '{"id":"evt_nul_\\u0000_x","type":"z"}', contentType: json },
				refused,
			);
			const emoji = 'evt_🎉_ünïcødé_✓';
			const emojiCase = await runCase(
				'I17',
				'id with emoji and accents',
				{ body: JSON.stringify({ id: emoji, type: 'u' }), contentType: json },
				processed(`evt:${emoji}`),
			);
			assert.equal(emojiCase.response.json.status, 'processed');
			await runCase(
				'I18',
				'id of 2,000 characters',
				{ body: JSON.stringify({ id: 'L'.repeat(2000), type: 'long' }), contentType: json },
				refused,
			);
			const limit = `evt:${'K'.repeat(996)}`;
			await runCase(
				'I19',
				'id of 996 characters (key of exactly 1,000 bytes)',
				{ body: JSON.stringify({ id: 'K'.repeat(996), type: 'limit' }), contentType: json },
				processed(limit),
			);

			// Key tables someone made by hand with other columns (the template copy pointing at ALT_TABLE).
			const alt = { url: altUrl, table: ALT_TABLE, contentType: json };
			await stack.keysDb.query(
				`CREATE TABLE ${ALT_TABLE} (key integer PRIMARY KEY, first_seen timestamptz NOT NULL DEFAULT now())`,
			);
			await stack.keysDb.query(`CREATE INDEX ON ${ALT_TABLE} (first_seen)`);
			await runCase(
				'T1',
				`existing table with \`key integer PRIMARY KEY\``,
				{ ...alt, body: '{"id":"evt_alt_int","type":"t"}' },
				broken,
			);
			await runCase(
				'T2',
				'same table, numeric id (42)',
				{ ...alt, body: '{"id":42,"type":"t"}' },
				broken,
			);
			await stack.keysDb.query(`DROP TABLE ${ALT_TABLE}`);
			await stack.keysDb.query(
				`CREATE TABLE ${ALT_TABLE} (key text NOT NULL, first_seen timestamptz NOT NULL DEFAULT now())`,
			);
			await stack.keysDb.query(`CREATE INDEX ON ${ALT_TABLE} (first_seen)`);
			await runCase(
				'T3',
				'existing table with `key text` but no primary key / unique index',
				{ ...alt, body: '{"id":"evt_alt_nopk","type":"t"}' },
				broken,
			);

			assert.equal(stack.n8n.process.exitStatus, undefined, 'n8n is still running');
			assertMatchesDoc('input-matrix', matrix);
		}),
);
