import {
	NodeOperationError,
	type IExecuteFunctions,
	type INodeExecutionData,
	type NodeApiError,
} from 'n8n-workflow';

import { KeyError } from '../../shared/keys/KeyError';
import { keySourceDefinition } from '../../shared/keys/keySourceTable';
import type { KeySource } from '../../shared/keys/keySources';
import {
	executionToken,
	knownStepsScope,
	recordReservedKeys,
} from '../../shared/run/executionReservations';
import { monotonicNow, noteReservedSteps } from '../../shared/run/knownSteps';
import { nodeOfRun } from '../../shared/parameters/runNode';
import { nodeParameter } from '../../shared/parameters/nodeParameter';
import { failWhole } from '../../shared/run/failWhole';
import {
	answeredFor,
	readItemTargets,
	routeItems,
	type ItemRoute,
} from '../../shared/run/itemFlow';
import { FailedStep, openStoreStep, statementStep } from '../../shared/run/storeStep';
import { verifyItemSignatures } from '../../shared/signatureNode/checkSignatures';
import type { ReserveTarget } from '../../shared/store/KeyStore';
import type { VerifiedDelivery } from '../../shared/delivery/verifiedDelivery';
import { itemFingerprinter } from '../helpers/deriveItemFingerprint';
import { digestHex, itemKeyDeriver } from '../helpers/deriveItemKey';
import { waitWhileInFlight } from '../helpers/waitInFlight';
import { answerFirstOf, type AnswerFirst } from '../helpers/answerFirst';
import { readEmailItem } from '../../shared/keys/emailMessage';
import { keepReservedLeases, maxRunSecondsOf } from '../helpers/keepLease';
import {
	ANSWER_PROBLEMS_VERSION,
	answersItsWebhook,
	problemAnswerOf,
} from '../helpers/answerProblems';
import {
	ANSWER_REPEATS_VERSION,
	routedAnswerOf,
	type RoutedAnswers,
} from '../helpers/answerRepeats';
import { respondToWebhook } from '../../shared/run/respondToWebhook';
import {
	handedOnVerdict,
	KEY_FROM_UNSIGNED_HEADER,
	keysOnUnsignedHeader,
	signedKeyChoice,
	UNSIGNED_HEADER_HINT,
} from '../helpers/signedKeys';
import { reserveOutputs, type ReserveOutputs } from '../../shared/reserveRules/reserveOutputs';
import { routeLease, routeSimple } from '../helpers/reserveRoutes';
import {
	DEFAULT_LEASE_SECONDS,
	DEFAULT_MODE,
	DEFAULT_ON_MISMATCH,
	DEFAULT_REPLAY_GUARD,
	DEFAULT_WAIT_IN_FLIGHT_SECONDS,
	defaultFingerprint,
	MAX_LEASE_SECONDS,
	MAX_WAIT_IN_FLIGHT_SECONDS,
	type FingerprintSource,
	type MismatchHandling,
	type ReserveMode,
} from '../../shared/reserveRules/reserveSettings';

function leaseSecondsOf(context: IExecuteFunctions): number {
	const seconds = Number(nodeParameter(context, 'leaseSeconds', DEFAULT_LEASE_SECONDS));
	if (!Number.isFinite(seconds) || seconds < 1 || seconds > MAX_LEASE_SECONDS) {
		throw new NodeOperationError(
			context.getNode(),
			`Lease must be from 1 to ${MAX_LEASE_SECONDS} seconds, not ${String(seconds)}`,
			{
				description:
					'Make it longer than the slowest run from Reserve to Complete Key (a few minutes is usual).',
			},
		);
	}
	return seconds;
}

function waitSecondsOf(context: IExecuteFunctions): number {
	const seconds = Number(
		nodeParameter(context, 'options.waitInFlightSeconds', DEFAULT_WAIT_IN_FLIGHT_SECONDS),
	);
	if (!Number.isFinite(seconds) || seconds < 0 || seconds > MAX_WAIT_IN_FLIGHT_SECONDS) {
		throw new NodeOperationError(
			context.getNode(),
			`Wait While In Flight must be from 0 to ${MAX_WAIT_IN_FLIGHT_SECONDS} seconds, not ${String(seconds)}`,
			{
				description:
					'For a queue consumer a few seconds is enough: each wait bounds how often a redelivered message runs while its lease lasts.',
			},
		);
	}
	return seconds;
}

/**
 * Each item's key and, where Reserve records them, its request fingerprint. `verified`: the items
 * Reserve verified itself, each read once (verifiedDelivery.ts); without it, a verdict Verify Webhook
 * Signature left on the item counts the same (signedKeys.ts).
 */
