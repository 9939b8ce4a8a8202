import type { TableRef } from './identifiers';
import { addLeaseColumnsSql } from './sql';

/**
 * Lease mode needs columns that a table made by hand (or in simple mode) lacks, and this database
 * user may not add them. Says exactly what the table's owner must run. `hint` is read like
 * PostgreSQL's own error hint by the nodes' error reporting.
 */
export class LeaseColumnsMissingError extends Error {
	readonly hint: string;

	constructor(ref: TableRef) {
		super(
			`The table ${ref.qualified} lacks the lease columns, and this database user may not add them`,
		);
		this.name = 'LeaseColumnsMissingError';
		this.hint = `Have the table's owner run:\n${addLeaseColumnsSql(ref)}\nor set Mode to Simple (at most once, no lease).`;
	}
}
