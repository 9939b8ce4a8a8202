/**
 * The SQL the nodes run for the page's settings, from the nodes' own builders
 * (nodes/shared/store/sql.ts), with the bind parameters they send described, never spliced in.
 */
import { tableRef, type TableRef } from '../../nodes/shared/store/identifiers';
import {
	addColumnsSql,
	completeSql,
	createTableSql,
	groupsNeeded,
	keySelectionDeleteSql,
	purgeCutoffSql,
	purgeKeysSelection,
	releaseOwnedSql,
	releaseSql,
	reserveLeaseSql,
	reserveWithFingerprintSql,
	reserveWithFirstSeenSql,
} from '../../nodes/shared/store/sql';
import type { PlannerSettings } from '../settings';

/** The batch size Purge Keys uses by default, and the purge template's. */
const PURGE_BATCH_SIZE = 1000;

export interface SqlStatement {
	title: string;
	sql: string;
	/** The bind parameters as the node sends them ($1, $2 …), described, with this delivery's values. */
	parameters: Array<{ name: string; type: string; value: string }>;
}

/** A value for a `--` comment: JSON text has no line break, so it cannot end the comment. */
function commentValue(value: unknown): string {
	return JSON.stringify(value) ?? 'undefined';
}

/** What every statement's description needs, read once from the settings. */
interface PlanContext {
	settings: PlannerSettings;
	ref: TableRef;
	lease: boolean;
	fingerprints: boolean;
	/** This delivery's keys as a comment value, and their fingerprints described. */
	keys: string;
	fingerprintValues: string;
}

const TOKEN = '<a random token per execution>';

/**
 * The statements the nodes run for these settings, from nodes/shared/store/sql.ts, with the bind
 * parameters they send. `key` is this delivery's key, for the comments; undefined when there is none;
 * `fingerprint` the one recorded with it (null: none, undefined: only n8n can tell).
 */
export function planStatements(
	settings: PlannerSettings,
	key: string | undefined,
	fingerprint?: string | null,
): SqlStatement[] {
	const context: PlanContext = {
		settings,
		ref: tableRef(settings.schema, settings.table),
		lease: settings.mode === 'lease',
		fingerprints: settings.fingerprint !== 'none',
		keys: commentValue(key === undefined ? [] : [key]),
		fingerprintValues: `${key === undefined ? '[]' : fingerprint === undefined ? '[<evaluated by n8n>]' : commentValue([fingerprint])} (each key's request fingerprint, aligned with the keys)`,
	};
	return [
		...tableStatements(context),
		...(context.lease ? leaseStatements(context) : simpleStatements(context)),
		...purgeStatements(context),
	];
}

/** The table and its index, and the columns a table made before lacks. */
function tableStatements({ ref, lease, fingerprints }: PlanContext): SqlStatement[] {
	const statements: SqlStatement[] = [
		{
			title: `Create the table and its index (Create Table If Missing, on by default; once per table)${lease ? ', with the lease, fingerprint and response columns' : fingerprints ? ', with the fingerprint column' : ''}`,
			sql: createTableSql(ref, { lease, fingerprint: fingerprints }),
			parameters: [],
		},
	];
	// The column groups Reserve needs (the nodes' own rule), for a table made before.
	const groups = groupsNeeded({ lease, fingerprint: fingerprints });
	if (groups.length > 0) {
		statements.push({
			title: `A table that exists without the ${groups.join(' and ')} column${groups.length === 1 && !lease ? '' : 's'} (made ${lease ? 'in simple mode ' : ''}by hand or before): the node adds them, or asks the table owner to run`,
			sql: addColumnsSql(ref, groups),
			parameters: [],
		});
	}
	return statements;
}