function reserveTargetReader(
	context: IExecuteFunctions,
	{ mode, source }: { mode: ReserveMode; source: KeySource },
	verified: ReadonlyMap<number, VerifiedDelivery> | undefined,
	answerFirst: AnswerFirst | undefined,
) {
	const rawBodyProperty = nodeParameter(context, 'rawBodyProperty', 'data') as string;
	const definition = keySourceDefinition(source);
	const guard = nodeParameter(context, 'options.replayGuard', DEFAULT_REPLAY_GUARD) as boolean;
	const keyOf = itemKeyDeriver(context, { source, rawBodyProperty });
	// The parameter's default differs by mode.
	const fingerprintSource = nodeParameter(
		context,
		'fingerprint',
		defaultFingerprint(mode),
	) as FingerprintSource;
	const fingerprintOf = itemFingerprinter(context, fingerprintSource, rawBodyProperty);
	const keyFrom = new Map<number, string>();
	// Answer First: whether each item's delivery is stored (false: over the cap, answered last).
	const answeredFirst = new Map<number, boolean>();
	// Only a provider's preset reads an id header, and its value names the provider.
	const unsignedPreset =
		verified === undefined && keysOnUnsignedHeader(definition?.location, definition?.value);
	const targetOf = (
		item: INodeExecutionData,
		itemIndex: number,
	): ReserveTarget | Promise<ReserveTarget> => {
		const verdict =
			verified === undefined ? handedOnVerdict(context, item) : verified.get(itemIndex);
		const choice = signedKeyChoice(definition?.location, verdict, guard);
		if (choice.keyFrom !== undefined) keyFrom.set(itemIndex, choice.keyFrom);
		else if (unsignedPreset && verdict === undefined)
			keyFrom.set(itemIndex, KEY_FROM_UNSIGNED_HEADER);
		const key = keyOf(item, itemIndex, choice);
		// An email's key says whether it is the Message-ID or a digest, and why (emailMessage.ts).
		if (definition?.location.kind === 'emailMessage')
			keyFrom.set(itemIndex, readEmailItem(item.json, definition.location.trigger).keyFrom);
		// A verified body's fingerprint is its digest: the signed content less what each attempt renews.
		const fingerprint =
			verdict !== undefined && fingerprintSource === 'rawBody'
				? digestHex(verdict.digest)
				: fingerprintOf?.(item, itemIndex);
		const stored = answerFirst?.deliveryOf(item.json);
		if (stored !== undefined) answeredFirst.set(itemIndex, 'delivery' in stored);
		const delivery = stored !== undefined && 'delivery' in stored ? stored.delivery : undefined;
		if (key instanceof Promise || fingerprint instanceof Promise)
			return Promise.all([key, fingerprint]).then(([k, f]) => ({
				key: k,
				fingerprint: f,
				delivery,
			}));
		return { key, fingerprint, delivery };
	};
	return {
		targetOf,
		fingerprint: fingerprintOf !== undefined,
		keyFrom,
		unsignedPreset,
		answeredFirst,
	};
}

/**
 * Version 2.2 answers a failure itself behind a Webhook (answerProblems.ts), 2.3 also what it routes
 * away from the business step (answerRepeats.ts); then it routes as before.
 * Output 0 (`true`, `new`): reserved by this execution, run the business step. Output 1 (`false`,
 * `duplicate`): already reserved. Version 2 adds `in flight` (lease mode), `reused key` (On Mismatch)
 * and `invalid signature` (when it verifies): see reserveOutputs.ts.
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const answers = routedAnswerSettings(this);
	if (answers === undefined) return (await reserveItems.call(this)).routed;
	let reserved: Awaited<ReturnType<typeof reserveItems>>;
	if (!answers.problems) reserved = await reserveItems.call(this);
	else {
		try {
			reserved = await reserveItems.call(this);
		} catch (error) {
			return await answerProblem(this, error as NodeOperationError | NodeApiError);
		}
	}
	const { routed, outputs } = reserved;
	// A new event goes on to the business step (output 0): nothing to answer here.
	if (routed[0]?.length) return routed;
	const answer = routedAnswerOf(routed, outputs, answers);
	if (answer !== undefined) await respondToWebhook(this, answer);
	return routed;
}

/** What this run answers itself, or undefined when it answers nothing (answerProblems.ts, answerRepeats.ts). */
function routedAnswerSettings(context: IExecuteFunctions): RoutedAnswers | undefined {
	const version = nodeOfRun(context).typeVersion;
	if (version < ANSWER_PROBLEMS_VERSION) return undefined;
	const problems = nodeParameter(context, 'answerProblems', true) as boolean;
	const repeats =
		version >= ANSWER_REPEATS_VERSION && (nodeParameter(context, 'answerRepeats', true) as boolean);
	if (!problems && !repeats) return undefined;
	if (!answersItsWebhook(context)) return undefined;
	return {
		problems,
		// The invalid signature's 401 is a problem 2.3 answers; 2.2 left it to a Respond node.
		invalidSignature: problems && version >= ANSWER_REPEATS_VERSION,
		repeats,
		keySource: nodeParameter(context, 'keySource', undefined),
	};
}

