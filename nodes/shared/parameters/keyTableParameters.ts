import type { IExecuteFunctions } from 'n8n-workflow';
import { nodeParameter } from './nodeParameter';

/** The node's Schema and Table, as the user typed them (validated by tableRef before any SQL). */
export interface KeyTableParameters {
	schema: string;
	table: string;
}

/**
 * One read per node run: opening the store and noting what the run reserved (or finding what it
 * owns) both need Schema and Table. Keyed by the run's context, which n8n makes anew for every node run, so
 * a changed parameter is read afresh on the next run; both are node-level (item 0).
 */
const readByRun = new WeakMap<IExecuteFunctions, KeyTableParameters>();

export function keyTableParameters(context: IExecuteFunctions): KeyTableParameters {
	let read = readByRun.get(context);
	if (read === undefined) {
		read = {
			schema: nodeParameter(context, 'schema') as string,
			table: nodeParameter(context, 'table') as string,
		};
		readByRun.set(context, read);
	}
	return read;
}
