/**
 * "Explain a retry of a multi-step event": given the workflow's step names in order and, optionally,
 * the key's row (as the look-up SQL, a Postgres node or the Keys node's look-up gives it), what the
 * sender's next retry does: whether it runs at all (completed: a duplicate; a lease still running:
 * in flight), and which steps it skips (recorded: their output is reused) and which it runs. The
 * rules are those of Reserve's lease statement and of Idempotency Step (nodes/shared/store/sql/steps.ts).
 */

export interface RetryStep {
	name: string;
	/** skipped: recorded, its output is reused; runs: not recorded (or the retry starts afresh). */
	onRetry: 'skipped' | 'runs';
	detail: string;
}

export interface RetryExplanation {
	/** Starts with `duplicate:`, `in flight:`, `resumes:`, `runs every step:` or `no row given`. */
	verdict: string;
	steps: RetryStep[];
	/** Problems with what was pasted (JSON that does not parse, recorded steps not in the list). */
	warnings: string[];
}

type Row = Record<string, unknown>;

/** The step names, one per line, in workflow order; blank lines and repeats left out. */
export function stepNamesOf(text: string): string[] {
	return [
		...new Set(
			text
				.split('\n')
				.map((line) => line.trim())
				.filter((line) => line !== ''),
		),
	];
}

/**
 * When each recorded step was recorded, by name: from the row's `steps` column ({ step: { at } })
 * or the look-up item's `steps` list ([{ step, recordedAt }]).
 */
function recordedSteps(row: Row): Map<string, string> {
	const recorded = new Map<string, string>();
	const steps = row.steps;
	if (Array.isArray(steps)) {
		for (const entry of steps as Array<{ step?: unknown; recordedAt?: unknown }>)
			if (typeof entry?.step === 'string') recorded.set(entry.step, String(entry.recordedAt ?? ''));
	} else if (typeof steps === 'object' && steps !== null) {
		for (const [name, record] of Object.entries(steps as Record<string, { at?: unknown }>))
			recorded.set(name, String(record?.at ?? ''));
	}
	return recorded;
}

function leaseEndMs(row: Row): number | undefined {
	const value = row.lease_until ?? row.leaseUntil;
	if (typeof value !== 'string' && typeof value !== 'number') return undefined;
	const ms = new Date(value).getTime();
	return Number.isNaN(ms) ? undefined : ms;
}

/** Every step, run: a new event, or a row without records. */
function allRun(names: string[], why: string): RetryStep[] {
	return names.map((name) => ({ name, onRetry: 'runs', detail: why }));
}

export function explainRetry(namesText: string, rowText: string, nowMs: number): RetryExplanation {
	const names = stepNamesOf(namesText);
	const warnings: string[] = [];
	if (names.length === 0) warnings.push('List the step names, one per line, in workflow order.');
	if (rowText.trim() === '')
		return {
			verdict: 'no row given: a new event runs every step',
			steps: allRun(names, 'nothing recorded yet'),
			warnings,
		};
	let row: Row;
	try {
		const parsed: unknown = JSON.parse(rowText);
		// The look-up SQL's result as a Postgres node shows it: [{ row: { … } }] or { row: { … } }.
		// An empty list: the look-up found no row.
		const first = Array.isArray(parsed) ? ((parsed[0] as unknown) ?? { found: false }) : parsed;
		row = ((first as { row?: Row } | undefined)?.row ?? first) as Row;
		if (typeof row !== 'object' || row === null || Array.isArray(row))
			throw new Error('not an object');
	} catch {
		return {
			verdict: 'no row given: the pasted row is not a JSON object',
			steps: [],
			warnings: [...warnings, 'Paste the row as JSON, e.g. the look-up below gives it.'],
		};
	}
	if (row.found === false)
		return {
			verdict:
				'runs every step: the key has no row (new, released without step records, or purged)',
			steps: allRun(names, 'nothing recorded'),
			warnings,
		};
	const recorded = recordedSteps(row);
	for (const name of recorded.keys())
		if (!names.includes(name))
			warnings.push(
				`The row records a step "${name}" that is not in the list: a renamed step runs again under its new name.`,
			);
	const steps: RetryStep[] = names.map((name) =>
		recorded.has(name)
			? {
					name,
					onRetry: 'skipped',
					detail: `recorded ${recorded.get(name)}: its output is reused, the node does not run`,
				}
			: { name, onRetry: 'runs', detail: 'not recorded' },
	);
	const status = row.status ?? null;
	if (status === 'completed' || status === null || status === 'legacy')
		return {
			verdict:
				'duplicate: the event is completed, so a retry runs no step (answered 200 duplicate)',
			steps: steps.map((step) => ({
				...step,
				onRetry: 'skipped',
				detail: 'the event is completed',
			})),
			warnings,
		};
	const leaseEnd = leaseEndMs(row);
	if (leaseEnd !== undefined && leaseEnd > nowMs)
		return {
			verdict: `in flight: an execution holds the event until ${new Date(leaseEnd).toISOString()}; a retry before then is answered 409 and runs nothing; after it, the retry takes the event over as below`,
			steps,
			warnings,
		};
	const skipped = steps.filter((step) => step.onRetry === 'skipped').length;
	// The first step not recorded may have been running when the execution that held the key died.
	const next = steps.find((step) => step.onRetry === 'runs');
	if (next !== undefined)
		next.detail =
			'not recorded: runs; if the execution before died while it ran, this is its second run (unless it is Exactly-Once SQL or sends a downstream idempotency key)';
	return {
		verdict:
			skipped === 0
				? 'runs every step: the retry takes the event over and nothing is recorded yet'
				: `resumes: the retry takes the event over, skips ${skipped} recorded step${skipped === 1 ? '' : 's'} and runs the rest`,
		steps,
		warnings,
	};
}