/** A failure answered 4xx or 500 problem+json; a client's goes to no output, any other fails the node. */
async function answerProblem(
	context: IExecuteFunctions,
	failure: NodeOperationError | NodeApiError,
): Promise<INodeExecutionData[][]> {
	const { answer, clientError } = problemAnswerOf(
		failure,
		nodeParameter(context, 'keySource', undefined),
	);
	await respondToWebhook(context, answer);
	// An internal failure fails the execution after its 500: the Error Workflow runs, the sender retries.
	if (!clientError) throw failure;
	context.addExecutionHints({
		message: `Answered ${answer.statusCode} problem+json (Answer Problems): ${failure.message}. Nothing reserved for this item, no output`,
		location: 'outputPane',
	});
	return Array.from({ length: outputsOf(context).count }, () => []);
}

/** This run's outputs, read as reserveItems reads them (for a failure it threw before returning them). */
function outputsOf(context: IExecuteFunctions): ReserveOutputs {
	return reserveOutputs(
		{
			mode: nodeParameter(context, 'mode', DEFAULT_MODE),
			signature: nodeParameter(context, 'signature', 'none'),
			fingerprint: nodeParameter(context, 'fingerprint', undefined) as unknown,
			onMismatch: nodeParameter(context, 'onMismatch', DEFAULT_ON_MISMATCH),
		},
		nodeOfRun(context).typeVersion,
	);
}

/**
 * Every item reserved and routed, with the outputs it was routed by (execute answers from them); a
 * failure throws or, when the node continues on error, is an error item.
 */
async function reserveItems(
	this: IExecuteFunctions,
): Promise<{ routed: INodeExecutionData[][]; outputs: ReserveOutputs }> {
	const mode = nodeParameter(this, 'mode', DEFAULT_MODE) as ReserveMode;
	const signature = nodeParameter(this, 'signature', 'none') as string;
	const fingerprint = nodeParameter(this, 'fingerprint', undefined) as unknown;
	const onMismatch = nodeParameter(this, 'onMismatch', DEFAULT_ON_MISMATCH) as MismatchHandling;
	const outputs = reserveOutputs(
		{ mode, signature, fingerprint, onMismatch },
		nodeOfRun(this).typeVersion,
	);
	return { routed: await routeByOutputs(this, outputs, mode, onMismatch), outputs };
}

async function routeByOutputs(
	context: IExecuteFunctions,
	outputs: ReserveOutputs,
	mode: ReserveMode,
	onMismatch: MismatchHandling,
): Promise<INodeExecutionData[][]> {
	let leaseSeconds = 0;
	let waitSeconds = 0;
	let maxRunSeconds: number | undefined;
	if (mode === 'lease') {
		try {
			leaseSeconds = leaseSecondsOf(context);
			waitSeconds = waitSecondsOf(context);
			maxRunSeconds = maxRunSecondsOf(context);
		} catch (error) {
			// Like every setup failure: error items, never the input passed on as new but unreserved.
			return failWhole(context, error as NodeOperationError, outputs.count);
		}
	}

	const settings = { mode, leaseSeconds, waitSeconds, maxRunSeconds, onMismatch };
	const invalidOutput = outputs.invalidSignature;
	if (invalidOutput === undefined)
		return await reserveVerified(context, settings, outputs, undefined);

	// Verified first: an item whose signature fails reserves nothing, and with none left the key
	// store is not even asked.
	const verified = await verifyItemSignatures(context, {
		outputCount: outputs.count,
		schemeParameter: 'signature',
		invalidOutput,
	});
	if (verified.valid.size === 0) return verified.outputs;
	const reserved = await reserveVerified(context, settings, outputs, verified.valid);
	reserved[invalidOutput].push(...verified.outputs[invalidOutput]);
	return reserved;
}

/**
 * Reserves the keys of the items (only those in `verified` when Reserve checked signatures) in one
 * statement and routes each item by what it found: open the store, read the targets, reserve them,
 * route the items in order (the first item of a key is new, later ones are its duplicates).
 */
