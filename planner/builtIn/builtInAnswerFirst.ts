/**
 * The answer-first built-in workflow's key store part (planner/builtIn/builtIn.ts with `answerFirst`):
 * the package's Answer First and Redrive Trigger made of n8n-nodes-base nodes, for n8n Cloud.
 *
 * Webhook path: Stored Delivery (the verified delivery as the package stores it, builtInDelivery.ts)
 * → Reserve Key (the package's reservation with the delivery in the same statement) → a new key
 * whose delivery is stored is answered 200 `accepted` at once, then runs Event to Run → the business
 * step → Complete Key; a delivery over the record cap is not stored and is answered last, as the
 * package does. Redrive path, in the same workflow (one import, one publish, one business step, and
 * `$workflow.id` is the id the stored deliveries name): a Schedule Trigger → Claim Due Key (the
 * package's fenced claim: FOR UPDATE SKIP LOCKED, a new owner token, attempts + 1; past Max Attempts
 * a dead letter) → Event to Run, the same nodes. Dead letters: the claim's `dead` output goes to an
 * alert placeholder; Run by Hand retries or drops them with the package's statements.
 * Every statement is the package's own builder (nodes/shared/store/sql), never written here.
 */
import {
	claimRedrivesSql,
	completeSql,
	createTableSql,
	dropDeadLettersSql,
	releaseOwnedSql,
	reserveLeaseSql,
	retryDeadLettersOutcomeSql,
} from '../../nodes/shared/store/sql';
import { tableRef } from '../../nodes/shared/store/identifiers';
import { DELIVERY_FIELD, deliveryAssignments } from './builtInDelivery';
import {
	BUILT_IN_CREDENTIALS,
	id,
	isTrue,
	KEY_OF_KEY_NODE,
	NODES,
	postgres,
	respond,
	switchNode,
	textArray,
	TOKEN_OF_KEY_NODE,
	type BuiltInWorkflow,
	type WorkflowNode,
} from './builtInNodes';
import type { PlannerSettings } from '../settings';

/** The redrive's settings (the Redrive Trigger's, docs/answer-first.md), checked by builtInInputs.ts. */
export interface AnswerFirstOptions {
	/** How often the Schedule Trigger claims a due key. */
	checkEverySeconds: number;
	/** Runs of one event, the first included, before it is a dead letter. */
	maxAttempts: number;
	/** Wait after a lease ended before the next run, doubled per attempt, at most an hour. */
	backoffSeconds: number;
}

/**
 * Defaults. Max Attempts and Backoff are the Redrive Trigger's. Check Every is 60 s, not the trigger's
 * 10 s: every check is an execution of its own on n8n, and n8n Cloud counts executions.
 */
export const ANSWER_FIRST_DEFAULTS: AnswerFirstOptions = {
	checkEverySeconds: 60,
	maxAttempts: 5,
	backoffSeconds: 30,
};

/** Keys claimed per check: one, so each claimed event runs as one item, as its own key's execution. */
export const EVENTS_PER_CHECK = 1;

/** The statements the answer-first workflow runs: each is the package's own, for these settings. */
export interface AnswerFirstStatements {
	createTable: string;
	/** Reserve with Store Delivery: $4 the delivery of each key (jsonb, NULL when over the cap). */
	reserve: string;
	complete: string;
	/** Release Key keeping answered events: an answered key is reopened for the redrive, not deleted. */
	release: string;
	claim: string;
	retryDeadLetters: string;
	dropDeadLetters: string;
}

export function answerFirstStatements(settings: PlannerSettings): AnswerFirstStatements {
	const ref = tableRef(settings.schema, settings.table);
	return {
		createTable: createTableSql(ref, { lease: true }),
		reserve: reserveLeaseSql(ref, { delivery: true }),
		complete: completeSql(ref),
		release: releaseOwnedSql(ref, 'keep'),
		claim: claimRedrivesSql(ref),
		retryDeadLetters: retryDeadLettersOutcomeSql(ref),
		dropDeadLetters: dropDeadLettersSql(ref),
	};
}

