/**
 * "Explain a duplicate": given a key and, optionally, its row in the key table (as the look-up SQL,
 * a Postgres node or Idempotency Reserve's `duplicate` or `in flight` output gives it), which of
 * Reserve's rules sent the delivery there, and what to do next. The rules are those of the reservation statements
 * (nodes/shared/store/sql.ts: reserveLeaseSql, reserveWithFirstSeenSql) and of the fingerprint check:
 * in lease mode a completed row, a row without status (simple mode, the hand-built table) and a row
 * in progress within its lease are duplicates, an in-progress row past its lease end is taken over;
 * in simple mode every existing row is a duplicate.
 */
import type { Mode } from '../settings';

export type DuplicateRule =
	| 'completed'
	| 'inFlight'
	| 'leaseEnded'
	| 'legacy'
	| 'simple'
	| 'mismatch'
	| 'notFound'
	| 'new'
	| 'unknown'
	| 'noRow';

export interface DuplicateExplanation {
	/** Starts with `duplicate:`, `not a duplicate:` or `no row given`. */
	verdict: string;
	rule: DuplicateRule;
	explain: string;
	next: string;
	/** What the key's form says about where it came from. */
	keyNote: string;
	/** Problems with what was pasted (another key, JSON that does not parse). */
	warnings: string[];
}

type Row = Record<string, unknown>;

function pick(row: Row, ...names: string[]): unknown {
	for (const name of names) if (row[name] !== undefined) return row[name];
	return undefined;
}

/** A time as the table, the look-up or Reserve writes it: ISO text, or seconds / milliseconds since 1970. */
function timeOf(value: unknown): number | undefined {
	if (typeof value === 'number' && Number.isFinite(value))
		return value > 1e11 ? value : value * 1000;
	if (typeof value !== 'string' || value.trim() === '') return undefined;
	// PostgreSQL's "2026-12-03 18:26:40.123456+00" as well as ISO 8601.
	const iso = value
		.trim()
		.replace(' ', 'T')
		.replace(/(\.\d{3})\d+/, '$1')
		.replace(/([+-]\d\d)$/, '$1:00');
	const ms = Date.parse(iso);
	return Number.isNaN(ms) ? undefined : ms;
}

