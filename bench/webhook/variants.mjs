// The variants: which workflow each one is, what its answer and its business row look like. A new
// variant is one entry in VARIANTS below (and its workflow file under bench/workflows/).
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { WEBHOOK_WORKFLOW_ID } from '../../scripts/harness/index.mjs';
import { REPO_DIR } from './config.mjs';
import { historyVariants } from './history.mjs';

const TEMPLATE_FILE = 'workflows/idempotent-webhook.json';
const EXACTLY_ONCE_FILE = 'workflows/exactly-once-postgres.json';
const NO_VERIFY_TABLE = 'processed_events_nover';
const EXACTLY_ONCE_TABLE = 'processed_events_once';
const NO_FINGERPRINT_TABLE = 'processed_events_nofp';
const API_FILE = 'workflows/idempotent-api.json';
const MULTI_STEP_FILE = 'workflows/multi-step.json';
const MULTI_STEP_TABLE = 'processed_events_multi';
const MULTI_PLAIN_TABLE = 'processed_events_multiplain';
const API_TABLE = 'processed_events_api';
const ANSWER_FIRST_FILE = 'workflows/answer-first.json';
const ANSWER_FIRST_TABLE = 'processed_events_af';
const ANSWER_LAST_TABLE = 'processed_events_al';
const ANSWER_FIRST_NO_KEEPER_TABLE = 'processed_events_afnk';
const ANSWER_FIRST_LEAN_TABLE = 'processed_events_afln';
/** The API template's scope for a caller without Authorization: 'orders-' + 16 hex of sha256('anonymous'). */
const API_SCOPE = `orders-${createHash('sha256').update('anonymous').digest('hex').slice(0, 16)}`;

/**
 * The template with Reserve's signature check off (Verify Signature: Don't Verify) and the Respond
 * 401 its `invalid signature` output fed: Webhook → Idempotency Reserve, as the template was before
 * verification. Own id, webhook path and key table, everything else as in the file, so package ÷
 * this is the cost of verification alone.
 */
function templateWithoutVerification() {
	const template = JSON.parse(readFileSync(path.join(REPO_DIR, TEMPLATE_FILE), 'utf8'));
	const reserve = template.nodes.find(
		(node) => node.type === 'n8n-nodes-idempotency.idempotencyReserve',
	);
	if (!reserve || reserve.parameters.signature === undefined)
		throw new Error(`${TEMPLATE_FILE} has no Idempotency Reserve that verifies signatures`);
	const connections = structuredClone(template.connections);
	// The last output is `invalid signature` (nodes/shared/reserveRules/reserveOutputs.ts).
	const invalidTargets = connections[reserve.name].main.pop() ?? [];
	const dropped = new Set(invalidTargets.map((c) => c.node));
	const nodes = template.nodes
		.filter((node) => !dropped.has(node.name))
		.map((node) => structuredClone(node));
	for (const node of nodes) {
		if (node.type === 'n8n-nodes-base.webhook') {
			node.parameters.path = 'idempotent-webhook-noverify';
			node.webhookId = randomUUID();
		}
		if (node.type.startsWith('n8n-nodes-idempotency.')) node.parameters.table = NO_VERIFY_TABLE;
		if (node.name === reserve.name) {
			node.parameters.signature = 'none';
			delete node.credentials.webhookSigningSecretApi;
		}
	}
	for (const name of dropped) delete connections[name];
	return {
		...template,
		id: 'IdemWebhookNoVer1',
		name: `${template.name} (no signature check)`,
		nodes,
		connections,
	};
}

const NO_ERROR_OUTPUT_TABLE = 'processed_events_noerr';

/**
 * The template with Reserve's error output taken away (no "On Error: Continue (using error output)";
 * the problem+json branch behind it left unconnected): own id, path and key table. n8n evaluates a node's
 * `outputs` expression on every run of a node that continues on its error output (WorkflowExecute's
 * handleNodeErrorOutput), and Reserve's outputs are an expression; package ÷ this is what that costs.
 * A diagnostic from before Reserve 2.2: since then the template has no error output (Reserve
 * answers problems itself), and this variant is the template as it is, under its own id, path and
 * table (package ÷ this ≈ 1).
 */