/** Node names of the answer-first part (the others are NODES'). */
export const ANSWER_FIRST_NODES = {
	delivery: 'Stored Delivery',
	answerFirst: 'Delivery Stored?',
	accepted: 'Respond 200 accepted',
	event: 'Event to Run',
	answeredDone: 'Answered First? (done)',
	answeredFailed: 'Answered First? (failed)',
	schedule: 'Every Check: Claim a Due Key',
	claim: 'Claim Due Key',
	claimed: 'Claimed or Dead Letter?',
	deadLetterAlert: 'Dead Letter Alert (replace me)',
	byHand: 'Run by Hand: Dead Letters',
	deadLetterKeys: 'Dead Letters to Retry or Drop',
	retry: 'Retry Dead Letters',
	drop: 'Drop Dead Letters',
} as const;
const AF = ANSWER_FIRST_NODES;

/** The fields Event to Run gives the business step, from the webhook's delivery or the claim's stored one. */
const EVENT = $event();
function $event() {
	// The claim's row has `outcome`; the webhook path's item is Reserve's row, which has none.
	const claimed = `$json.outcome === 'claimed'`;
	// A stored delivery toStorableJson wrapped (NUL or a lone surrogate in it) is unwrapped first.
	const stored = `((d) => d !== null && typeof d === 'object' && Object.keys(d).length === 1 && typeof d['$idempotencyJson'] === 'string' ? JSON.parse(d['$idempotencyJson']) : (d ?? {}))($json.delivery)`;
	const webhook = `$('${NODES.webhook}').first().json`;
	const assign = (
		name: string,
		type: 'string' | 'boolean' | 'object' | 'number',
		value: string,
	) => ({
		id: name,
		name,
		value: `={{ ${value} }}`,
		type,
	});
	return [
		assign('key', 'string', `${claimed} ? $json.key : ${KEY_OF_KEY_NODE}`),
		assign('ownerToken', 'string', `${claimed} ? $json.owner_token : ${TOKEN_OF_KEY_NODE}`),
		assign('attempt', 'number', `$json.attempts`),
		// Whether the sender was answered before this run: a redrive's always was.
		assign(
			'answered',
			'boolean',
			`${claimed} || $('${AF.delivery}').first().json.${DELIVERY_FIELD} !== ''`,
		),
		assign('headers', 'object', `${claimed} ? (${stored}.headers ?? {}) : ${webhook}.headers`),
		assign('query', 'object', `${claimed} ? (${stored}.query ?? {}) : ${webhook}.query`),
		// The body as the Webhook handed it, or as stored: a business step reads $json.body either way.
		assign('body', 'object', `${claimed} ? ${stored}.body : ${webhook}.body`),
	];
}

/** An If node on one expression. */
function ifNode(
	nodeId: string,
	name: string,
	expression: string,
	position: [number, number],
): WorkflowNode {
	return {
		id: nodeId,
		name,
		type: 'n8n-nodes-base.if',
		typeVersion: 2.2,
		position,
		parameters: { conditions: isTrue(expression, name.replace(/\W+/g, '-')), options: {} },
	};
}

const EVENT_OF = (field: string) => `$('${AF.event}').first().json.${field}`;

