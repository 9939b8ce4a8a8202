import type { IExecuteFunctions, INodeExecutionData, NodeOperationError } from 'n8n-workflow';

import { databaseError, setupError } from '../errors/nodeErrors';
import type { KeyStore, PrepareOptions } from '../store/KeyStore';
import { CONNECTION_RETRY_MS, retryOnConnectionLoss } from '../transport/connectionRetry';
import { failWhole } from './failWhole';
import { openKeyStore, type OpenedStore } from './openKeyStore';

/** Every item failed: the outputs to return (error items), or n8n was already given the error. */
export class FailedStep {
	constructor(readonly outputs: INodeExecutionData[][]) {}
}

/**
 * The flow Reserve, Complete, Release and Purge share, in two steps so a node can read its items in
 * between: open the store of the node's credential and table (a setup failure fails every item), then
 * run one statement on a prepared table (a database failure fails every item, saying what to do).
 */
export async function openStoreStep<Settings = undefined>(
	context: IExecuteFunctions,
	outputCount: number,
	/** The node's other whole-node parameters, checked with the same failure as the credential. */
	readSettings?: () => Settings,
): Promise<(OpenedStore & { settings: Settings }) | FailedStep> {
	try {
		const opened = await openKeyStore(context);
		return { ...opened, settings: readSettings?.() as Settings };
	} catch (error) {
		return new FailedStep(failWhole(context, setupError(context.getNode(), error), outputCount));
	}
}

export interface StatementStep {
	outputCount: number;
	/** Completes "PostgreSQL could not …" in error messages. */
	action: string;
	prepare: PrepareOptions;
	/** Items that already failed on their own; they keep their own error if the statement fails. */
	itemErrors?: ReadonlyMap<number, NodeOperationError>;
	/**
	 * true: the statement gives the same result when run twice (it acts only under the owner's token,
	 * or re-checks it), so a lost or refused connection is retried for CONNECTION_RETRY_MS.
	 * 'beforeSending': only failures before it reached the server are retried (a refused connection).
	 */
	repeatable?: boolean | 'beforeSending';
	/** What it leaves behind when the key store stayed unreachable through every retry. */
	whenUnreachable?: string;
}

export async function statementStep<Result>(
	context: IExecuteFunctions,
	{ store, credential }: OpenedStore,
	step: StatementStep,
	statement: (store: KeyStore) => Promise<Result>,
): Promise<Result | FailedStep> {
	const attempt = async () =>
		await store.withPreparedTable(step.prepare, async () => await statement(store));
	try {
		if (step.repeatable === undefined || step.repeatable === false) return await attempt();
		const beforeSending = step.repeatable === 'beforeSending';
		return await retryOnConnectionLoss(attempt, CONNECTION_RETRY_MS, beforeSending);
	} catch (error) {
		const failure = databaseError(
			context.getNode(),
			error,
			credential,
			step.action,
			store.ref.qualified,
			step.whenUnreachable,
		);
		return new FailedStep(failWhole(context, failure, step.outputCount, step.itemErrors));
	}
}
