/** How long pools and their clients live. Constants for n8n; tests shorten them with setPoolTimings. */
export interface PoolTimings {
	/** Idle clients are closed by the pool itself, so a quiet workflow holds no connections. */
	idleClientMs: number;
	/**
	 * A pool without a checkout for this long is closed (at the next execution that asks for a pool):
	 * a workflow that stopped, a deleted credential.
	 */
	unusedPoolMs: number;
	/**
	 * A pool replaced by an edited credential is closed once no client was checked out of it for this
	 * long (or once its last connection closed): an execution that started before the edit finishes
	 * its statements on it first.
	 */
	retiredPoolGraceMs: number;
}

const DEFAULT_POOL_TIMINGS: Readonly<PoolTimings> = Object.freeze({
	idleClientMs: 10_000,
	unusedPoolMs: 5 * 60_000,
	retiredPoolGraceMs: 5_000,
});

let current: PoolTimings = { ...DEFAULT_POOL_TIMINGS };

export function poolTimings(): Readonly<PoolTimings> {
	return current;
}

/**
 * For tests: shorter lifetimes, applied to pools opened and checks made from now on.
 * Returns a function that restores the previous values.
 */
export function setPoolTimings(changes: Partial<PoolTimings>): () => void {
	const previous = current;
	current = { ...current, ...changes };
	return () => {
		current = previous;
	};
}
