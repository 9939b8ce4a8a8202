/**
 * The "built-in nodes only" workflow: the package's main guarantees made of n8n-nodes-base nodes
 * alone, for n8n Cloud (which installs only verified community nodes, and this package, opening a
 * TCP connection, can never be verified) and for n8n 3 instances that keep unverified packages off.
 * The signature is checked with the Crypto node before anything is reserved; the key is the
 * package's `evt:` / `sha256:` key; the reservation, completion and release are the very statements
 * the package runs (planStatements, from nodes/shared/store/sql), one Postgres node each, their
 * values passed as the Postgres node's query parameters. No Code node. Pure: no DOM, no n8n import,
 * so the page (planner/page/main.ts) and the CLI (scripts/planner.mjs) build the same JSON.
 */
import { BuiltInError } from './builtInError';
import { checkBuiltInInputs, type BuiltInOptions } from './builtInInputs';
import { checkNodes } from './builtInCheckNodes';
import { builtInHandshake, handshakeNodes, HANDSHAKE_NODES } from './builtInHandshake';
import { digestOf, keyNodes, keysOnDigest } from './builtInKey';
import { NODES, type BuiltInWorkflow, type WorkflowNode } from './builtInNodes';
import { noteNode } from './builtInNotes';
import { builtInSignatureOf, BUILT_IN_SIGNATURES } from './builtInSignature';
import { builtInStatements, storeNodes } from './builtInStoreNodes';
import {
	answerFirstConnections,
	answerFirstNodes,
	answerFirstStatements,
} from './builtInAnswerFirst';
import { answerFirstNoteNode } from './builtInAnswerFirstNotes';
import type { PlannerSettings } from '../settings';
import { PROVIDERS } from '../../nodes/shared/webhook/providers';

// What the page (planner/page/main.ts), the CLI bundle and the tests import, from the files that make it.
export { BUILT_IN_SIGNATURES, BuiltInError };
export { QUERY_IS_TEXT, URL_EXPRESSION } from './builtInSignature';
export { builtInSupport } from './builtInSignature';
export { builtInHandshake } from './builtInHandshake';
export { defaultWebhookPath, REPLAY_GUARDS } from './builtInInputs';
export type { BuiltInOptions, ReplayGuard } from './builtInInputs';
export { TOLERANCE_SECONDS } from './builtInCheckNodes';
export { BUILT_IN_CREDENTIALS, SECRET_ENV } from './builtInNodes';
export type { BuiltInWorkflow } from './builtInNodes';
export { BUILT_IN_NOTES, PLANNER_URL, seeDuplicate } from './builtInNotes';
export { builtInStatements } from './builtInStoreNodes';
export {
	ANSWER_FIRST_DEFAULTS,
	ANSWER_FIRST_NODES,
	answerFirstStatements,
	EVENTS_PER_CHECK,
} from './builtInAnswerFirst';
export type { AnswerFirstOptions, AnswerFirstStatements } from './builtInAnswerFirst';
export { ANSWER_FIRST_NOTES, answerFirstProviders } from './builtInAnswerFirstNotes';
export { storedHeadersFor } from './builtInDelivery';
export type { BuiltInStatements } from './builtInStoreNodes';
export { DEFAULT_SETTINGS, KEY_SOURCES } from '../settings';

/** Where the node types come from: n8n's own nodes, on every n8n including Cloud. */
export const BUILT_IN_PREFIX = 'n8n-nodes-base.';

/**
 * The workflow for these settings and provider. Throws BuiltInError for a provider or setting the
 * built-in nodes cannot express (the message says why).
 */