function durationText(ms: number): string {
	const s = Math.round(Math.abs(ms) / 1000);
	if (s < 60) return `${s} s`;
	if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
	if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
	return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

const isoText = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

/** The row out of what people paste: the row, a list with one row, an n8n item, Reserve's output. */
function rowOf(value: unknown): Row | undefined {
	let current = value;
	for (let i = 0; i < 4; i++) {
		if (Array.isArray(current)) {
			current = current[0];
			continue;
		}
		if (current === null || typeof current !== 'object') return undefined;
		const object = current as Row;
		if (object.json !== undefined && typeof object.json === 'object') current = object.json;
		else if (object.row !== undefined && typeof object.row === 'object') current = object.row;
		else if (object.idempotency !== undefined && typeof object.idempotency === 'object')
			current = object.idempotency;
		else return object;
	}
	return undefined;
}

/** What the form of a key says about its source (README, Keys). */
export function keyNote(key: string): string {
	if (key === '') return '';
	const hash = /(?:^|:)sha256:[0-9a-f]{64}$/.test(key);
	if (hash)
		return 'This key is a body hash (sha256: of the exact bytes): the delivery had no event id, or the key source is Body Hash only. Two deliveries share it only when their bytes are identical: the same request sent twice.';
	if (/(?:^|:)evt:/.test(key))
		return 'This key comes from an event id (evt:): every delivery with this id is the same event to the node. If two different events got it, the id is not unique: check the key source (the Event ID path, or the preset for your sender).';
	return 'This key has no evt: or sha256: prefix: it is a Custom key (or a namespaced one). Check that the expression gives each event its own value: fixed text, or a field many events share, makes them one key.';
}

/** What the verdict says; keyNote and warnings are added around it. */
type Verdict = Omit<DuplicateExplanation, 'keyNote' | 'warnings'>;

/** What a row says, read once, whatever the names of its columns (the table's, the look-up's, Reserve's). */
interface RowFacts {
	/** ` first seen <time>`, or empty. */
	seen: string;
	/** The status as pasted, and normalized (lower case, `in_progress`). */
	statusValue: unknown;
	status: unknown;
	leaseUntil: number | undefined;
	completedAt: number | undefined;
	retryAfter: unknown;
	/** A sentence on the takeovers when the attempt is above 1, or empty. */
	attemptNote: string;
}

/**
 * Which rule made the delivery a duplicate. `mode` is the Reserve node's Mode; `nowMs` the time to
 * judge a lease by (the database's clock decides in the node: keep both in sync).
 */
export function explainDuplicate(
	key: string,
	rowText: string,
	mode: Mode,
	nowMs: number,
): DuplicateExplanation {
	const warnings: string[] = [];
	const note = keyNote(key.trim() === key ? key : key.trim());
	if (key !== key.trim())
		warnings.push(
			'The key has spaces around it: keys are compared byte for byte, so check what was pasted.',
		);
	const read = readRow(rowText, mode);
	if ('verdict' in read) return { ...read, keyNote: note, warnings };
	const row = read.row;
	const rowKey = pick(row, 'key');
	if (typeof rowKey === 'string' && key !== '' && rowKey !== key)
		warnings.push(
			`The row is for the key ${JSON.stringify(rowKey)}, not for ${JSON.stringify(key)}.`,
		);
	return { ...judgeRow(row, factsOf(row), mode, nowMs), keyNote: note, warnings };
}

/** The pasted row, or why there is none to judge. */
function readRow(rowText: string, mode: Mode): { row: Row } | Verdict {
	if (rowText.trim() === '') {
		return {
			verdict: 'no row given',
			rule: 'noRow',
			explain:
				mode === 'lease'
					? 'In lease mode a delivery is a duplicate when its key is completed, has no status (an older row), or is in progress within its lease. Paste the key row to see which.'
					: 'In simple mode a delivery is a duplicate whenever its key is already in the table, whatever happened to the first one. Paste the key row to see when it was first seen.',
			next: 'Run the look-up query below (or the Postgres node with it) and paste the row it returns.',
		};
	}
	let parsed: unknown;
	try {
		parsed = JSON.parse(rowText);
	} catch (error) {
		return {
			verdict: 'no row given',
			rule: 'noRow',
			explain: `The row is not JSON: ${(error as Error).message}.`,
			next: 'Paste the row as JSON, as the look-up query returns it.',
		};
	}
	const row = rowOf(parsed);
	if (row === undefined)
		return {
			verdict: 'no row given',
			rule: 'noRow',
			explain: "The JSON holds no row (an object with the key's columns).",
			next: 'Paste the row as JSON, as the look-up query returns it.',
		};
	return { row };
}

function factsOf(row: Row): RowFacts {
	const firstSeen = timeOf(pick(row, 'firstSeenAt', 'first_seen', 'firstSeen'));
	const statusValue = pick(row, 'status');
	const attempt = pick(row, 'attempt', 'attempts');
	return {
		seen: firstSeen === undefined ? '' : ` first seen ${isoText(firstSeen)}`,
		statusValue,
		status:
			typeof statusValue === 'string'
				? statusValue
						.toLowerCase()
						.replace(/[\s-]+/g, '_')
						.replace('inprogress', 'in_progress')
				: statusValue,
		leaseUntil: timeOf(pick(row, 'leaseUntil', 'lease_until')),
		completedAt: timeOf(pick(row, 'completedAt', 'completed_at')),
		retryAfter: pick(row, 'retryAfterSeconds', 'retry_after'),
		attemptNote:
			typeof attempt === 'number' && attempt > 1
				? ` It was taken over ${attempt - 1} time${attempt === 2 ? '' : 's'} (attempt ${attempt}): an execution holding it died or overran its lease.`
				: '',
	};
}

/** Reserve's rules in its order: its own output, no row, a mismatch, simple mode, then the status. */
function judgeRow(row: Row, facts: RowFacts, mode: Mode, nowMs: number): Verdict {
	const { seen, status } = facts;
	if (pick(row, 'isNew') === true)
		return {
			verdict: 'not a duplicate: reserved by this execution',
			rule: 'new',
			explain: `This item went to the new output (true on a version 1 node): the key was ${pick(row, 'attempt') !== undefined && Number(pick(row, 'attempt')) > 1 ? 'taken over after its lease ended' : 'new'}.`,
			next: 'Nothing to explain: the business step ran for it.',
		};
	if (pick(row, 'found') === false)
		return {
			verdict: 'not a duplicate: no row for this key',
			rule: 'notFound',
			explain:
				'The table has no row for this key now: it was released (Release Key after a failed step) or purged, or never reserved under this exact key (namespace, prefix).',
			next: 'A new delivery with this key is processed as new. If a delivery was answered as a duplicate anyway, its key differed from this one: compare it byte for byte.',
		};
	if (pick(row, 'mismatch') === true) return mismatchVerdict(row);
	if (mode === 'simple')
		return {
			verdict: 'duplicate: the key exists (simple mode)',
			rule: 'simple',
			explain: `In simple mode any row makes a duplicate, whatever happened to the first delivery: this key was${seen || ' reserved before'}.${status === 'in_progress' ? ' Its status is in progress: lease mode would take it over after the lease, simple mode never does.' : ''}`,
			next: 'If the first delivery did not finish its business step (n8n stopped, or Release Key failed), run Release Key with this key and redeliver; switch to lease mode so this heals by itself.',
		};
	if (status === 'completed')
		return {
			verdict: 'duplicate: completed',
			rule: 'completed',
			explain: `The key was completed${facts.completedAt === undefined ? '' : ` at ${isoText(facts.completedAt)}`}${seen ? `,${seen}` : ''}: the event was processed, and this delivery is a retry or a redelivery of it.${facts.attemptNote}`,
			next: 'Nothing: answer 200, as the template does. To process it again on purpose, run Release Key with this key, then redeliver.',
		};
	if (status === 'in_progress') return inProgressVerdict(row, facts, nowMs);
	if (
		status === null ||
		status === undefined ||
		status === '' ||
		status === 'legacy' ||
		status === 'simple'
	)
		return {
			verdict: 'duplicate: legacy row without status',
			rule: 'legacy',
			explain: `The row has no status: it was written by simple mode or the hand-built two-column table${seen ? `,${seen}` : ''}. Lease mode treats such a row as completed, so every delivery of this key is a duplicate until the row is purged.`,
			next: 'If the event was processed, nothing. If it never was (the hand-built pattern loses an event when n8n stops mid-way), run Release Key with this key and redeliver.',
		};
	return {
		verdict: 'duplicate: unknown status',
		rule: 'unknown',
		explain: `The status ${JSON.stringify(facts.statusValue)} is not one the nodes write (in_progress, completed, or none): Reserve treats anything but in_progress as completed.`,
		next: 'Check what else writes to this table.',
	};
}

function mismatchVerdict(row: Row): Verdict {
	const prints = Object.entries(row)
		.filter(([name, value]) => /fingerprint/i.test(name) && typeof value === 'string')
		.map(([name, value]) => `${name} ${String(value)}`)
		.join(', ');
	return {
		verdict: 'duplicate: fingerprint mismatch',
		rule: 'mismatch',
		explain: `The key was already reserved for a request with another fingerprint${prints ? ` (${prints})` : ''}: the same key arrived with a different body. Reserve never treats it as new.`,
		next: 'Check the key source: a Custom key or an id that is not unique gives two requests one key (or the sender has a bug, or a forged body was replayed). Release the key only if the first request should really run again.',
	};
}

/** An in-progress row: held within its lease (in flight), or past it (the next delivery takes it over). */
function inProgressVerdict(row: Row, facts: RowFacts, nowMs: number): Verdict {
	const { leaseUntil, retryAfter, seen, attemptNote } = facts;
	if (leaseUntil === undefined && typeof retryAfter === 'number')
		return {
			verdict: 'duplicate: in flight',
			rule: 'inFlight',
			explain: `Another execution holds the key: its lease ends in about ${retryAfter} s.${attemptNote}`,
			next: `Wait for the lease: the template answers 409 with Retry-After: ${retryAfter}, and senders that retry come back. If that execution died, the first delivery after the lease end takes the key over.`,
		};
	if (leaseUntil !== undefined && leaseUntil > nowMs)
		return {
			verdict: 'duplicate: in flight',
			rule: 'inFlight',
			explain: `An execution holds the key until ${isoText(leaseUntil)} (in ${durationText(leaseUntil - nowMs)}), its lease end${seen ? `;${seen}` : ''}.${attemptNote}`,
			next: `Wait for the lease: the template answers 409 with Retry-After, and senders that retry come back (GitHub does not: redeliver by hand after ${isoText(leaseUntil)}). If that execution died, the first delivery after the lease end takes the key over.`,
		};
	if (leaseUntil !== undefined)
		return {
			verdict: 'not a duplicate: the lease ended',
			rule: 'leaseEnded',
			explain: `The key is in progress, but its lease ended at ${isoText(leaseUntil)} (${durationText(nowMs - leaseUntil)} ago): the execution that held it died or overran. The next delivery takes it over (attempt + 1) and runs the business step${typeof pick(row, 'fingerprint') === 'string' ? ', if it is the same request: one with another fingerprint is a mismatch, never a takeover' : ''}.${attemptNote}`,
			next: "Redeliver (or wait for the sender's retry). If the step takes longer than the lease, raise Lease (seconds) above the longest time from Reserve to Complete Key.",
		};
	return {
		verdict: 'duplicate: in flight',
		rule: 'inFlight',
		explain: 'The key is in progress; the row gives no lease end.',
		next: 'Paste the row with lease_until (or leaseUntil) to see when the lease ends.',
	};
}