async function reserveVerified(
	context: IExecuteFunctions,
	{
		mode,
		leaseSeconds,
		waitSeconds,
		maxRunSeconds,
		onMismatch,
	}: {
		mode: ReserveMode;
		leaseSeconds: number;
		waitSeconds: number;
		/** Keep the Lease While Running's ceiling; undefined when the lease is not kept. */
		maxRunSeconds?: number;
		onMismatch: MismatchHandling;
	},
	outputs: ReserveOutputs,
	verified: ReadonlyMap<number, VerifiedDelivery> | undefined,
): Promise<INodeExecutionData[][]> {
	const only = verified === undefined ? undefined : new Set(verified.keys());
	// Read once: Answer First and the key both depend on it.
	let source: KeySource;
	let answerFirst: AnswerFirst | undefined;
	try {
		source = nodeParameter(context, 'keySource') as KeySource;
		answerFirst = answerFirstOf(context, mode, keySourceDefinition(source)?.location);
	} catch (error) {
		return answeredFor(failWhole(context, error as NodeOperationError, outputs.count), only);
	}
	const { targetOf, fingerprint, keyFrom, unsignedPreset, answeredFirst } = reserveTargetReader(
		context,
		{ mode, source },
		verified,
		answerFirst,
	);
	const create = nodeParameter(context, 'createTable', true) as boolean;
	const firstSeen =
		mode === 'simple' && (nodeParameter(context, 'options.firstSeen', true) as boolean);
	// One token per execution: only this execution can complete or release what it reserved.
	const token = mode === 'lease' ? executionToken(context) : undefined;

	const opened = await openStoreStep(context, outputs.count);
	if (opened instanceof FailedStep) return answeredFor(opened.outputs, only);
	const targets = await readItemTargets(context, targetOf, only);
	const step = {
		outputCount: outputs.count,
		action: 'reserve the keys',
		prepare: { create, lease: mode === 'lease', fingerprint, delivery: answerFirst !== undefined },
		itemErrors: targets.failed,
	};
	let routeOf: (target: ReserveTarget) => ItemRoute | KeyError;
	let noteSteps: (keys: readonly string[]) => void = () => undefined;
	if (token === undefined) {
		// Simple mode: a key is new where this statement inserted it.
		const outcome = await statementStep(
			context,
			opened,
			step,
			async (store) => await store.reserve(targets.present, { firstSeen, fingerprint }),
		);
		if (outcome instanceof FailedStep) return answeredFor(outcome.outputs, only);
		routeOf = (target) => routeSimple(outcome, target, onMismatch, outputs);
	} else {
		// Lease mode: new or taken over where this statement gave the key this execution's token.
		const lease = { token, leaseSeconds, fingerprint, delivery: answerFirst !== undefined };
		const sentAt = monotonicNow();
		const outcome = await statementStep(context, opened, step, async (store) => {
			const first = await store.reserveWithLease(targets.present, lease);
			if (waitSeconds === 0) return first;
			const again = async (waiting: readonly ReserveTarget[]) =>
				await store.reserveWithLease(waiting, lease);
			return (await waitWhileInFlight(first, targets.present, waitSeconds * 1000, again)).outcome;
		});
		if (outcome instanceof FailedStep) return answeredFor(outcome.outputs, only);
		routeOf = (target) => routeLease(outcome, target, token, leaseSeconds, onMismatch, outputs);
		// Idempotency Step asks "is this step done?" of what this statement found (knownSteps.ts);
		// taken before routing, which consumes outcome.reserved.
		const found = new Map(outcome.reserved);
		noteSteps = (keys) =>
			noteReservedSteps(knownStepsScope(context), found, keys, {
				token,
				leaseSeconds,
				sentAt,
			});
	}

	// Complete Key and Release Key left empty act on what this execution reserved.
	const reservedHere: string[] = [];
	const routed = routeItems(context, targets, outputs.count, (target, itemIndex) => {
		const route = routeOf(target);
		if (route instanceof KeyError) return route;
		if (route.output === outputs.new) reservedHere.push(target.key);
		const from = keyFrom.get(itemIndex);
		if (from !== undefined && 'idempotency' in route) route.idempotency.keyFrom = from;
		// Answer First: the template answers at once only a new key whose delivery is stored.
		const stored = answeredFirst.get(itemIndex);
		if (stored !== undefined && 'idempotency' in route && route.output === outputs.new)
			route.idempotency.answerFirst = stored;
		return route;
	});
	recordReservedKeys(context, reservedHere);
	noteSteps(reservedHere);
	if (token !== undefined && maxRunSeconds !== undefined)
		keepReservedLeases(context, opened.store, {
			keys: reservedHere,
			token,
			leaseSeconds,
			maxRunSeconds,
		});
	if (unsignedPreset && [...keyFrom.values()].includes(KEY_FROM_UNSIGNED_HEADER))
		context.addExecutionHints({ message: UNSIGNED_HEADER_HINT, location: 'outputPane' });
	return routed;
}