export function builtInWorkflow(
	settings: PlannerSettings,
	options: BuiltInOptions,
): BuiltInWorkflow {
	// First, so nothing of a refused input reaches a node (builtInInputs.ts).
	const inputs = checkBuiltInInputs(settings, options);
	const support = builtInSignatureOf(options.provider);
	if (support === undefined)
		throw new BuiltInError(
			`Unknown provider "${options.provider}"`,
			`Use one of ${BUILT_IN_SIGNATURES.filter((s) => s.supported)
				.map((s) => (s.supported ? s.signature.provider : ''))
				.join(', ')}.`,
		);
	if (!support.supported)
		throw new BuiltInError(
			support.reason,
			'Choose another provider, or use the package on a self-hosted n8n.',
		);
	const signature = support.signature;
	const line = inputs.line;
	// The one decision of the replay guard: an id header the scheme does not sign is not the key; the
	// digest of the signed content is (the raw body's SHA-256, or Linear's body less its timestamp).
	const guardOn = inputs.replayGuard === 'on';
	const keyOnBody = keysOnDigest(settings, signature, guardOn);
	const digestNode = digestOf(signature).node;
	const lease = settings.mode === 'lease';
	const sql = builtInStatements(settings);
	const handshake = builtInHandshake(PROVIDERS.find(({ value }) => value === signature.provider)!);
	const answered = handshake?.answered
		? handshakeNodes(handshake.handshake, line, digestNode)
		: undefined;

	const answerFirst = options.answerFirst;
	const afSql = answerFirst === undefined ? undefined : answerFirstStatements(settings);
	const nodes: WorkflowNode[] = [
		...checkNodes(signature, line, inputs.webhookPath),
		...(answered?.nodes ?? []),
		...keyNodes(
			settings,
			inputs,
			{ idUnsigned: guardOn && !signature.signsEventId, keyOnDigest: keyOnBody },
			signature,
		),
		...(answerFirst === undefined || afSql === undefined
			? [
					...storeNodes(settings, sql),
					noteNode(settings, signature, sql, line, keyOnBody, handshake),
				]
			: [
					...answerFirstNodes(settings, signature.provider, afSql, answerFirst),
					answerFirstNoteNode(settings, signature, afSql, answerFirst, line, keyOnBody, handshake),
				]),
	];

	const to = (node: string) => [{ node, type: 'main' as const, index: 0 }];
	const connections: BuiltInWorkflow['connections'] = {
		[NODES.webhook]: { main: [to(NODES.rawOnly)] },
		[NODES.rawOnly]: { main: [to(NODES.rawText), to(NODES.invalid)] },
		[NODES.rawText]: { main: [to(NODES.hmac)] },
		[NODES.hmac]: { main: [to(NODES.valid)] },
		[NODES.valid]: { main: [to(NODES.sentAsSigned), to(NODES.invalid)] },
		// A handshake the sender signed is recognised once the body is read as signed, and answered
		// before anything is reserved; everything else goes on to the key.
		[NODES.sentAsSigned]: {
			main: [to(answered ? HANDSHAKE_NODES.switch : digestNode), to(NODES.unsupportedMediaType)],
		},
		...answered?.connections,
		[digestNode]: { main: [to(lease ? NODES.token : NODES.key)] },
		...(lease ? { [NODES.token]: { main: [to(NODES.key)] } } : {}),
		[NODES.key]: { main: [to(NODES.storable)] },
		[NODES.storable]: { main: [to(NODES.reserve), to(NODES.invalidKey)] },
		[NODES.reserve]: { main: [to(NODES.verdict)] },
		[NODES.verdict]: {
			main: lease
				? [to(NODES.business), to(NODES.duplicate), to(NODES.inFlight)]
				: [to(NODES.business), to(NODES.duplicate)],
		},
		[NODES.business]: { main: [to(lease ? NODES.complete : NODES.processed), to(NODES.release)] },
		...(lease ? { [NODES.complete]: { main: [to(NODES.processed)] } } : {}),
		[NODES.release]: { main: [to(NODES.failed)] },
		// Answer first: its own key store part from Key Storable? on (builtInAnswerFirst.ts).
		...(answerFirst === undefined ? {} : answerFirstConnections()),
	};
	return {
		name: `Idempotent webhook, built-in nodes only (${signature.label}, ${answerFirst === undefined ? `${settings.mode} mode` : 'answer first'}${line === 1 ? ', n8n 1.x' : ''})`,
		nodes,
		connections,
		settings: { executionOrder: 'v1' },
		pinData: {},
		meta: { templateCredsSetupCompleted: false },
	};
}