function templateWithoutErrorOutput() {
	const template = JSON.parse(readFileSync(path.join(REPO_DIR, TEMPLATE_FILE), 'utf8'));
	const reserve = template.nodes.find(
		(node) => node.type === 'n8n-nodes-idempotency.idempotencyReserve',
	);
	if (reserve === undefined) throw new Error(`${TEMPLATE_FILE}: no Reserve node`);
	const connections = structuredClone(template.connections);
	// The error output is the last one n8n adds after the node's own (none from Reserve 2.2 on).
	if (reserve.onError === 'continueErrorOutput') connections[reserve.name].main.pop();
	// The nodes the error output fed stay, unconnected: the workflow n8n builds per execution keeps
	// its size, so only the error output's own cost differs.
	const nodes = template.nodes.map((node) => structuredClone(node));
	for (const node of nodes) {
		if (node.type === 'n8n-nodes-base.webhook') {
			node.parameters.path = 'idempotent-webhook-noerror';
			node.webhookId = randomUUID();
		}
		if (node.type.startsWith('n8n-nodes-idempotency.'))
			node.parameters.table = NO_ERROR_OUTPUT_TABLE;
		if (node.name === reserve.name) delete node.onError;
	}
	return {
		...template,
		id: 'IdemWebhookNoErr1',
		name: `${template.name} (no error output on Reserve)`,
		nodes,
		connections,
	};
}

/**
 * The exactly-once template as shipped, with an id, and its own key table so its keys are counted
 * apart from the webhook template's. Its webhook path is its own already.
 */
function exactlyOnceTemplate() {
	const template = JSON.parse(readFileSync(path.join(REPO_DIR, EXACTLY_ONCE_FILE), 'utf8'));
	for (const node of template.nodes)
		if (node.type.startsWith('n8n-nodes-idempotency.')) node.parameters.table = EXACTLY_ONCE_TABLE;
	return { ...template, id: 'IdemExactlyOnce01' };
}

/**
 * The webhook template with Reserve's Fingerprint set to None, its own id, path and key table: what
 * the template did before it recorded fingerprints, so package ÷ this is what recording them costs.
 */
function templateWithoutFingerprint() {
	const template = JSON.parse(readFileSync(path.join(REPO_DIR, TEMPLATE_FILE), 'utf8'));
	for (const node of template.nodes) {
		if (node.type === 'n8n-nodes-base.webhook') {
			node.parameters.path = 'idempotent-webhook-nofingerprint';
			node.webhookId = randomUUID();
		}
		if (node.type.startsWith('n8n-nodes-idempotency.'))
			node.parameters.table = NO_FINGERPRINT_TABLE;
		if (node.type === 'n8n-nodes-idempotency.idempotencyReserve')
			node.parameters.fingerprint = 'none';
	}
	return { ...template, id: 'IdemWebhookNoFp01', name: `${template.name} (no fingerprint)` };
}

/**
 * The multi-step template with its two HTTP steps made PostgreSQL statements the bench can count: the
 * first is the floor's business step (INSERT INTO business_log), the second a round trip that writes
 * nothing (SELECT). With `steps: false`, the same two steps without step records (the Skip If Done and
 * Record nodes taken out, each `done` and `run` path joined): what the webhook template with two
 * steps is, so multiStep ÷ multiStepPlain is what recording the steps costs per event.
 */
