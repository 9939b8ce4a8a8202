import { utf8ByteLength } from '../keys/composeKey';

/** PostgreSQL truncates longer identifiers silently, which could point two tables at one. */
const MAX_IDENTIFIER_BYTES = 63;

const PLAIN_IDENTIFIER = /^[A-Za-z0-9_]+$/;

export class IdentifierError extends Error {
	constructor(message: string) {
		super(message);
		this.name = 'IdentifierError';
	}
}

/** Accepts only letters, digits and `_`, so the quoted name can never close its quotes or inject SQL. */
function assertPlainIdentifier(name: string, what: string): void {
	if (typeof name !== 'string' || name === '')
		throw new IdentifierError(`The ${what} name is empty`);
	if (!PLAIN_IDENTIFIER.test(name)) {
		throw new IdentifierError(`The ${what} name "${name}" may only contain letters, digits and _`);
	}
	if (utf8ByteLength(name) > MAX_IDENTIFIER_BYTES) {
		throw new IdentifierError(`The ${what} name is longer than ${MAX_IDENTIFIER_BYTES} bytes`);
	}
}

export function quoteIdentifier(name: string): string {
	return `"${name}"`;
}

/** A validated, quoted `schema.table`. Only this type reaches the SQL builders. */
export interface TableRef {
	schema: string;
	table: string;
	/** `"schema"."table"`, safe to splice into SQL. */
	qualified: string;
}

export function tableRef(schema: string, table: string): TableRef {
	assertPlainIdentifier(schema, 'schema');
	assertPlainIdentifier(table, 'table');
	return { schema, table, qualified: `${quoteIdentifier(schema)}.${quoteIdentifier(table)}` };
}

/** Index names share the 63-byte limit, so the table part is shortened to leave room for the suffix. */
export function firstSeenIndexName(ref: TableRef): string {
	const suffix = '_first_seen_idx';
	return ref.table.slice(0, MAX_IDENTIFIER_BYTES - suffix.length) + suffix;
}
