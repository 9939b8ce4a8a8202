import { sleep, type Logger } from 'n8n-workflow';

import type { PoolEntry } from '../transport/poolCache';
import type { TableRef } from './identifiers';
import { renewLeasesSql } from './sql/leases';

/**
 * A lease that lives as long as its execution. Each n8n process (main or worker) renews, in one
 * statement per table, the leases of the keys its running executions own, until the execution
 * ends, Complete Key or Release Key lets the key go, or a ceiling passes. When the process dies
 * (kill -9, out of memory, a lost worker) nothing renews, and the key is taken over once its lease
 * ends, as before: so the lease no longer has to be longer than the slowest run, only than the
 * time a crash may go unnoticed.
 *
 * No timers of its own (n8n Cloud's rules for community nodes forbid setTimeout): one loop per
 * table, awake once a second through n8n-workflow's sleep while it keeps a key, gone when it keeps
 * none. A renewal that fails (the database away) is tried again at the next second, and never
 * shortens a lease: at worst the lease ends as it would have without the keeper.
 */

/** A key as its reservation holds it. */
export interface KeptLease {
	key: string;
	token: string;
}

export interface KeepOptions {
	leaseSeconds: number;
	/** Renewal stops this many seconds from now, whatever else happens. */
	maxRunSeconds: number;
	/** Settles when whoever holds the keys is done (the execution ended): renewal stops then. */
	until: Promise<unknown>;
	logger?: Logger;
}

/** How often a loop wakes: a renewal is due, a ceiling passed, nothing left to keep. */
export const KEEPER_TICK_MS = 1000;

/** A lease is renewed once a third of it has passed: two renewals can fail before it ends. */
export function renewEveryMs(leaseSeconds: number): number {
	return Math.max(KEEPER_TICK_MS, (leaseSeconds * 1000) / 3);
}

type RenewState = 'renewed' | 'busy' | 'gone';

interface Kept extends KeptLease {
	leaseSeconds: number;
	/** Monotonic ms: renewal stops here (the latest of its holders' ceilings). */
	deadline: number;
	renewAt: number;
	/** Holders not done yet: an execution, and the Redrive Trigger that started it. */
	holds: number;
}

function monotonic(): number {
	return performance.now();
}

function idOf({ key, token }: KeptLease): string {
	return `${key}\u0000${token}`;
}

/** The keys one process keeps in one table, and the loop that renews them. */
class TableKeeper {
	private readonly kept = new Map<string, Kept>();
	private looping = false;
	private logger?: Logger;
	/** A renewal failed and none succeeded since: said once, not every second of an outage. */
	private failing = false;

	constructor(
		private readonly entry: PoolEntry,
		private readonly ref: TableRef,
	) {}

	get size(): number {
		return this.kept.size;
	}

	keep(leases: readonly KeptLease[], options: KeepOptions): void {
		const now = monotonic();
		const deadline = now + options.maxRunSeconds * 1000;
		const held: string[] = [];
		for (const lease of leases) {
			const id = idOf(lease);
			const existing = this.kept.get(id);
			if (existing !== undefined) {
				existing.holds += 1;
				existing.deadline = Math.max(existing.deadline, deadline);
			} else {
				this.kept.set(id, {
					...lease,
					leaseSeconds: options.leaseSeconds,
					deadline,
					renewAt: now + renewEveryMs(options.leaseSeconds),
					holds: 1,
				});
			}
			held.push(id);
		}
		if (options.logger !== undefined) this.logger = options.logger;
		const done = () => {
			for (const id of held) {
				const kept = this.kept.get(id);
				if (kept === undefined) continue;
				kept.holds -= 1;
				if (kept.holds <= 0) this.kept.delete(id);
			}
		};
		options.until.then(done, done);
		if (!this.looping) void this.loop();
	}

	forget(leases: readonly KeptLease[]): void {
		for (const lease of leases) this.kept.delete(idOf(lease));
	}

	/** Wakes every tick while it keeps a key; renews the table's keys once one of them is due. */
	private async loop(): Promise<void> {
		this.looping = true;
		try {
			while (this.kept.size > 0) {
				await sleep(KEEPER_TICK_MS);
				const now = monotonic();
				for (const [id, kept] of this.kept) if (kept.deadline <= now) this.kept.delete(id);
				const due = [...this.kept.values()].some((kept) => kept.renewAt <= now);
				if (due) await this.renew(now);
			}
		} finally {
			this.looping = false;
			// A key kept while the loop was leaving it: start again.
			if (this.kept.size > 0) void this.loop();
		}
	}

	/** One statement for every key of the table; a failure leaves them as they were, for the next tick. */
	private async renew(sentAt: number): Promise<void> {
		const batch = [...this.kept.values()].sort((a, b) => (a.key < b.key ? -1 : 1));
		try {
			const { rows } = await this.entry.pool.query<[string, RenewState]>({
				text: renewLeasesSql(this.ref),
				values: [
					batch.map(({ key }) => key),
					batch.map(({ token }) => token),
					batch.map(({ leaseSeconds }) => leaseSeconds),
				],
				rowMode: 'array',
			});
			if (this.failing)
				this.logger?.info(
					`Idempotency lease keeper: renewing in ${this.ref.qualified} works again`,
				);
			this.failing = false;
			const states = new Map(rows);
			for (const kept of batch) {
				const state = states.get(kept.key);
				// Gone: completed, released, purged, or no longer this reservation's. Nothing to keep.
				if (state === 'gone') this.kept.delete(idOf(kept));
				else if (state === 'renewed') kept.renewAt = sentAt + renewEveryMs(kept.leaseSeconds);
			}
		} catch (error) {
			if (this.failing) return;
			this.failing = true;
			this.logger?.warn(
				`Idempotency lease keeper: renewing ${batch.length} lease(s) in ${this.ref.qualified} failed, trying again every ${KEEPER_TICK_MS / 1000} s: ${(error as Error).message}`,
			);
		}
	}
}

/** One keeper per pool and table in this process. */
const keepers = new WeakMap<PoolEntry, Map<string, TableKeeper>>();

function keeperOf(entry: PoolEntry, ref: TableRef, create: boolean): TableKeeper | undefined {
	let tables = keepers.get(entry);
	if (tables === undefined) {
		if (!create) return undefined;
		tables = new Map();
		keepers.set(entry, tables);
	}
	let keeper = tables.get(ref.qualified);
	if (keeper === undefined && create) {
		keeper = new TableKeeper(entry, ref);
		tables.set(ref.qualified, keeper);
	}
	return keeper;
}

/** Renews these leases until `until` settles or the ceiling passes (see the top of this file). */
export function keepLeases(
	entry: PoolEntry,
	ref: TableRef,
	leases: readonly KeptLease[],
	options: KeepOptions,
): void {
	if (leases.length === 0 || options.maxRunSeconds <= 0) return;
	keeperOf(entry, ref, true)?.keep(leases, options);
}

/** Stops renewing these leases at once (Complete Key, Release Key). */
export function forgetLeases(entry: PoolEntry, ref: TableRef, leases: readonly KeptLease[]): void {
	keeperOf(entry, ref, false)?.forget(leases);
}

/** How many leases this process keeps in the table (tests, diagnostics). */
export function keptLeaseCount(entry: PoolEntry, ref: TableRef): number {
	return keeperOf(entry, ref, false)?.size ?? 0;
}