function multiStepTemplate({ steps }) {
	const template = JSON.parse(readFileSync(path.join(REPO_DIR, MULTI_STEP_FILE), 'utf8'));
	const business = JSON.parse(readFileSync(path.join(REPO_DIR, TEMPLATE_FILE), 'utf8')).nodes.find(
		(node) => node.type === 'n8n-nodes-base.postgres',
	);
	const httpSteps = template.nodes.filter((node) => node.type === 'n8n-nodes-base.httpRequest');
	if (!business || httpSteps.length !== 2)
		throw new Error(
			`${MULTI_STEP_FILE} should have two HTTP steps, and ${TEMPLATE_FILE} a Postgres step`,
		);
	const asPostgres = (node, parameters) => ({
		...structuredClone(business),
		...node,
		type: business.type,
		typeVersion: business.typeVersion,
		parameters,
		credentials: business.credentials,
	});
	const [first, second] = httpSteps;
	const replaced = new Map([
		[first.name, asPostgres(first, business.parameters)],
		[
			second.name,
			asPostgres(second, {
				operation: 'executeQuery',
				query: 'SELECT $1::text AS receipt',
				options: {
					queryReplacement: "={{ [$('Idempotency Reserve').item.json.idempotency.key] }}",
				},
			}),
		],
	]);
	let nodes = template.nodes.map((node) => replaced.get(node.name) ?? node);
	let connections = structuredClone(template.connections);
	if (!steps) {
		const isStep = (node) => node.type === 'n8n-nodes-idempotency.idempotencyStep';
		nodes = nodes.filter((node) => !isStep(node) && node.type !== 'n8n-nodes-base.stickyNote');
		connections = {
			Webhook: connections.Webhook,
			'Idempotency Reserve': {
				main: [
					[{ node: first.name, type: 'main', index: 0 }],
					...connections['Idempotency Reserve'].main.slice(1),
				],
			},
			[first.name]: {
				main: [[{ node: second.name, type: 'main', index: 0 }], connections[first.name].main[1]],
			},
			[second.name]: {
				main: [
					[{ node: 'Complete Key', type: 'main', index: 0 }],
					connections[second.name].main[1],
				],
			},
			'Release Key': connections['Release Key'],
		};
	}
	for (const node of nodes) {
		if (node.type === 'n8n-nodes-base.webhook' && !steps) {
			node.parameters.path = 'idempotent-multi-plain';
			node.webhookId = randomUUID();
		}
		if (node.type.startsWith('n8n-nodes-idempotency.'))
			node.parameters.table = steps ? MULTI_STEP_TABLE : MULTI_PLAIN_TABLE;
	}
	return {
		...template,
		id: steps ? 'IdemMultiStep0001' : 'IdemMultiPlain001',
		name: steps ? template.name : `${template.name} (no step records)`,
		nodes,
		connections,
	};
}

/** Each answer-first variant's webhook path, key table, workflow id and name suffix. */
function answerFirstNaming({ answerFirst, keeper, notes }) {
	if (!answerFirst)
		return ['answer-first-off', ANSWER_LAST_TABLE, 'IdemAnswerLast001', '(Answer First off)'];
	if (!notes)
		return ['answer-first-lean', ANSWER_FIRST_LEAN_TABLE, 'IdemAnswerFstLean', '(no notes)'];
	if (!keeper)
		return [
			'answer-first-no-keeper',
			ANSWER_FIRST_NO_KEEPER_TABLE,
			'IdemAnswerFstNoK1',
			'(Keep the Lease While Running off)',
		];
	return ['answer-first', ANSWER_FIRST_TABLE, 'IdemAnswerFirst01', ''];
}

/**
 * The answer-first template with its own id, webhook path and key table (the Redrive Trigger's too).
 * `answerFirst: false` is the same workflow with Reserve's Answer First off: every delivery then
 * takes the template's answered-last branch (business step → Complete Key and Answer), as one over
 * the size cap does, so answerFirst ÷ answerLast is what storing the delivery and answering before
 * the work cost per event, the same nodes and trigger around it. `keeper: false`: the template with
 * Reserve's Keep the Lease While Running off (the lease ends Lease seconds after Reserve, as before
 * the keeper), so answerFirst ÷ answerFirstNoKeeper is what keeping the lease costs an execution
 * that ends before its first renewal (a third of the lease: 20 s here): the bookkeeping only.
 * One lever on its cost against the webhook template (a measure, not a template to ship): `notes:
 * false` drops the sticky notes, which n8n saves in every execution's workflow snapshot.
 */
