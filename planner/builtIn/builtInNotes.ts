/**
 * What the built-in workflow says about itself (planner/builtIn/builtIn.ts): BUILT_IN_NOTES, what it cannot
 * promise next to the package (the planner page, the sticky note and docs/cloud.md list them), and
 * the sticky note: credentials, the CREATE TABLE to run once, what it refuses, those notes.
 */
import { tableRef } from '../../nodes/shared/store/identifiers';
import { INVALID_SIGNATURE, TOLERANCE_SECONDS, UNSUPPORTED_MEDIA_TYPE } from './builtInCheckNodes';
import { INVALID_KEY } from './builtInKey';
import { BUILT_IN_CREDENTIALS, id, NODES, SECRET_ENV, type WorkflowNode } from './builtInNodes';
import type { BuiltInHandshake } from './builtInHandshake';
import { BUILT_IN_SIGNATURES, type BuiltInSignature } from './builtInSignature';
import { listText } from './listText';
import { PROVIDERS, type ProviderDefinition } from '../../nodes/shared/webhook/providers';

const providerOf = (signature: BuiltInSignature): ProviderDefinition =>
	PROVIDERS.find(({ value }) => value === signature.provider) as ProviderDefinition;
import type { BuiltInStatements } from './builtInStoreNodes';
import type { PlannerSettings } from '../settings';

/** Where the key planner page is published (docs/planner.md): the Cloud path's one page, no clone needed. */
export const PLANNER_URL = 'https://n8n-nodes-idempotency.github.io/n8n-nodes-idempotency/';

const supported = BUILT_IN_SIGNATURES.flatMap((s) => (s.supported ? [s.signature] : []));
const labelsWhere = (test: (signature: BuiltInSignature) => boolean) =>
	listText(supported.filter(test).map((signature) => signature.label));

/** The senders' own answer timeouts under 10 s, shortest first: "Slack and Zoom: 3 s; Shopify: 5 s". */
function shortTimeouts(): string {
	const bySeconds = new Map<number, string[]>();
	for (const provider of PROVIDERS) {
		const support = BUILT_IN_SIGNATURES.find(
			(s) => s.supported && s.signature.provider === provider.value,
		);
		if (support === undefined || !('seconds' in provider.timeout) || provider.timeout.seconds >= 10)
			continue;
		bySeconds.set(provider.timeout.seconds, [
			...(bySeconds.get(provider.timeout.seconds) ?? []),
			provider.label,
		]);
	}
	return [...bySeconds.entries()]
		.sort(([a], [b]) => a - b)
		.map(([seconds, labels]) => `${listText(labels)}: ${seconds} s`)
		.join('; ');
}

/**
 * What this path cannot promise next to the package; shown on the page, in the sticky note, in
 * docs/cloud.md. Every sender named here is read from the provider table (through
 * BUILT_IN_SIGNATURES), so a provider added to the table is named where it belongs.
 */