/** The nodes from the stored delivery to the answers, the redrive and the dead letters. */
export function answerFirstNodes(
	settings: PlannerSettings,
	provider: string,
	sql: AnswerFirstStatements,
	options: AnswerFirstOptions,
): WorkflowNode[] {
	const lease = settings.leaseSeconds;
	return [
		{
			id: id(40),
			name: AF.delivery,
			type: 'n8n-nodes-base.set',
			typeVersion: 3.4,
			position: [2200, 200],
			parameters: {
				mode: 'manual',
				assignments: { assignments: deliveryAssignments(settings, provider) },
				options: {},
			},
		},
		postgres(
			id(8),
			NODES.reserve,
			sql.reserve,
			// $4: each key's delivery as a jsonb[] literal; NULL (not stored) when over the record cap.
			`={{ [${textArray(KEY_OF_KEY_NODE)}, ${TOKEN_OF_KEY_NODE}, ${lease}, $json.${DELIVERY_FIELD} === '' ? '{NULL}' : ${textArray(`$json.${DELIVERY_FIELD}`)}] }}`,
			[2420, 200],
			BUILT_IN_CREDENTIALS.postgres,
			{ alwaysOutputData: true },
		),
		switchNode(
			id(9),
			NODES.verdict,
			[
				['new', `$json.state === 'reserved'`],
				[
					'duplicate',
					`$json.key !== undefined && $json.state !== 'reserved' && $json.state !== 'in_progress'`,
				],
				['in flight', `$json.key === undefined || $json.state === 'in_progress'`],
			],
			[2640, 200],
		),
		ifNode(
			id(41),
			AF.answerFirst,
			`$('${AF.delivery}').first().json.${DELIVERY_FIELD} !== ''`,
			[2860, 0],
		),
		respond(id(42), AF.accepted, 200, '={{ { "status": "accepted" } }}', [3080, -100]),
		{
			id: id(43),
			name: AF.event,
			type: 'n8n-nodes-base.set',
			typeVersion: 3.4,
			position: [3300, 0],
			parameters: { mode: 'manual', assignments: { assignments: EVENT }, options: {} },
		},
		postgres(
			id(10),
			NODES.business,
			'INSERT INTO business_log (event_key, event_type) VALUES ($1, $2)',
			// The item, never $('Webhook'): a redriven run has no Webhook output.
			`={{ [$json.key, $json.body?.type ?? null] }}`,
			[3520, 0],
			BUILT_IN_CREDENTIALS.business,
			{ onError: 'continueErrorOutput' },
		),
		postgres(
			id(11),
			NODES.complete,
			sql.complete,
			`={{ [${textArray(EVENT_OF('key'))}, ${textArray(EVENT_OF('ownerToken'))}] }}`,
			[3740, -100],
			BUILT_IN_CREDENTIALS.postgres,
		),
		ifNode(id(44), AF.answeredDone, EVENT_OF('answered'), [3960, -100]),
		respond(id(12), NODES.processed, 200, '={{ { "status": "processed" } }}', [4180, 0]),
		postgres(
			id(13),
			NODES.release,
			sql.release,
			`={{ [${textArray(EVENT_OF('key'))}, ${textArray(EVENT_OF('ownerToken'))}] }}`,
			[3740, 120],
			BUILT_IN_CREDENTIALS.postgres,
		),
		ifNode(id(45), AF.answeredFailed, EVENT_OF('answered'), [3960, 120]),
		respond(
			id(14),
			NODES.failed,
			500,
			`={{ { "status": "failed", "key": ${EVENT_OF('key')} } }}`,
			[4180, 220],
		),
		respond(
			id(15),
			NODES.duplicate,
			200,
			`={{ { "status": "duplicate", "key": ${KEY_OF_KEY_NODE} } }}`,
			[2860, 260],
		),
		respond(
			id(16),
			NODES.inFlight,
			409,
			`={{ { "status": "in_progress", "key": ${KEY_OF_KEY_NODE}, "retryAfterSeconds": $json.int4 ?? ${Math.ceil(lease)} } }}`,
			[2860, 460],
			[{ name: 'Retry-After', value: `={{ $json.int4 ?? ${Math.ceil(lease)} }}` }],
		),
		...redriveNodes(settings, sql, options),
		...deadLetterNodes(sql),
	];
}

/** The Schedule Trigger's interval: seconds below a minute, whole minutes from there (builtInInputs.ts checks which). */
export function checkInterval(seconds: number): Record<string, unknown> {
	return seconds < 60
		? { field: 'seconds', secondsInterval: seconds }
		: { field: 'minutes', minutesInterval: seconds / 60 };
}

/** The Schedule Trigger and the fenced claim, whose claimed key runs Event to Run. */
function redriveNodes(
	settings: PlannerSettings,
	sql: AnswerFirstStatements,
	options: AnswerFirstOptions,
): WorkflowNode[] {
	return [
		{
			id: id(46),
			name: AF.schedule,
			type: 'n8n-nodes-base.scheduleTrigger',
			typeVersion: 1.2,
			position: [2640, 800],
			parameters: { rule: { interval: [checkInterval(options.checkEverySeconds)] } },
		},
		postgres(
			id(47),
			AF.claim,
			sql.claim,
			// $1 this claim's token (each key's owner is it + '.' + md5(key)): the execution id is unique per
			// run; $6 this workflow, whose stored deliveries alone it runs; $7 no keys of other workflows.
			`={{ ['redrive-' + $execution.id, ${settings.leaseSeconds}, ${options.maxAttempts}, ${EVENTS_PER_CHECK}, ${options.backoffSeconds}, String($workflow.id), false] }}`,
			[2860, 800],
			BUILT_IN_CREDENTIALS.postgres,
		),
		switchNode(
			id(48),
			AF.claimed,
			[
				['claimed', `$json.outcome === 'claimed'`],
				['dead letter', `$json.outcome === 'dead'`],
			],
			[3080, 800],
		),
		{
			id: id(49),
			name: AF.deadLetterAlert,
			type: 'n8n-nodes-base.noOp',
			typeVersion: 1,
			position: [3300, 900],
			parameters: {},
		},
	];
}

