import { randomUUID } from 'crypto';
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { KeyError } from '../keys/KeyError';
import { KEY_STORE_CREDENTIAL_TYPE } from '../parameters/credentials';
import { keyTableParameters } from '../parameters/keyTableParameters';
import { nodeOfRun } from '../parameters/runNode';

/**
 * What this execution reserved, kept in n8n's flow context: data that lives exactly as long as the
 * execution (saved with it across a Wait, carried to the worker in queue mode). It lets Complete Key
 * and Release Key act for "this execution" without reading another node's output through n8n's
 * expression evaluator, which costs about a millisecond per parameter and item.
 */
const CONTEXT_ENTRY = 'idempotencyReservations';

/** What a node does with a key it owns, as its messages name it. */
export type OwnedKeyAction = 'complete' | 'release' | 'check a step of' | 'record a step of';

interface ReservedInTable {
	count: number;
	/** Kept only while the execution reserved exactly one key in the table. */
	soleKey?: string;
}

interface ExecutionReservations extends IDataObject {
	/** The lease owner: one per execution, whatever the number of Reserve runs. */
	token?: string;
	tables: Record<string, ReservedInTable>;
}

function reservationsOf(context: IExecuteFunctions): ExecutionReservations {
	const flow = context.getContext('flow');
	const existing = flow[CONTEXT_ENTRY] as ExecutionReservations | undefined;
	if (existing !== undefined) return existing;
	const created: ExecutionReservations = { tables: {} };
	flow[CONTEXT_ENTRY] = created;
	return created;
}

/** Credential and table: the same key in two tables (or two databases) is two reservations. */
function scopeOf(context: IExecuteFunctions): { id: string; label: string } {
	const parameters = keyTableParameters(context);
	const schema = String(parameters.schema);
	const table = String(parameters.table);
	const credentialId = nodeOfRun(context).credentials?.[KEY_STORE_CREDENTIAL_TYPE]?.id ?? '';
	return { id: `${credentialId}\u0000${schema}.${table}`, label: `${schema}.${table}` };
}

/**
 * Where knownSteps.ts keeps what this run's statements confirmed: this execution, this credential
 * and table (the same key in another table is another reservation).
 */
export function knownStepsScope(context: IExecuteFunctions): {
	executionId: string;
	scope: string;
} {
	return { executionId: String(context.getExecutionId() ?? ''), scope: scopeOf(context).id };
}

/** The execution's lease token, made on first use, so every Reserve run of an execution owns as one. */
export function executionToken(context: IExecuteFunctions): string {
	const reservations = reservationsOf(context);
	reservations.token ??= randomUUID();
	return reservations.token;
}

/** The token when this execution reserved with a lease; undefined otherwise. */
export function existingExecutionToken(context: IExecuteFunctions): string | undefined {
	return reservationsOf(context).token;
}

/** Notes the keys this Reserve run took (new or taken over) in its node's table. */
export function recordReservedKeys(context: IExecuteFunctions, keys: readonly string[]): void {
	if (keys.length === 0) return;
	const reservations = reservationsOf(context);
	const { id } = scopeOf(context);
	const before = reservations.tables[id] ?? { count: 0 };
	const count = before.count + keys.length;
	reservations.tables[id] = count === 1 ? { count, soleKey: keys[0] } : { count };
}

/**
 * An execution the Redrive Trigger started holds the key it claimed, under the claim's token: from
 * the first node that reads the claim on, the execution owns it as if it had reserved it, so later
 * nodes (after a business step whose output no longer carries the claim) need no expression.
 */
export function adoptRedriveClaim(context: IExecuteFunctions, key: string, token: string): void {
	const reservations = reservationsOf(context);
	if (reservations.token !== undefined) return;
	reservations.token = token;
	recordReservedKeys(context, [key]);
}

/**
 * The one key this execution reserved in the node's table, for a Key left empty. Several keys
 * (a batch) need the item's own key, which only the item can tell.
 */
export function soleReservedKey(context: IExecuteFunctions, action: OwnedKeyAction): string {
	const { id, label } = scopeOf(context);
	const reserved = reservationsOf(context).tables[id];
	if (reserved === undefined) {
		throw new KeyError(
			`Key is empty and this execution reserved no key in ${label} to ${action}`,
			'Run Idempotency Reserve earlier in this execution with the same credential and table, or set Key.',
		);
	}
	if (reserved.soleKey === undefined) {
		throw new KeyError(
			`Key is empty and this execution reserved ${reserved.count} keys in ${label}`,
			"Set Key to each item's key, e.g. {{ $('Idempotency Reserve').item.json.idempotency.key }}.",
		);
	}
	return reserved.soleKey;
}
