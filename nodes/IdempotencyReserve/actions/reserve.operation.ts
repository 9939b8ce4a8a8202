import { NodeOperationError, type IExecuteFunctions, type INodeExecutionData } from 'n8n-workflow';

import { KeyError } from '../../shared/keys/KeyError';
import { keySourceDefinition } from '../../shared/keys/keySourceTable';
import type { KeySource } from '../../shared/keys/keySources';
import { KEY_FROM_SIGNED_BODY, keyIdIsUnsigned } from '../../shared/keys/replayGuard';
import { executionToken, recordReservedKeys } from '../../shared/parameters/executionReservations';
import { failWhole } from '../../shared/run/failWhole';
import {
	answeredFor,
	readItemTargets,
	routeItems,
	type ItemRoute,
} from '../../shared/run/itemFlow';
import { FailedStep, openStoreStep, statementStep } from '../../shared/run/storeStep';
import { verifyItemSignatures } from '../../shared/signature/checkSignatures';
import type { ReserveTarget } from '../../shared/store/KeyStore';
import type { SignatureScheme } from '../../shared/webhook/signatureSchemes';
import { itemFingerprinter } from '../helpers/deriveItemFingerprint';
import { itemKeyDeriver } from '../helpers/deriveItemKey';
import { waitWhileInFlight } from '../helpers/waitInFlight';
import { reserveOutputs, type ReserveOutputs } from '../helpers/reserveOutputs';
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
} from '../helpers/reserveSettings';

function leaseSecondsOf(context: IExecuteFunctions): number {
	const seconds = Number(context.getNodeParameter('leaseSeconds', 0, DEFAULT_LEASE_SECONDS));
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
		context.getNodeParameter('options.waitInFlightSeconds', 0, DEFAULT_WAIT_IN_FLIGHT_SECONDS),
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
 * Whether the replay guard keys this run on the signed body (replayGuard.ts): Reserve verified the
 * signature with `scheme`, the option is on, and the key source reads its id from an unsigned header.
 */
function keysOnSignedBody(
	context: IExecuteFunctions,
	source: KeySource,
	scheme: SignatureScheme | undefined,
): boolean {
	if (scheme === undefined) return false;
	const location = keySourceDefinition(source)?.location;
	if (location === undefined || !keyIdIsUnsigned(location, scheme)) return false;
	return context.getNodeParameter('options.replayGuard', 0, DEFAULT_REPLAY_GUARD) as boolean;
}

/**
 * Each item's key and, where Reserve records them, its request fingerprint. `scheme`: the one
 * Reserve verified the items with, if it did.
 */
function reserveTargetReader(
	context: IExecuteFunctions,
	mode: ReserveMode,
	scheme: SignatureScheme | undefined,
) {
	const source = context.getNodeParameter('keySource', 0) as KeySource;
	const rawBodyProperty = context.getNodeParameter('rawBodyProperty', 0, 'data') as string;
	const signedBody = keysOnSignedBody(context, source, scheme);
	// The body hash of the raw body: the bytes the signature covers, so a replay is the same key.
	const keyOf = itemKeyDeriver(context, {
		source: signedBody ? 'bodyHash' : source,
		rawBodyProperty,
	});
	// The parameter's default differs by mode.
	const fingerprintSource = context.getNodeParameter(
		'fingerprint',
		0,
		defaultFingerprint(mode),
	) as FingerprintSource;
	const fingerprintOf = itemFingerprinter(context, fingerprintSource, rawBodyProperty);
	const targetOf = (
		item: INodeExecutionData,
		itemIndex: number,
	): ReserveTarget | Promise<ReserveTarget> => {
		const key = keyOf(item, itemIndex);
		const fingerprint = fingerprintOf?.(item, itemIndex);
		if (key instanceof Promise || fingerprint instanceof Promise)
			return Promise.all([key, fingerprint]).then(([k, f]) => ({ key: k, fingerprint: f }));
		return { key, fingerprint };
	};
	return { targetOf, fingerprint: fingerprintOf !== undefined, signedBody };
}

/**
 * Output 0 (`true`, `new`): reserved by this execution, run the business step. Output 1 (`false`,
 * `duplicate`): already reserved. Version 2 adds `in flight` (lease mode), `reused key` (On Mismatch)
 * and `invalid signature` (when it verifies): see reserveOutputs.ts.
 */
export async function execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const mode = this.getNodeParameter('mode', 0, DEFAULT_MODE) as ReserveMode;
	const signature = this.getNodeParameter('signature', 0, 'none') as string;
	const fingerprint = this.getNodeParameter('fingerprint', 0, undefined) as unknown;
	const onMismatch = this.getNodeParameter(
		'onMismatch',
		0,
		DEFAULT_ON_MISMATCH,
	) as MismatchHandling;
	const outputs = reserveOutputs(
		{ mode, signature, fingerprint, onMismatch },
		this.getNode().typeVersion,
	);
	let leaseSeconds = 0;
	let waitSeconds = 0;
	if (mode === 'lease') {
		try {
			leaseSeconds = leaseSecondsOf(this);
			waitSeconds = waitSecondsOf(this);
		} catch (error) {
			// Like every setup failure: error items, never the input passed on as new but unreserved.
			return failWhole(this, error as NodeOperationError, outputs.count);
		}
	}

	const settings = { mode, leaseSeconds, waitSeconds, onMismatch };
	const invalidOutput = outputs.invalidSignature;
	if (invalidOutput === undefined)
		return await reserveVerified(this, settings, outputs, undefined, undefined);

	// Verified first: an item whose signature fails reserves nothing, and with none left the key
	// store is not even asked.
	const verified = await verifyItemSignatures(this, {
		outputCount: outputs.count,
		schemeParameter: 'signature',
		invalidOutput,
	});
	if (verified.valid.size === 0) return verified.outputs;
	const reserved = await reserveVerified(this, settings, outputs, verified.valid, verified.scheme);
	reserved[invalidOutput].push(...verified.outputs[invalidOutput]);
	return reserved;
}

