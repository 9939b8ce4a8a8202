import type {
	ICredentialsDecrypted,
	ICredentialTestFunctions,
	INodeCredentialTestResult,
} from 'n8n-workflow';

import { describeConnectionError } from '../errors/describeConnectionError';
import { clientConfig, type IdempotencyPostgresCredential } from '../transport/connectionOptions';
import { Client } from '../transport/pg';

/** Opens one connection (not a pool) with the credential as entered, runs SELECT 1 and closes it. */
export async function idempotencyPostgresConnectionTest(
	this: ICredentialTestFunctions,
	credentials: ICredentialsDecrypted,
): Promise<INodeCredentialTestResult> {
	const credential = credentials.data as unknown as IdempotencyPostgresCredential;
	const client = new Client(clientConfig(credential));
	// A failed connect can still emit 'error' later; the test reports the first failure only.
	client.on('error', () => undefined);
	try {
		await client.connect();
		await client.query('SELECT 1');
		return { status: 'OK', message: 'Connection successful' };
	} catch (error) {
		const problem = describeConnectionError(error, credential);
		const message = problem ? `${problem.message}. ${problem.hint}` : (error as Error).message;
		return { status: 'Error', message };
	} finally {
		await client.end().catch(() => undefined);
	}
}