/**
 * The keys of a text (commas, spaces or new lines between them) as a text[] literal, distinct and
 * sorted as the Keys node sends them: the Postgres node sends arrays as JSON, so this is how $1 gets them.
 */
function keyArray(text: string): string {
	return `'{' + [...new Set(String(${text} ?? '').split(/[\\s,]+/).filter((k) => k !== ''))].sort().map((k) => '"' + k.replaceAll('\\\\', '\\\\\\\\').replaceAll('"', '\\\\"') + '"').join(',') + '}'`;
}

/** Run by Hand: the dead letters named in the Set node retried (run again by the next check) or dropped. */
function deadLetterNodes(sql: AnswerFirstStatements): WorkflowNode[] {
	const keys = (field: string) => keyArray(`$('${AF.deadLetterKeys}').first().json.${field}`);
	return [
		{
			id: id(50),
			name: AF.byHand,
			type: 'n8n-nodes-base.manualTrigger',
			typeVersion: 1,
			position: [2640, 1100],
			parameters: {},
		},
		{
			id: id(51),
			name: AF.deadLetterKeys,
			type: 'n8n-nodes-base.set',
			typeVersion: 3.4,
			position: [2860, 1100],
			parameters: {
				mode: 'manual',
				assignments: {
					assignments: [
						{ id: 'retry', name: 'retry', value: '', type: 'string' },
						{ id: 'drop', name: 'drop', value: '', type: 'string' },
					],
				},
				options: {},
			},
		},
		postgres(
			id(52),
			AF.retry,
			sql.retryDeadLetters,
			`={{ [${keys('retry')}] }}`,
			[3080, 1040],
			BUILT_IN_CREDENTIALS.postgres,
			{ executeOnce: true },
		),
		postgres(
			id(53),
			AF.drop,
			sql.dropDeadLetters,
			`={{ [${keys('drop')}] }}`,
			[3300, 1040],
			BUILT_IN_CREDENTIALS.postgres,
			{ executeOnce: true },
		),
	];
}

/** The connections of the answer-first part, from Key Storable? on. */
export function answerFirstConnections(): BuiltInWorkflow['connections'] {
	const to = (node: string) => [{ node, type: 'main' as const, index: 0 }];
	return {
		[NODES.storable]: { main: [to(AF.delivery), to(NODES.invalidKey)] },
		[AF.delivery]: { main: [to(NODES.reserve)] },
		[NODES.reserve]: { main: [to(NODES.verdict)] },
		[NODES.verdict]: { main: [to(AF.answerFirst), to(NODES.duplicate), to(NODES.inFlight)] },
		// Stored: answered at once, then run. Not stored (over the cap): run, answered last.
		[AF.answerFirst]: { main: [to(AF.accepted), to(AF.event)] },
		[AF.accepted]: { main: [to(AF.event)] },
		[AF.event]: { main: [to(NODES.business)] },
		[NODES.business]: { main: [to(NODES.complete), to(NODES.release)] },
		[NODES.complete]: { main: [to(AF.answeredDone)] },
		// Answered first: nothing more to say. Answered last: 200 processed, or 500 so the sender retries.
		[AF.answeredDone]: { main: [[], to(NODES.processed)] },
		[NODES.release]: { main: [to(AF.answeredFailed)] },
		[AF.answeredFailed]: { main: [[], to(NODES.failed)] },
		[AF.schedule]: { main: [to(AF.claim)] },
		[AF.claim]: { main: [to(AF.claimed)] },
		[AF.claimed]: { main: [to(AF.event), to(AF.deadLetterAlert)] },
		[AF.byHand]: { main: [to(AF.deadLetterKeys)] },
		[AF.deadLetterKeys]: { main: [to(AF.retry)] },
		[AF.retry]: { main: [to(AF.drop)] },
	};
}