function answerFirstTemplate({ answerFirst, keeper = true, notes = true }) {
	const template = JSON.parse(readFileSync(path.join(REPO_DIR, ANSWER_FIRST_FILE), 'utf8'));
	const [pathName, table, id, name] = answerFirstNaming({
		answerFirst,
		keeper,
		notes,
	});
	for (const node of template.nodes) {
		if (node.type === 'n8n-nodes-base.webhook') {
			node.parameters.path = pathName;
			node.webhookId = randomUUID();
		}
		if (node.type.startsWith('n8n-nodes-idempotency.')) node.parameters.table = table;
		if (node.type === 'n8n-nodes-idempotency.idempotencyReserve') {
			node.parameters.answerFirst = answerFirst;
			if (!keeper) node.parameters.keepLease = false;
		}
	}
	if (!notes)
		template.nodes = template.nodes.filter((node) => node.type !== 'n8n-nodes-base.stickyNote');
	return { ...template, id, name: name ? `${template.name} ${name}` : template.name };
}

/**
 * The answer-first template's 200 `accepted` (sent before the business step) in the webhook variants'
 * terms: the event's "processed". Its other answers (duplicate, 409 in flight) are the template's own.
 */
function acceptedAnswer(answer, key) {
	let status;
	try {
		status = JSON.parse(answer.text).status;
	} catch {
		return answer;
	}
	if (answer.status === 200 && status === 'accepted')
		return { ...answer, text: JSON.stringify({ status: 'processed', key }) };
	return answer;
}

/** The idempotent API template as shipped, with an id and its own key table. */
function apiTemplate() {
	const template = JSON.parse(readFileSync(path.join(REPO_DIR, API_FILE), 'utf8'));
	for (const node of template.nodes)
		if (node.type.startsWith('n8n-nodes-idempotency.')) node.parameters.table = API_TABLE;
	return { ...template, id: 'IdemApiTemplate01' };
}

/**
 * An API answer in the terms the checks read for the webhook variants ({ status: processed |
 * duplicate | in_progress, key }): 201 is processed, 201 with Idempotent-Replayed a duplicate, a
 * 409 problem in flight. Anything else is left as it is, so the checks report it.
 */
function apiAnswer(answer, key) {
	if (answer.status === 201) {
		const status = answer.replayed === 'true' ? 'duplicate' : 'processed';
		return { ...answer, status: 200, text: JSON.stringify({ status, key }) };
	}
	if (answer.status === 409) {
		const retryAfterSeconds = Number(answer.retryAfter);
		return { ...answer, text: JSON.stringify({ status: 'in_progress', key, retryAfterSeconds }) };
	}
	return answer;
}

/**
 * Writes the generated template to a temporary folder (removed when the process exits) and returns
 * the table of all variants, each with its workflow id and, for the extra workflows, webhook path.
 */
