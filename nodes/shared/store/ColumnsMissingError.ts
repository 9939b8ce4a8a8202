import type { TableRef } from './identifiers';
import { addColumnsSql, type ColumnGroup } from './sql/schema';

/** What else the user can do instead of adding a group's columns. */
const ALTERNATIVE: Record<ColumnGroup, string> = {
	lease: 'Or set Mode to Simple (at most once, no lease).',
	fingerprint:
		'Or set Fingerprint to None (a reused key with another payload is then not noticed).',
	response: 'Or turn off Store Response.',
	steps:
		'Step records need this column; until it is added, leave Idempotency Step out of the workflow.',
	delivery:
		'Or turn off Answer First (Reserve then stores no delivery, and the sender is answered last).',
};

/**
 * A node needs columns that a table made by hand (or in simple mode, or before the feature) lacks,
 * and this database user may not add them. Says exactly what the table's owner must run. `hint` is
 * read like PostgreSQL's own error hint by the nodes' error reporting.
 */
export class ColumnsMissingError extends Error {
	readonly hint: string;

	constructor(ref: TableRef, groups: readonly ColumnGroup[]) {
		super(
			`The table ${ref.qualified} lacks the ${groups.join(' and ')} columns, and this database user may not add them`,
		);
		this.name = 'ColumnsMissingError';
		const alternatives = groups.map((group) => ALTERNATIVE[group]).join(' ');
		this.hint = `Have the table's owner run:\n${addColumnsSql(ref, groups)}\n${alternatives}`;
	}
}