/** Lease mode: Reserve, Complete Key and Release Key, each bound to the execution's token. */
function leaseStatements(context: PlanContext): SqlStatement[] {
	const { ref, fingerprints, keys, fingerprintValues } = context;
	return [
		{
			title:
				'Reserve (Idempotency Reserve, lease mode): all keys of one execution in one statement',
			sql: reserveLeaseSql(ref, { fingerprint: fingerprints }),
			parameters: [
				{
					name: '$1',
					type: 'text[]',
					value: `${keys} (the execution's keys, distinct and sorted)`,
				},
				{ name: '$2', type: 'text', value: `${TOKEN} (the owner token of this reservation)` },
				{
					name: '$3',
					type: 'float8',
					value: `${commentValue(context.settings.leaseSeconds)} (Lease, seconds)`,
				},
				...(fingerprints ? [{ name: '$4', type: 'text[]', value: fingerprintValues }] : []),
			],
		},
		{
			title:
				'Complete (Idempotency Complete Key, after the business step): only where the token still owns the key',
			sql: completeSql(ref),
			parameters: [
				{ name: '$1', type: 'text[]', value: `${keys} (keys)` },
				{
					name: '$2',
					type: 'text[]',
					value: `[${JSON.stringify(TOKEN)}] (each key's token, from Reserve's output)`,
				},
			],
		},
		{
			title:
				"Release (Release Key, on the business step's error path): only while the token still owns the key",
			sql: releaseOwnedSql(ref),
			parameters: [
				{ name: '$1', type: 'text[]', value: `${keys} (keys)` },
				{
					name: '$2',
					type: 'text[]',
					value: `[${JSON.stringify(TOKEN)}] (each key's token; null deletes the key whoever holds it)`,
				},
			],
		},
	];
}

/** Simple mode: Reserve (recording fingerprints or first-seen times) and Release Key. */
function simpleStatements({
	ref,
	fingerprints,
	keys,
	fingerprintValues,
}: PlanContext): SqlStatement[] {
	return [
		{
			title: `Reserve (Idempotency Reserve, simple mode, ${fingerprints ? 'recording fingerprints' : 'Look Up First Seen Time on'}): all keys of one execution in one statement`,
			sql: fingerprints ? reserveWithFingerprintSql(ref) : reserveWithFirstSeenSql(ref),
			parameters: [
				{
					name: '$1',
					type: 'text[]',
					value: `${keys} (the execution's keys, distinct and sorted)`,
				},
				...(fingerprints ? [{ name: '$2', type: 'text[]', value: fingerprintValues }] : []),
			],
		},
		{
			title: "Release (Release Key, on the business step's error path)",
			sql: releaseSql(ref),
			parameters: [{ name: '$1', type: 'text[]', value: `${keys} (keys)` }],
		},
	];
}

/** Purge Keys: the cutoff once, then batches, within the namespace when one is set. */
function purgeStatements({ settings, ref, lease }: PlanContext): SqlStatement[] {
	const namespace = settings.namespace;
	// Only Namespace set to Reserve's namespace: this workflow's keys (none: every key).
	const withinPrefix = namespace !== '';
	return [
		{
			title: 'Purge (Purge Keys, on a schedule): the cutoff, once, in database time',
			sql: purgeCutoffSql(),
			parameters: [
				{
					name: '$1',
					type: 'interval',
					value: `${commentValue(`${settings.retentionDays} days`)} (Keep Keys For)`,
				},
			],
		},
		{
			title: `Purge: then batches of ${PURGE_BATCH_SIZE} until one deletes fewer`,
			sql: keySelectionDeleteSql(ref, purgeKeysSelection({ lease, withinPrefix })),
			parameters: [
				{ name: '$1', type: 'timestamptz', value: 'the cutoff from the statement above' },
				...(withinPrefix
					? [
							{
								name: '$2',
								type: 'text',
								value: `${namespace.includes('{{') ? '"<namespace>:"' : commentValue(`${namespace}:`)} (Only Namespace; left empty, the statement has no $2 and purges every key)`,
							},
						]
					: []),
				{
					name: withinPrefix ? '$3' : '$2',
					type: 'integer',
					value: `${PURGE_BATCH_SIZE} (Batch Size)`,
				},
			],
		},
	];
}

/** The statements as one SQL text: each with its title and parameters as comments, never spliced into the SQL. */
export function sqlText(statements: readonly SqlStatement[]): string {
	return statements
		.map(({ title, sql, parameters }) => {
			const comments = [
				`-- ${title}`,
				...parameters.map((p) => `-- ${p.name} (${p.type}) = ${p.value}`),
			];
			return `${comments.join('\n')}\n${sql}${sql.trimEnd().endsWith(';') ? '' : ';'}`;
		})
		.join('\n\n');
}