export function loadVariants() {
	const generatedDir = mkdtempSync(path.join(os.tmpdir(), 'bench-webhook-level-'));
	process.on('exit', () => rmSync(generatedDir, { recursive: true, force: true }));
	const NO_VERIFY_FILE = path.join(generatedDir, 'template-without-verification.json');
	writeFileSync(NO_VERIFY_FILE, JSON.stringify(templateWithoutVerification(), null, 2));
	const EXACTLY_ONCE_COPY = path.join(generatedDir, 'exactly-once-postgres.json');
	writeFileSync(EXACTLY_ONCE_COPY, JSON.stringify(exactlyOnceTemplate(), null, 2));
	const NO_FINGERPRINT_FILE = path.join(generatedDir, 'template-without-fingerprint.json');
	writeFileSync(NO_FINGERPRINT_FILE, JSON.stringify(templateWithoutFingerprint(), null, 2));
	const NO_ERROR_OUTPUT_FILE = path.join(generatedDir, 'template-without-error-output.json');
	writeFileSync(NO_ERROR_OUTPUT_FILE, JSON.stringify(templateWithoutErrorOutput(), null, 2));
	const API_COPY = path.join(generatedDir, 'idempotent-api.json');
	writeFileSync(API_COPY, JSON.stringify(apiTemplate(), null, 2));
	const MULTI_STEP_COPY = path.join(generatedDir, 'multi-step.json');
	writeFileSync(MULTI_STEP_COPY, JSON.stringify(multiStepTemplate({ steps: true }), null, 2));
	const MULTI_PLAIN_FILE = path.join(generatedDir, 'multi-step-without-records.json');
	writeFileSync(MULTI_PLAIN_FILE, JSON.stringify(multiStepTemplate({ steps: false }), null, 2));
	const ANSWER_FIRST_COPY = path.join(generatedDir, 'answer-first.json');
	writeFileSync(
		ANSWER_FIRST_COPY,
		JSON.stringify(answerFirstTemplate({ answerFirst: true }), null, 2),
	);
	const ANSWER_LAST_FILE = path.join(generatedDir, 'answer-first-off.json');
	writeFileSync(
		ANSWER_LAST_FILE,
		JSON.stringify(answerFirstTemplate({ answerFirst: false }), null, 2),
	);
	const ANSWER_FIRST_NO_KEEPER_FILE = path.join(generatedDir, 'answer-first-no-keeper.json');
	writeFileSync(
		ANSWER_FIRST_NO_KEEPER_FILE,
		JSON.stringify(answerFirstTemplate({ answerFirst: true, keeper: false }), null, 2),
	);
	const ANSWER_FIRST_LEAN_FILE = path.join(generatedDir, 'answer-first-lean.json');
	writeFileSync(
		ANSWER_FIRST_LEAN_FILE,
		JSON.stringify(answerFirstTemplate({ answerFirst: true, notes: false }), null, 2),
	);

	// One entry per variant: adding a variant is adding an entry (and its workflow file).
	//   file        the workflow; `template: true` marks the webhook template startStack publishes itself
	//               (WEBHOOK_WORKFLOW_ID), every other file is an extra workflow with its own id and path
	//   tag         in every event id of the variant, so no two variants share an event or a key
	//   dedupe      deduplicating: one business row per distinct event, duplicates answered "duplicate"
	//   inFlight409 lease mode: a repeat that arrives while its original still runs is answered 409 with
	//               Retry-After (checked, then resent after the load like a sender would; see record())
	//   keyTable    its key table, whose rows are counted after the run
	//   businessKey the event_key of its business row (undefined: no business step)
	//   headers     extra request headers per event id (an API client's Idempotency-Key)
	//   answer      maps its HTTP answer to the webhook variants' terms (the API's 201 and 409)
	//   keyedByBody false: its key does not come from the body, so the body-without-id check skips it
	//   raceProne   deduplicates, but not safely under overlapping deliveries: a doubled business row
	//               or a repeated "processed" answer is counted and reported, not a failure (the
	//               answers and executions are still checked)
	//   prepare     (stack, run, url) once after the warm-up, before the rounds (fills a store)
	//   beforeLoad  (stack) before each measured load, outside its measured window
	//   prefilledKeys rows in keyTable that no request carried
	const VARIANTS = {
		floor: {
			file: 'bench/workflows/floor.json',
			tag: 'flr',
			dedupe: false,
			businessKey: (id) => `floor:${id}`,
		},
		// The lightest honest floor: the same business step, its answer read from the step's own output
		// ($json, the row it inserted) instead of $('Webhook').item, which makes n8n walk the paired
		// items back to the Webhook on every request.
		floorLight: {
			file: 'bench/workflows/floor-light.json',
			tag: 'fll',
			dedupe: false,
			businessKey: (id) => `floorlight:${id}`,
		},
		// floorLight answering a fixed body, as the template's Complete Key answers (its insert without
		// RETURNING): no expression in its Respond. Measured no lighter than floorLight (BENCHMARKS.md),
		// which stays the floor.
		floorLiteral: {
			file: 'bench/workflows/floor-literal.json',
			tag: 'flt',
			dedupe: false,
			businessKey: (id) => `floorliteral:${id}`,
		},
		floorNoOp: {
			file: 'bench/workflows/floor-plus-noop.json',
			tag: 'nop',
			dedupe: false,
			businessKey: (id) => `noop:${id}`,
		},
		bare: { file: 'bench/workflows/bare.json', tag: 'bar', dedupe: false, businessKey: undefined },
		handBuilt: {
			file: 'bench/workflows/hand-built.json',
			tag: 'hnd',
			dedupe: true,
			keyTable: 'processed_events_hand',
			businessKey: (id) => `evt:${id}`,
		},
		packageSimple: {
			file: 'bench/workflows/package-simple.json',
			tag: 'pks',
			dedupe: true,
			keyTable: 'processed_events_simple',
			businessKey: (id) => `evt:${id}`,
		},
		package: {
			file: TEMPLATE_FILE,
			template: true,
			tag: 'pkg',
			dedupe: true,
			inFlight409: true,
			keyTable: 'processed_events',
			businessKey: (id) => `evt:${id}`,
		},
		exactlyOnce: {
			file: EXACTLY_ONCE_COPY,
			tag: 'exo',
			dedupe: true,
			inFlight409: true,
			keyTable: EXACTLY_ONCE_TABLE,
			businessKey: (id) => `evt:${id}`,
		},
		packageNoErrorOutput: {
			file: NO_ERROR_OUTPUT_FILE,
			tag: 'pne',
			dedupe: true,
			inFlight409: true,
			keyTable: NO_ERROR_OUTPUT_TABLE,
			businessKey: (id) => `evt:${id}`,
		},
		packageNoFingerprint: {
			file: NO_FINGERPRINT_FILE,
			tag: 'pnf',
			dedupe: true,
			inFlight409: true,
			keyTable: NO_FINGERPRINT_TABLE,
			businessKey: (id) => `evt:${id}`,
		},
		floorApi: {
			file: 'bench/workflows/floor-api.json',
			tag: 'fap',
			dedupe: false,
			businessKey: (id) => `floorapi:${id}`,
			answer: apiAnswer,
		},
		api: {
			file: API_COPY,
			tag: 'api',
			dedupe: true,
			inFlight409: true,
			keyedByBody: false,
			keyTable: API_TABLE,
			businessKey: (id) => `${API_SCOPE}:idk:${id}`,
			headers: (id) => ({ 'idempotency-key': `"${id}"` }),
			answer: apiAnswer,
		},
		packageBefore: {
			file: 'bench/workflows/package-before.json',
			tag: 'pbf',
			dedupe: true,
			inFlight409: true,
			keyTable: 'processed_events_before',
			businessKey: (id) => `evt:${id}`,
		},
		// n8n's own Remove Duplicates v2 ("Remove Items Processed in Previous Executions", scope
		// workflow, default History Size 10,000) before the floor's business step; its Discarded output
		// answers 200 duplicate. Not safe under overlapping deliveries (its history is one row, read
		// and rewritten by every execution): raceProne, so its doubled rows are counted, not failed.
		removeDuplicates: {
			file: 'bench/workflows/remove-duplicates.json',
			tag: 'rmd',
			dedupe: true,
			raceProne: true,
			keyedByBody: false,
			businessKey: (id) => `rmdup:${id}`,
		},
		// --history (bench/webhook/history.mjs): Remove Duplicates and the template at several history sizes.
		...historyVariants(generatedDir, TEMPLATE_FILE),
		// workflows/multi-step.json with two PostgreSQL steps, and the same without step records.
		multiStep: {
			file: MULTI_STEP_COPY,
			tag: 'mst',
			dedupe: true,
			inFlight409: true,
			keyTable: MULTI_STEP_TABLE,
			businessKey: (id) => `evt:${id}`,
		},
		multiStepPlain: {
			file: MULTI_PLAIN_FILE,
			tag: 'msp',
			dedupe: true,
			inFlight409: true,
			keyTable: MULTI_PLAIN_TABLE,
			businessKey: (id) => `evt:${id}`,
		},
		// workflows/answer-first.json as shipped (answered 200 accepted before the business step, the
		// delivery stored with the key), against the same workflow with Answer First off (answered last).
		// The sender's immediate resend of a body without id may meet the first one's lease (the work
		// goes on after the answer): keyedByBody false leaves that smoke check to the other variants.
		answerFirst: {
			file: ANSWER_FIRST_COPY,
			tag: 'afs',
			dedupe: true,
			inFlight409: true,
			keyedByBody: false,
			keyTable: ANSWER_FIRST_TABLE,
			businessKey: (id) => `evt:${id}`,
			answer: acceptedAnswer,
		},
		answerFirstNoKeeper: {
			file: ANSWER_FIRST_NO_KEEPER_FILE,
			tag: 'afk',
			dedupe: true,
			inFlight409: true,
			keyedByBody: false,
			keyTable: ANSWER_FIRST_NO_KEEPER_TABLE,
			businessKey: (id) => `evt:${id}`,
			answer: acceptedAnswer,
		},
		// A lever on answer first's cost (answerFirstTemplate): the template without its sticky notes.
		answerFirstLean: {
			file: ANSWER_FIRST_LEAN_FILE,
			tag: 'afl',
			dedupe: true,
			inFlight409: true,
			keyedByBody: false,
			keyTable: ANSWER_FIRST_LEAN_TABLE,
			businessKey: (id) => `evt:${id}`,
			answer: acceptedAnswer,
		},
		// The answer-first template's floor: the same business step after the same fixed 200
		// `accepted`, nothing else (no key, no stored delivery, no step record, no trigger).
		floorAnswerFirst: {
			file: 'bench/workflows/floor-answer-first.json',
			tag: 'ffs',
			dedupe: false,
			businessKey: (id) => `floorfirst:${id}`,
			answer: acceptedAnswer,
		},
		answerLast: {
			file: ANSWER_LAST_FILE,
			tag: 'als',
			dedupe: true,
			inFlight409: true,
			keyTable: ANSWER_LAST_TABLE,
			businessKey: (id) => `evt:${id}`,
		},
		packageNoVerify: {
			file: NO_VERIFY_FILE,
			tag: 'pnv',
			dedupe: true,
			inFlight409: true,
			keyTable: NO_VERIFY_TABLE,
			businessKey: (id) => `evt:${id}`,
		},
	};
	for (const variant of Object.values(VARIANTS)) {
		if (variant.template) {
			variant.workflowId = WEBHOOK_WORKFLOW_ID;
			continue;
		}
		const json = JSON.parse(readFileSync(path.resolve(REPO_DIR, variant.file), 'utf8'));
		variant.workflowId = json.id;
		variant.webhookPath = json.nodes.find(
			(node) => node.type === 'n8n-nodes-base.webhook',
		).parameters.path;
	}
	return VARIANTS;
}

/** Refuses a --variants name that is not in the table. */
export function checkVariantNames(variants, names) {
	const all = Object.keys(variants);
	for (const variant of names)
		if (!all.includes(variant)) throw new Error(`unknown variant ${variant} (${all.join(', ')})`);
}

export const HAND_TABLE_SQL = `CREATE TABLE IF NOT EXISTS processed_events_hand (
  key text PRIMARY KEY,
  first_seen timestamptz NOT NULL DEFAULT now()
)`;
