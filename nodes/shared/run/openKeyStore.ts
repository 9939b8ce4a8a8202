import type { IExecuteFunctions } from 'n8n-workflow';

import { KEY_STORE_CREDENTIAL_TYPE } from '../parameters/credentials';
import { keyTableParameters } from '../parameters/keyTableParameters';
import { nodeOfRun } from '../parameters/runNode';
import { tableRef } from '../store/identifiers';
import { KeyStore } from '../store/KeyStore';
import type { IdempotencyPostgresCredential } from '../transport/connectionOptions';
import { poolFor, type PoolEntry } from '../transport/poolCache';
import { keyStoreCredential } from './executionCredentials';

export interface OpenedStore {
	store: KeyStore;
	credential: IdempotencyPostgresCredential;
	/** The credential's shared pool, for statements beside the KeyStore's (the operators' queries). */
	entry: PoolEntry;
}

/**
 * Reads the credential and table parameters (the same for every item: one table per node) and
 * returns the store. Names are validated here, before any SQL can run.
 */
export async function openKeyStore(context: IExecuteFunctions): Promise<OpenedStore> {
	const credential = await keyStoreCredential(context);
	const { schema, table } = keyTableParameters(context);
	const ref = tableRef(schema, table);
	// The credential id lets the pool cache notice an edited credential and close the old pool.
	const credentialId = nodeOfRun(context).credentials?.[KEY_STORE_CREDENTIAL_TYPE]?.id;
	const entry = poolFor(credential, { credentialId, logger: context.logger });
	return { store: new KeyStore(entry, ref), credential, entry };
}