/**
 * Reserves the keys of the items (only those in `only` when signatures were verified, with `scheme`) in one
 * statement and routes each item by what it found: open the store, read the targets, reserve them,
 * route the items in order (the first item of a key is new, later ones are its duplicates).
 */
async function reserveVerified(
	context: IExecuteFunctions,
	{
		mode,
		leaseSeconds,
		waitSeconds,
		onMismatch,
	}: {
		mode: ReserveMode;
		leaseSeconds: number;
		waitSeconds: number;
		onMismatch: MismatchHandling;
	},
	outputs: ReserveOutputs,
	only: ReadonlySet<number> | undefined,
	scheme: SignatureScheme | undefined,
): Promise<INodeExecutionData[][]> {
	const { targetOf, fingerprint, signedBody } = reserveTargetReader(context, mode, scheme);
	const create = context.getNodeParameter('createTable', 0, true) as boolean;
	const firstSeen =
		mode === 'simple' && (context.getNodeParameter('options.firstSeen', 0, true) as boolean);
	// One token per execution: only this execution can complete or release what it reserved.
	const token = mode === 'lease' ? executionToken(context) : undefined;

	const opened = await openStoreStep(context, outputs.count);
	if (opened instanceof FailedStep) return answeredFor(opened.outputs, only);
	const targets = await readItemTargets(context, targetOf, only);
	const step = {
		outputCount: outputs.count,
		action: 'reserve the keys',
		prepare: { create, lease: mode === 'lease', fingerprint },
		itemErrors: targets.failed,
	};
	let routeOf: (target: ReserveTarget) => ItemRoute | KeyError;
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
		const lease = { token, leaseSeconds, fingerprint };
		const outcome = await statementStep(context, opened, step, async (store) => {
			const first = await store.reserveWithLease(targets.present, lease);
			if (waitSeconds === 0) return first;
			const again = async (waiting: readonly ReserveTarget[]) =>
				await store.reserveWithLease(waiting, lease);
			return (await waitWhileInFlight(first, targets.present, waitSeconds * 1000, again)).outcome;
		});
		if (outcome instanceof FailedStep) return answeredFor(outcome.outputs, only);
		routeOf = (target) => routeLease(outcome, target, token, leaseSeconds, onMismatch, outputs);
	}

	// Complete Key and Release Key left empty act on what this execution reserved.
	const reservedHere: string[] = [];
	const routed = routeItems(context, targets, outputs.count, (target) => {
		const route = routeOf(target);
		if (route instanceof KeyError) return route;
		if (route.output === outputs.new) reservedHere.push(target.key);
		if (signedBody && 'idempotency' in route) route.idempotency.keyFrom = KEY_FROM_SIGNED_BODY;
		return route;
	});
	recordReservedKeys(context, reservedHere);
	return routed;
}
