/**
 * What the answer-first built-in workflow says about itself (builtInAnswerFirst.ts): its sticky note
 * (credentials, the tables, the order to set it up in, what it cannot promise next to the package's
 * Answer First and Redrive Trigger) and ANSWER_FIRST_NOTES, which docs/cloud.md lists too.
 */
import { tableRef } from '../../nodes/shared/store/identifiers';
import { MAX_RECORD_BYTES } from '../../nodes/shared/store/recordSize';
import { PROVIDERS } from '../../nodes/shared/webhook/providers';
import {
	ANSWER_FIRST_NODES as AF,
	type AnswerFirstOptions,
	type AnswerFirstStatements,
} from './builtInAnswerFirst';
import { INVALID_SIGNATURE, UNSUPPORTED_MEDIA_TYPE } from './builtInCheckNodes';
import type { BuiltInHandshake } from './builtInHandshake';
import { INVALID_KEY } from './builtInKey';
import { BUILT_IN_CREDENTIALS, id, NODES, SECRET_ENV, type WorkflowNode } from './builtInNodes';
import {
	BUILT_IN_NOTES,
	BUSINESS_LOG_TABLE,
	handshakeLine,
	PLANNER_URL,
	seeDuplicate,
} from './builtInNotes';
import { BUILT_IN_SIGNATURES, type BuiltInSignature } from './builtInSignature';
import type { PlannerSettings } from '../settings';

/** Every provider the built-in path expresses gets an answer-first workflow too (workflows/cloud/answer-first/). */
export function answerFirstProviders(): string[] {
	return BUILT_IN_SIGNATURES.flatMap((s) => (s.supported ? [s.signature.provider] : []));
}

/** The general notes of the built-in path that hold here too: all but "no answering first". */
const SHARED_NOTES = BUILT_IN_NOTES.filter((note) => !note.startsWith('No answering first'));

/**
 * What the answer-first workflow cannot promise next to the package's Answer First and Redrive
 * Trigger, or does differently; on the sticky note and in docs/cloud.md.
 */
export const ANSWER_FIRST_NOTES: readonly string[] = [
	`No lease keeper: the package renews the lease while the execution that holds it is alive (Keep the Lease While Running), so a slow step is never run twice. Built-in nodes cannot: an execution runs one node at a time, no node runs beside the business step, and nothing renews the lease from outside. A business step that runs longer than the lease is claimed by the next check and run a second time beside the first. Set the lease (the planner's lease; 300 s in the prebuilt files) above the slowest business step; the cost: after a crash, the event waits for the lease, the backoff and a check before it runs again.`,
	`Each check is an execution of its own, even when there is nothing to claim, and n8n Cloud counts executions against the plan: every 60 s (the prebuilt files) is 1,440 a day. Checking less often only delays a crashed or failed event.`,
	`One key per check (the Redrive Trigger starts up to 10 executions per check): a backlog of keys is run one a check.`,
	`A failing business step reopens an answered event (Release Key ends its lease; it is never deleted) and the next check after the backoff runs it again; an event answered last is released as before and answered 500, so the sender retries.`,
	`Dead letters: after Max Attempts the claim marks the key dead_letter and hands it to ${AF.deadLetterAlert}; ${AF.byHand} retries (run again by the next check, attempts counted afresh) or drops the keys written into ${AF.deadLetterKeys}. No lookup node: list them with SELECT key FROM the key table WHERE status = 'dead_letter'.`,
	`A redriven run has no Webhook output: the business step reads the item ($json.key, $json.body, $json.headers, $json.query), as Event to Run gives it on both paths.`,
];

/** The sticky note node, the workflow's last. */
export function answerFirstNoteNode(
	settings: PlannerSettings,
	signature: BuiltInSignature,
	sql: AnswerFirstStatements,
	options: AnswerFirstOptions,
	line: 1 | 2,
	keyOnBody: boolean,
	handshake: BuiltInHandshake | undefined,
): WorkflowNode {
	return {
		id: id(17),
		name: NODES.note,
		type: 'n8n-nodes-base.stickyNote',
		typeVersion: 1,
		position: [0, -1900],
		parameters: {
			content: stickyNote(settings, signature, sql, options, line, keyOnBody, handshake),
			height: 2150,
			width: 1500,
		},
	};
}

function timeoutOf(signature: BuiltInSignature): string {
	const provider = PROVIDERS.find(({ value }) => value === signature.provider);
	return provider !== undefined && 'seconds' in provider.timeout
		? `${signature.label} waits ${provider.timeout.seconds} s for the answer`
		: `${signature.label} does not say how long it waits for the answer`;
}