export const BUILT_IN_NOTES: readonly string[] = [
	'Signatures are compared by an If node as text, not in constant time (the package uses crypto.timingSafeEqual).',
	"One signing secret (in a Crypto credential; on n8n 1.x, in an environment variable): no previous secret during a rotation (several signatures in one header, as during a sender's own rotation, are accepted).",
	`${labelsWhere((s) => s.input.kind === 'text')} sign a text made of the body: Extract From File decodes the raw body as UTF-8, so a body that is not valid UTF-8 fails the check (401). The body hash of the sha256: key is taken of that text too: the same as the package's for any UTF-8 body.`,
	'No stored answers: a duplicate is answered {"status":"duplicate"}, not with the first delivery\'s answer (Complete Key\'s stored response).',
	'No fingerprints: a key reused with another payload is a plain duplicate.',
	'No Exactly-Once SQL and no Idempotency Step: the business step and the completion are two statements, so a crash between them runs the business step again once the lease ends.',
	"A JSON number as event id is used only as a safe integer (below 2^53), other numbers are answered 400; the package reads any number's exact digits from the raw body.",
	`The key table is not created for you: run the CREATE TABLE statements in this note once (the key planner, ${PLANNER_URL}, shows them for other settings).`,
	`No Purge: delete old keys with the purge statement the key planner shows (${PLANNER_URL}) on a Schedule Trigger and a Postgres node.`,
	'No lock-timeout diagnosis and no hints: a failing Postgres node ends the execution and n8n answers 500, so the sender retries. An event id that cannot be a key (an object or array, NUL, half a surrogate pair, over 1,000 bytes) is answered 400 problem+json before anything is reserved, as by the package.',
	"Multipart bodies (multipart/*) are refused with 401: n8n's Webhook node hands their fields and files instead of the raw bytes, so their signature cannot be checked. JSON, text and form-urlencoded bodies are checked as usual.",
	`${labelsWhere((s) => !s.signsEventId)} do not sign their delivery id header, so the replay guard keys them on a digest of the signed content (sha256: of the raw body; signed: of the signed content less what the sender renews on each retry${supported.some((s) => !s.signsEventId && s.digest.kind === 'signedContent') ? `, for ${labelsWhere((s) => !s.signsEventId && s.digest.kind === 'signedContent')}` : ''}): a captured delivery resent under a new id is a duplicate, and two deliveries with identical signed content are one event (a workflow made with the replay guard off, on the planner's command line, keys on the header instead).`,
	"A delivery is read only as its sender sends it: a Content-Type that is not one of the sender's media types, a charset other than UTF-8, JSON bytes claimed as a form, or a JSON body n8n read other than the signed bytes is answered 415 problem+json (unsupported-media-type) before anything is reserved. A form body is read as n8n parses it; the package also checks that parse against the signed bytes.",
	'The Postgres node writes the query parameters into the SQL text itself (escaped by its driver, pg-promise) rather than sending them as bind parameters.',
	'A 409 (in flight) is delivered again only by a sender that retries on its own (how each sender retries: the provider table of docs/signatures.md): from any other, redeliver it by hand.',
	`No answering first: the workflow answers when the business step has finished, so a step slower than the sender's timeout (${shortTimeouts()}) is retried by the sender and answered 409 while it runs. A Respond to Webhook before the step would lose the event if n8n died during it: nothing here runs it again (the package's Answer First and Redrive Trigger do).`,
];

/** The example table the placeholder business step inserts into (README's Quick start step 1 has the same). */
export const BUSINESS_LOG_TABLE = [
	'CREATE TABLE IF NOT EXISTS business_log (',
	'  id bigserial PRIMARY KEY,',
	'  event_key text NOT NULL,',
	'  event_type text,',
	'  created_at timestamptz NOT NULL DEFAULT now()',
	');',
].join('\n');

/**
 * How a user sees this sender's delivery answered "duplicate" (docs/cloud.md's provider table and the
 * sticky note): its own resend button where the provider table names one, else its own retry, which
 * comes only after a failed answer.
 */
export function seeDuplicate(provider: ProviderDefinition): string {
	return provider.resend !== undefined
		? `send one delivery again by hand: ${provider.resend.how}`
		: `no resend button is documented: it sends an event again only when it retries (${provider.retries}), so a delivery answered 200 is not sent again`;
}

/** The sticky note node, the workflow's last. */
export function noteNode(
	settings: PlannerSettings,
	signature: BuiltInSignature,
	sql: BuiltInStatements,
	line: 1 | 2,
	keyOnBody: boolean,
	handshake: BuiltInHandshake | undefined,
): WorkflowNode {
	return {
		id: id(17),
		name: NODES.note,
		type: 'n8n-nodes-base.stickyNote',
		typeVersion: 1,
		// Above the nodes (the first row is at y 300) with room for the whole text: a note that runs
		// over the nodes hides them from the user's clicks.
		position: [0, -1400],
		parameters: {
			content: stickyNote(settings, signature, sql, line, keyOnBody, handshake),
			height: 1650,
			width: 1300,
		},
	};
}

