import type { TableRef } from '../identifiers';
import { ANSWERED_EVENT, answeredEvent } from './answeredEvents';
import { DEAD_LETTER } from './redrive';

/** The cutoff is computed once, in database time, so every batch of one purge uses the same instant. */
export function purgeCutoffSql(): string {
	return `SELECT now() - $1::interval AS cutoff`;
}

/** How a purge picks its keys (each an index range), and what it filters them by. */
export interface KeySelection {
	by: 'keys' | 'prefix' | 'age';
	/**
	 * Only rows of this state; `completedOrLegacy` is what Reserve treats as done (never a dead
	 * letter: its event did not run to the end, and waits for an operator).
	 */
	status: 'any' | 'completed' | 'legacy' | 'completedOrLegacy' | 'inProgress' | 'deadLetter';
	/** Delete keys whose lease still runs too (never by default: their execution is working on them). */
	includeRunningLeases: boolean;
	/** The table has the lease columns (without, every row is legacy). */
	lease: boolean;
	/** By age: only keys starting with a prefix (the parameter after the cutoff). */
	withinPrefix?: boolean;
	/**
	 * Answered events (sql/answeredEvents.ts): `keep` leaves them (the nodes' default), `drop`
	 * deletes them too and says which it deleted (Drop Answered Events), `only` selects nothing
	 * else (to count the kept ones). Unset: the selection of setups that never store a delivery
	 * (the planner's page), its statements as they always were.
	 */
	answeredEvents?: 'keep' | 'drop' | 'only';
}

/**
 * Purge Keys' selection: every key first seen before the cutoff, whatever its state, bar those whose
 * lease still runs; with `withinPrefix`, only keys starting with Only Namespace's `<namespace>:`.
 */
export function purgeKeysSelection({
	lease,
	withinPrefix = false,
	...answered
}: {
	lease: boolean;
	withinPrefix?: boolean;
	answeredEvents?: KeySelection['answeredEvents'];
}): KeySelection {
	return {
		by: 'age',
		status: 'any',
		includeRunningLeases: false,
		lease,
		withinPrefix,
		...answered,
	};
}

/** The bind parameters a selection's statements take, in order ($1 …). */
export function keySelectionParameters(
	selection: KeySelection,
): Array<'keys' | 'prefix' | 'prefixEnd' | 'cutoff'> {
	if (selection.by === 'keys') return ['keys'];
	if (selection.by === 'prefix') return ['prefix', 'prefixEnd'];
	return selection.withinPrefix === true ? ['cutoff', 'prefix'] : ['cutoff'];
}

/**
 * The first text after every text that starts with `prefix`, in byte (code point) order: the
 * prefix with its last code point raised by one, dropping trailing U+10FFFF. Undefined when the
 * prefix is all U+10FFFF (no end: the range runs to the last key).
 */
export function prefixEnd(prefix: string): string | undefined {
	const points = Array.from(prefix, (char) => char.codePointAt(0) as number);
	while (points.length > 0) {
		const last = points.pop() as number;
		if (last < 0x10ffff) {
			// Surrogates are not text: after U+D7FF comes U+E000.
			points.push(last === 0xd7ff ? 0xe000 : last + 1);
			return String.fromCodePoint(...points);
		}
	}
	return undefined;
}

/**
 * Keeps a key whose lease still runs whatever its age or state: an old event retried and taken over
 * a moment ago is being processed now, and its Complete Key needs the row.
 */
const LEASE_NOT_RUNNING = `(t.status IS DISTINCT FROM 'in_progress' OR t.lease_until IS NULL OR t.lease_until <= now())`;

/** The WHERE of a selection over `t`, and the ORDER BY that makes the planner walk its index. */
function keySelectionWhere(selection: KeySelection): { where: string; order: string } {
	const picks = {
		keys: { where: 't.key = ANY($1::text[])', order: 't.key' },
		prefix: {
			where: `(t.key COLLATE "C") >= $1::text AND ($2::text IS NULL OR (t.key COLLATE "C") < $2::text) AND starts_with(t.key, $1::text)`,
			order: '(t.key COLLATE "C")',
		},
		age: { where: 't.first_seen < $1::timestamptz', order: 't.first_seen' },
	}[selection.by];
	const conditions = [picks.where];
	if (selection.by === 'age' && selection.withinPrefix === true)
		conditions.push('starts_with(t.key, $2::text)');
	const status = selection.lease
		? {
				any: '',
				completed: `t.status = 'completed'`,
				legacy: 't.status IS NULL',
				completedOrLegacy: `(t.status IS NULL OR t.status = 'completed')`,
				inProgress: `t.status = 'in_progress'`,
				deadLetter: `t.status = '${DEAD_LETTER}'`,
			}[selection.status]
		: // Without the lease columns every row was written in simple mode: legacy, done.
			['any', 'legacy', 'completedOrLegacy'].includes(selection.status)
			? ''
			: 'false';
	if (status !== '') conditions.push(status);
	if (selection.lease && !selection.includeRunningLeases) conditions.push(LEASE_NOT_RUNNING);
	if (selection.answeredEvents === 'keep') conditions.push(`NOT ${ANSWERED_EVENT}`);
	if (selection.answeredEvents === 'only') conditions.push(ANSWERED_EVENT);
	return { where: conditions.join('\n  AND '), order: picks.order };
}

/**
 * A dry run: how many keys the selection matches (stopping at the parameter after the selection's:
 * the caller reads that many as "at least") and the first of them in index order (at most the next
 * parameter). Rows another transaction holds are counted; the purge itself skips them.
 */
export function keySelectionPreviewSql(ref: TableRef, selection: KeySelection): string {
	const { where, order } = keySelectionWhere(selection);
	const next = keySelectionParameters(selection).length + 1;
	return `WITH matched AS MATERIALIZED (
  SELECT t.key, row_number() OVER () AS n FROM (
    SELECT t.key FROM ${ref.qualified} t
    WHERE ${where}
    ORDER BY ${order}
    LIMIT $${next}::int
  ) t
)
SELECT (SELECT count(*)::int FROM matched) AS matched,
  ARRAY(SELECT key FROM matched WHERE n <= $${next + 1}::int ORDER BY n) AS keys`;
}

/**
 * One batch of a purge (Purge Keys' and the Keys node's): deletes at most $n (the parameter after
 * the selection's) of the selected rows and returns their keys (with an answered-event rule, and
 * whether each was an answered event). SKIP LOCKED leaves rows that a
 * running execution holds, so a purge never waits on a webhook, and FOR UPDATE re-checks the lease
 * condition on the newest version of a row a takeover just committed. The ORDER BY keeps the inner
 * scan on its index however much of the table matches.
 */
export function keySelectionDeleteSql(ref: TableRef, selection: KeySelection): string {
	const { where, order } = keySelectionWhere(selection);
	const next = keySelectionParameters(selection).length + 1;
	return `DELETE FROM ${ref.qualified} AS d
WHERE d.key IN (
  SELECT t.key FROM ${ref.qualified} t
  WHERE ${where}
  ORDER BY ${order}
  LIMIT $${next}::int
  FOR UPDATE SKIP LOCKED
)
RETURNING d.key${selection.answeredEvents === undefined ? '' : `, ${answeredEvent('d')} AS answered_event`}`;
}