function stickyNote(
	settings: PlannerSettings,
	signature: BuiltInSignature,
	sql: AnswerFirstStatements,
	options: AnswerFirstOptions,
	line: 1 | 2,
	keyOnBody: boolean,
	handshake: BuiltInHandshake | undefined,
): string {
	const secret =
		line === 2
			? `a **Crypto** credential "${BUILT_IN_CREDENTIALS.crypto}" with the ${signature.label} signing secret as HMAC Secret`
			: `n8n 1.x has no Crypto credential: Signature HMAC reads the ${signature.label} signing secret from the environment variable ${SECRET_ENV}`;
	const provider = PROVIDERS.find(({ value }) => value === signature.provider);
	return [
		`## Answer first with built-in nodes only (${signature.label})`,
		`Made by the n8n-nodes-idempotency key planner (${PLANNER_URL}) for n8n Cloud. ${timeoutOf(signature)}: this workflow answers 200 {"status":"accepted"} as soon as the verified delivery is stored with its key, then runs the business step, and runs it again from the stored delivery if n8n died or the step failed. Every node is an n8n-nodes-base node; no Code node; every statement is the package's own.`,
		`Credentials: ${secret}; **Postgres** credentials "${BUILT_IN_CREDENTIALS.postgres}" (the key table: Reserve Key, Complete Key, Release Key, Claim Due Key, Retry and Drop Dead Letters) and "${BUILT_IN_CREDENTIALS.business}" (your business step).`,
		`Key table ${tableRef(settings.schema, settings.table).qualified}, lease ${settings.leaseSeconds} s${settings.namespace ? `, namespace ${JSON.stringify(settings.namespace)}` : ''}; a check every ${options.checkEverySeconds} s, Max Attempts ${options.maxAttempts}, backoff ${options.backoffSeconds} s (doubled per attempt, at most an hour). Create the tables once (a **Postgres** node with operation **Execute Query**, run once with **Execute step**, then deleted):`,
		'```sql',
		sql.createTable,
		'',
		BUSINESS_LOG_TABLE,
		'```',
		'### In order',
		`1. Import, create the credentials, create the tables (above). 2. **Publish**: the Webhook answers and **${AF.schedule}** starts checking. 3. Register the Production URL at ${signature.label}. 4. Send: the delivery is answered {"status":"accepted"} at once; the execution goes on to **${NODES.business}** and **${NODES.complete}**. 5. Replace the business step with yours: it reads the item ($json.body…), never $('Webhook'); keep its error output on **${NODES.release}**.`,
		`One workflow, not two: the Webhook and **${AF.schedule}** share one import, one publish and one business step (both paths run **${AF.event}** → the business step), and the claim runs only the events whose stored delivery names this workflow ($workflow.id), so two answer-first workflows on one key table never run each other's.`,
		'### What happens to an event',
		`- Stored (up to ${MAX_RECORD_BYTES / 1024} KiB, without any signature header, credential header, secret body field or credential query parameter: the package's rules): answered 200 accepted, then run. Over ${MAX_RECORD_BYTES / 1024} KiB: not stored, run first and answered last (200 processed, or 500), as by the package.`,
		`- n8n dies during the step, or the step fails: once the lease (or, after a failure, the backoff) has ended, **${AF.claim}** takes the key over (new owner, attempts + 1, FOR UPDATE SKIP LOCKED: two n8n mains never claim one key) and runs **${AF.event}** from the stored delivery; after ${options.maxAttempts} runs it is a dead letter (**${AF.deadLetterAlert}**: wire Slack, email or a ticket there).`,
		`- Dead letters: write their keys into **${AF.deadLetterKeys}** (retry or drop) and run the workflow from **${AF.byHand}** (the Execute workflow button's trigger list, or that node's own execute button): only that path runs; a retried key runs at the next check.`,
		'### What it refuses, before anything is stored',
		`- A multipart body or a signature that does not match: 401 (type ${INVALID_SIGNATURE.type}). A signed delivery under another media type: 415 (type ${UNSUPPORTED_MEDIA_TYPE.type}). An event id that cannot be a key: 400 (type ${INVALID_KEY.type}).`,
		...(keyOnBody && !signature.signsEventId
			? [
					`- ${signature.label} does not sign its id header: the key is the digest of the signed content (replay guard).`,
				]
			: []),
		...(handshake === undefined ? [] : ['### Connecting', handshakeLine(signature, handshake)]),
		'### Seeing "duplicate"',
		`${signature.label}: ${provider === undefined ? '' : seeDuplicate(provider)}. A repeat is answered {"status":"duplicate"}; one while the event runs, 409.`,
		'### What answer first cannot promise here, next to the package',
		...ANSWER_FIRST_NOTES.map((note) => `- ${note}`),
		'### What the built-in path cannot promise next to the package',
		...SHARED_NOTES.map((note) => `- ${note}`),
	].join('\n');
}
