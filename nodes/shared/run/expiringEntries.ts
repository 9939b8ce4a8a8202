/**
 * Values this process holds in memory until a time on one clock (monotonic ms): what
 * executionCredentials.ts, heldSigningSecret.ts and knownSteps.ts keep between node runs. Insertion
 * order is time order (an entry set again moves to the end), so a sweep stops at the first live
 * entry; it runs only once `sweepAt` entries are held, so a quiet process holds a few stale ones.
 */
export class ExpiringEntries<Value> {
	private readonly entries = new Map<string, { value: Value; until: number }>();

	constructor(private readonly sweepAt: number) {}

	/** The value held for `id`, or undefined when there is none or it expired (then it is dropped). */
	get(id: string, now: number): Value | undefined {
		const entry = this.entries.get(id);
		if (entry === undefined) return undefined;
		if (entry.until > now) return entry.value;
		this.entries.delete(id);
		return undefined;
	}

	/** Holds `value` until `until`; one already past it replaces nothing and is not held. */
	set(id: string, value: Value, until: number, now: number): void {
		this.entries.delete(id);
		if (until <= now) return;
		this.sweep(now);
		this.entries.set(id, { value, until });
	}

	delete(id: string): void {
		this.entries.delete(id);
	}

	private sweep(now: number): void {
		if (this.entries.size < this.sweepAt) return;
		for (const [id, entry] of this.entries) {
			if (entry.until > now) break;
			this.entries.delete(id);
		}
	}
}