function stickyNote(
	settings: PlannerSettings,
	signature: BuiltInSignature,
	sql: BuiltInStatements,
	line: 1 | 2,
	keyOnBody: boolean,
	handshake: BuiltInHandshake | undefined,
): string {
	const secret =
		line === 2
			? `a **Crypto** credential "${BUILT_IN_CREDENTIALS.crypto}" with the ${signature.label} signing secret as HMAC Secret`
			: `n8n 1.x has no Crypto credential: Signature HMAC reads the ${signature.label} signing secret from the environment variable ${SECRET_ENV} (allowed unless N8N_BLOCK_ENV_ACCESS_IN_NODE=true)`;
	return [
		`## Idempotent webhook with built-in nodes only (${signature.label})`,
		`Made by the n8n-nodes-idempotency key planner (${PLANNER_URL}) for n8n Cloud and for instances without community packages. Every node is an n8n-nodes-base node; no Code node.`,
		`Credentials: ${secret}; **Postgres** credentials "${BUILT_IN_CREDENTIALS.postgres}" (the key table) and "${BUILT_IN_CREDENTIALS.business}" (your business step).`,
		`Key table ${tableRef(settings.schema, settings.table).qualified}, ${settings.mode} mode${settings.mode === 'lease' ? `, lease ${settings.leaseSeconds} s` : ''}${settings.namespace ? `, namespace ${JSON.stringify(settings.namespace)}` : ''}. Create it, and the example business_log table the placeholder business step inserts into, once before the first delivery (on n8n Cloud: a **Postgres** node with operation **Execute Query**, run once by hand with **Execute step**, then deleted):`,
		'```sql',
		sql.createTable,
		'',
		BUSINESS_LOG_TABLE,
		'```',
		'### What it refuses, before anything is reserved',
		`- A multipart body, a signature that does not match${signature.timestamp === undefined ? '' : `, or a timestamp more than ${TOLERANCE_SECONDS} s from now`}: 401 application/problem+json (type ${INVALID_SIGNATURE.type}), one detail whichever check failed.`,
		`- A signed delivery under another media type (${signature.contentTypes.join(', ')} only, UTF-8; JSON bytes claimed as a form), or whose JSON body n8n read other than the signed bytes: 415 application/problem+json (type ${UNSUPPORTED_MEDIA_TYPE.type}).`,
		...(signature.queryIsText !== undefined
			? [
					`- ${signature.label} signs the URL: the query is written back as the package does (URLSearchParams' form encoding, in n8n's order); a query value that is not text (?a[b]=1) cannot be, and is answered 401.`,
				]
			: []),
		`- An event id that cannot be a key: 400 application/problem+json (type ${INVALID_KEY.type}), the reason in detail.`,
		signature.signsEventId
			? `- A delivery resent under another id: ${signature.label} signs its event id, so it cannot be changed without failing the signature.`
			: keyOnBody
				? `- A delivery resent under a fresh id header: ${signature.label} does not sign that header, so the key is ${signature.digest.kind === 'rawBody' ? 'the SHA-256 of the signed body' : `signed: + the SHA-256 of the signed content less what ${signature.label} renews on each retry`} (replay guard), and the resent delivery is a duplicate${signature.digest.kind === 'rawBody' ? '' : `, as is ${signature.label}'s own retry`}.`
				: `- Replay guard off: the key is ${signature.label}'s unsigned id header, so a captured delivery resent under a new id header is processed again.`,
		'- Not a refusal: the key store failing is answered 500, so the sender retries.',
		...(handshake === undefined ? [] : ['### Connecting', handshakeLine(signature, handshake)]),
		'### Seeing "duplicate"',
		`${signature.label}: ${seeDuplicate(providerOf(signature))}. The repeat ends at Respond 200 duplicate in the workflow's Executions.`,
		'### What this path cannot promise next to the package',
		...BUILT_IN_NOTES.map((note) => `- ${note}`),
	].join('\n');
}

/** What the workflow does with the sender's endpoint handshake. */
export function handshakeLine(signature: BuiltInSignature, handshake: BuiltInHandshake): string {
	return handshake.answered
		? `${signature.label} checks the endpoint with its ${handshake.name} before it delivers: once the signature holds and the body is read as signed, the Handshake? switch answers it as the package does (Respond handshake), and nothing is reserved and no business step runs.`
		: handshake.reason;
}
