import { NodeApiError, NodeOperationError, type INode, type JsonObject } from 'n8n-workflow';

import { KeyError } from '../keys/KeyError';
import { CLIENT_ERRORS, type ClientErrorKind } from '../keys/clientErrors';
import { IdentifierError } from '../store/identifiers';
import { StepStatementError } from '../store/StepStatementError';
import type { IdempotencyPostgresCredential } from '../transport/connectionOptions';
import { connectionRetryOf } from '../transport/connectionRetry';
import { describeConnectionError } from './describeConnectionError';
import { describeStatementError } from './describeStatementError';

interface PostgresError {
	message?: string;
	code?: string;
	detail?: string;
	hint?: string;
}

/** Where a NodeOperationError keeps the client-error kind of the KeyError it came from. */
const CLIENT_ERROR_CONTEXT = 'clientErrorKind';

/**
 * A bad key, name or parameter: the user's input, reported as NodeOperationError. A KeyError the
 * sender caused keeps its kind, which errorItem hands on for the template's 4xx answer.
 */
export function inputError(
	node: INode,
	error: KeyError | IdentifierError | Error,
	itemIndex?: number,
): NodeOperationError {
	const nodeError = new NodeOperationError(node, error.message, {
		itemIndex,
		description: error instanceof KeyError ? error.hint : undefined,
	});
	if (error instanceof KeyError && error.kind !== undefined)
		nodeError.context[CLIENT_ERROR_CONTEXT] = error.kind;
	return nodeError;
}

/** The client-error kind an item's error carries, if the sender caused it. */
export function clientErrorKindOf(
	error: NodeOperationError | NodeApiError,
): ClientErrorKind | undefined {
	const kind = error.context?.[CLIENT_ERROR_CONTEXT];
	return typeof kind === 'string' && kind in CLIENT_ERRORS ? (kind as ClientErrorKind) : undefined;
}

/**
 * A failure of PostgreSQL or of the way to it, reported as NodeApiError with one clear sentence.
 * `action` completes "could not …"; when it names keys (`complete the key "evt:1"`), every message
 * names them. `whenUnreachable` is what a repeatable statement leaves behind once its retries on a
 * lost connection ran out (see retryOnConnectionLoss): it leads that error's description.
 */
export function databaseError(
	node: INode,
	error: unknown,
	credential: IdempotencyPostgresCredential,
	action: string,
	table: string,
	whenUnreachable?: string,
): NodeApiError {
	if (error instanceof StepStatementError) return stepStatementError(node, error);
	const pgError = (error ?? {}) as PostgresError;
	// SQLSTATEs first: a lock or statement timeout's message mentions "timeout" too.
	const statementProblem = describeStatementError(error, { ...credential, table, action });
	const connectionProblem = statementProblem
		? undefined
		: describeConnectionError(error, credential);
	const problem = statementProblem ?? connectionProblem;
	const said = pgError.message ?? String(error);
	const codes = [
		pgError.detail,
		pgError.hint,
		pgError.code ? `SQLSTATE ${pgError.code}` : undefined,
	]
		.filter(Boolean)
		.join(' ');
	let message = problem?.message ?? `PostgreSQL could not ${action}: ${said}`;
	let description = problem?.hint ?? codes;
	// A connection sentence ("Nothing is listening at …") does not say what was not done.
	if (connectionProblem && /\bkeys? "/.test(action))
		message = `${message}, so it could not ${action}`;
	const retry = connectionRetryOf(error);
	if (retry !== undefined) {
		const where = `${credential.host}:${Number(credential.port)}`;
		const seconds = (retry.elapsedMs / 1000).toFixed(1);
		const attempts = `${retry.attempts} ${retry.attempts === 1 ? 'attempt' : 'attempts'}`;
		message = `Could not ${action}: the key store at ${where} stayed unreachable for ${seconds} s (${attempts})`;
		const last = connectionProblem?.message ?? said;
		description = [whenUnreachable, `The last attempt failed with: ${last}.`, codes]
			.filter(Boolean)
			.join(' ');
	}
	// Not `code` (nor `errorCode`): NodeApiError would replace our sentence with a generic one for codes like ECONNREFUSED.
	const response: JsonObject = {
		message: said,
		driverCode: pgError.code ?? null,
	};
	return new NodeApiError(node, response, {
		message,
		description: description || undefined,
	});
}

/** Any failure before SQL runs (credential missing, bad table name, bad setting) as an n8n error. */
export function setupError(node: INode, error: unknown): NodeOperationError | NodeApiError {
	if (error instanceof NodeOperationError || error instanceof NodeApiError) return error;
	if (error instanceof KeyError || error instanceof IdentifierError) return inputError(node, error);
	return new NodeOperationError(node, error as Error);
}

/** The user's own SQL failed in the exactly-once step: name it and the item, not the key table. */
function stepStatementError(node: INode, error: StepStatementError): NodeApiError {
	const { cause } = error;
	const multiple = cause.code === '42601' && /multiple commands/i.test(cause.message);
	const hint = multiple
		? 'With Query Parameters the query must be one statement. Join several with a CTE (WITH a AS (INSERT …) INSERT …), or leave Query Parameters empty.'
		: [cause.detail, cause.hint, cause.code ? `SQLSTATE ${cause.code}` : undefined]
				.filter(Boolean)
				.join(' ');
	return new NodeApiError(
		node,
		{ message: cause.message, driverCode: cause.code ?? null },
		{
			message: `The step's SQL failed, so nothing was committed and the key is still reserved: ${cause.message}`,
			description: `${hint ? `${hint} ` : ''}The error output (Release Key, then an error answer) lets the sender's retry run the step again.`,
			itemIndex: error.itemIndex,
		},
	);
}
