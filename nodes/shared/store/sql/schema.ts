import { firstSeenIndexName, quoteIdentifier, type TableRef } from '../identifiers';

/**
 * The key table itself: its columns, the optional column groups, and the statements that inspect,
 * create and complete it (the first_seen index included).
 */

/**
 * The columns lease mode adds to the hand-built two-column table. A row without a status (written in
 * simple mode or by the hand-built pattern) counts as completed.
 */
export const LEASE_COLUMNS = [
	['status', 'text'],
	['owner_token', 'text'],
	['lease_until', 'timestamptz'],
	['completed_at', 'timestamptz'],
	['attempts', 'integer NOT NULL DEFAULT 1'],
] as const;

/**
 * Optional columns, each group added (where the user may) when a node first needs it, the way the
 * lease columns are: the request fingerprint Reserve records, and the answer Complete Key stores
 * ({ statusCode, headers, body } as jsonb: the body is text, replayed as it was stored). Rows
 * without them (NULL) never mismatch and replay nothing.
 */
export type ColumnGroup = 'lease' | 'fingerprint' | 'response' | 'steps' | 'delivery';

export const COLUMN_GROUPS: Record<ColumnGroup, ReadonlyArray<readonly [string, string]>> = {
	lease: LEASE_COLUMNS,
	fingerprint: [['fingerprint', 'text']],
	response: [['response', 'jsonb']],
	steps: [['steps', 'jsonb']],
	/** The delivery Reserve stores when it answers first, for the Redrive Trigger (sql/redrive.ts). */
	delivery: [['delivery', 'jsonb']],
};

export const OPTIONAL_COLUMN_NAMES: string[] = Object.values(COLUMN_GROUPS).flatMap((columns) =>
	columns.map(([name]) => name),
);

/** The options of a node that decide which column groups it needs. */
export interface GroupOptions {
	lease: boolean;
	/** Reserve records request fingerprints. */
	fingerprint?: boolean;
	/** Complete Key stores the response. */
	response?: boolean;
	/** Idempotency Step records what a step did (sql/steps.ts). */
	steps?: boolean;
	/** Reserve stores the delivery (answer first); the Redrive Trigger reads it. */
	delivery?: boolean;
}

/** The column groups a node with these options needs (a table made before must get them). */
export function groupsNeeded(options: GroupOptions): ColumnGroup[] {
	const groups: ColumnGroup[] = [];
	if (options.lease) groups.push('lease');
	if (options.fingerprint) groups.push('fingerprint');
	if (options.response) groups.push('response');
	if (options.steps) groups.push('steps');
	if (options.delivery) groups.push('delivery');
	return groups;
}

/** The groups a new table gets: in lease mode all of them (nullable, so they cost nothing until used). */
export function groupsForNewTable({
	lease,
	fingerprint = false,
}: Omit<GroupOptions, 'response'>): ColumnGroup[] {
	if (lease) return ['lease', 'fingerprint', 'response', 'steps', 'delivery'];
	return fingerprint ? ['fingerprint'] : [];
}

/** Does a table whose optional columns are `present` (as inspectTableSql lists them) have the group? */
export function hasGroup(present: readonly string[], group: ColumnGroup): boolean {
	return COLUMN_GROUPS[group].every(([name]) => present.includes(name));
}

/**
 * Is the table there, does it already have an index leading with first_seen, and which of the
 * optional columns ($2) does it have? No DDL when all that is needed is there.
 */
export function inspectTableSql(): string {
	return `SELECT c.oid IS NOT NULL AS table_exists,
  EXISTS (
    SELECT 1 FROM pg_index i
    JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
    WHERE i.indrelid = c.oid AND a.attname = 'first_seen'
  ) AS has_first_seen_index,
  ARRAY(SELECT a.attname::text FROM pg_attribute a
   WHERE a.attrelid = c.oid AND a.attname = ANY($2::text[]) AND NOT a.attisdropped) AS optional_columns
FROM (SELECT to_regclass($1) AS oid) c`;
}

/** Serialises concurrent first-time creators: two CREATE ... IF NOT EXISTS racing can fail on pg_type or pg_class. */
const DDL_LOCK = `SELECT pg_advisory_xact_lock(hashtext('n8n-nodes-idempotency:create-table'));`;

function createIndexSql(ref: TableRef): string {
	return `CREATE INDEX IF NOT EXISTS ${quoteIdentifier(firstSeenIndexName(ref))} ON ${ref.qualified} (first_seen)`;
}

/**
 * The table and its first_seen index, as one multi-statement query that PostgreSQL runs as one
 * implicit transaction. Sent without parameters (simple protocol); names come from a TableRef.
 */
export function createTableSql(
	ref: TableRef,
	options: { lease: boolean; fingerprint?: boolean },
): string {
	const optional = groupsForNewTable(options)
		.flatMap((group) => COLUMN_GROUPS[group])
		.map(([name, type]) => `,\n  ${name} ${type}`)
		.join('');
	return `${DDL_LOCK}
CREATE TABLE IF NOT EXISTS ${ref.qualified} (
  key text PRIMARY KEY,
  first_seen timestamptz NOT NULL DEFAULT now()${optional}
);
${createIndexSql(ref)};`;
}

/**
 * Groups' columns for a table made in simple mode, by hand or before the group existed. Adding a
 * nullable column, or one with a constant default, rewrites nothing (PostgreSQL 11+), so this is
 * quick on a big table. Only the table's owner may run it; the node shows this exact text to
 * whoever must.
 */
export function addColumnsSql(ref: TableRef, groups: ColumnGroup | readonly ColumnGroup[]): string {
	const columns = (typeof groups === 'string' ? [groups] : groups).flatMap(
		(group) => COLUMN_GROUPS[group],
	);
	return `ALTER TABLE ${ref.qualified}\n${columns.map(([name, type]) => `  ADD COLUMN IF NOT EXISTS ${name} ${type}`).join(',\n')};`;
}

/** The same, by whoever may; a user who may not (not the owner) gets a NOTICE, and the caller checks again. */
export function addColumnsIfPermittedSql(ref: TableRef, group: ColumnGroup): string {
	return `${DDL_LOCK}
DO $$ BEGIN
  ${addColumnsSql(ref, group).replace(/\n/g, '\n  ')}
EXCEPTION WHEN insufficient_privilege THEN
  RAISE NOTICE 'n8n-nodes-idempotency: no privilege to add the ${group} columns to %', '${ref.qualified.replace(/'/g, "''")}';
END $$;`;
}

/**
 * The first_seen index for a table that exists without it (made by hand). The index only speeds up
 * purging, so a user who may not create it (not the table's owner) keeps working without it.
 */
export function createIndexIfPermittedSql(ref: TableRef): string {
	return `${DDL_LOCK}
DO $$ BEGIN
  ${createIndexSql(ref)};
EXCEPTION WHEN insufficient_privilege THEN
  RAISE NOTICE 'n8n-nodes-idempotency: no privilege to index first_seen of %', '${ref.qualified.replace(/'/g, "''")}';
END $$;`;
}
