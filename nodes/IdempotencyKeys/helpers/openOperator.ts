import type { IExecuteFunctions, NodeOperationError } from 'n8n-workflow';

import { setupError } from '../../shared/errors/nodeErrors';
import { failWhole } from '../../shared/run/failWhole';
import { openKeyStore, type OpenedStore } from '../../shared/run/openKeyStore';
import { FailedStep, statementStep } from '../../shared/run/storeStep';
import { OperatorQueries } from '../../shared/store/operatorQueries';

export interface OpenedOperator<Settings> extends OpenedStore {
	queries: OperatorQueries;
	settings: Settings;
}

/**
 * openKeyStore's flow (credential, validated table name, the credential's shared pool), with the
 * operators' queries on the same pool. A setup failure or a bad setting fails every item at once.
 */
export async function openOperator<Settings>(
	context: IExecuteFunctions,
	readSettings: () => Settings,
): Promise<OpenedOperator<Settings> | FailedStep> {
	try {
		const opened = await openKeyStore(context);
		const settings = readSettings();
		return { ...opened, queries: new OperatorQueries(opened.entry, opened.store.ref), settings };
	} catch (error) {
		return new FailedStep(failWhole(context, setupError(context.getNode(), error), 1));
	}
}

/**
 * Runs the operation's statements with the package's database errors (one clear sentence, every
 * item failed or sent to the error output). Nothing is created here: an operator's look at a
 * table that does not exist says so instead of creating it.
 */
export async function operatorStatement<Result>(
	context: IExecuteFunctions,
	opened: OpenedOperator<unknown>,
	action: string,
	work: (queries: OperatorQueries) => Promise<Result>,
	itemErrors?: ReadonlyMap<number, NodeOperationError>,
): Promise<Result | FailedStep> {
	return await statementStep(
		context,
		opened,
		{ outputCount: 1, action, prepare: { create: false, lease: false }, itemErrors },
		async () => await work(opened.queries),
	);
}
