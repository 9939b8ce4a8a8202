// A purge of the oldest keys (the Purge Keys node's own batched statement through KeyStore.purge,
// batches of its default 1,000) while reservations arrive at a steady rate on another connection:
// a window without the purge, the purge, and another window without it. A third connection
// watches the reserving backend in pg_stat_activity every 10 ms and notes how long it has been
// waiting whenever it waits on a lock. Reservations are lease mode, one key each: a third new keys,
// a third old keys of the range being purged (a late resend of an old event: the one reservation
// that can meet a row the purge holds), a third newer keys.
import { setTimeout as sleep } from 'node:timers/promises';

import { retentionForOldest } from './keyTable.mjs';
import { backendPid, openPool, reserveOnce, singleMix, storeOn } from './reservations.mjs';

const POLL_MS = 10;

export async function purgeUnderLoad(url, { ref, keys, purgeCount, rate, baselineSeconds, log }) {
	const loadPool = openPool(url);
	const purgePool = openPool(url);
	const watchPool = openPool(url);
	try {
		const loadStore = storeOn(loadPool, ref);
		const purgeStore = storeOn(purgePool, ref);
		const pid = await backendPid(loadPool);
		const watch = { phase: 'before', byPhase: {}, running: true };
		const watching = watchLockWaits(watchPool, pid, watch);

		const window = async (name, until) => {
			watch.phase = name;
			watch.byPhase[name] = { lockObservations: 0, longestLockWaitMs: 0 };
			const result = { name, latencies: [], errors: {}, startedMs: Date.now() };
			const interval = 1000 / rate;
			let next = performance.now();
			let i = 0;
			while (!until()) {
				const wait = next - performance.now();
				if (wait > 0) await sleep(wait);
				// Late (a slow reservation): skip the slots already missed, keep the rate otherwise.
				next = Math.max(next + interval, performance.now());
				const third = i++ % 3;
				const mix =
					third === 0
						? singleMix(1, { from: 1, to: keys })
						: third === 1
							? singleMix(0, { from: 1, to: purgeCount })
							: singleMix(0, { from: purgeCount + 1, to: keys });
				try {
					result.latencies.push(await reserveOnce(loadStore, 'lease', mix));
				} catch (error) {
					const code = error.code ?? error.message;
					result.errors[code] = (result.errors[code] ?? 0) + 1;
				}
			}
			result.seconds = (Date.now() - result.startedMs) / 1000;
			return result;
		};
		const forSeconds = (seconds) => {
			const end = Date.now() + seconds * 1000;
			return () => Date.now() >= end;
		};

		log(`purge under load: ${baselineSeconds} s of reservations at ${rate}/s without a purge`);
		const before = await window('before', forSeconds(baselineSeconds));

		const retention = await retentionForOldest(purgePool, ref, purgeCount);
		log(
			`purge under load: purging the oldest ${purgeCount.toLocaleString('en')} keys (retention ${retention})`,
		);
		let purgeDone = false;
		const purgeStarted = Date.now();
		const purging = purgeStore
			.purge({ retention, batchSize: 1000 })
			.finally(() => (purgeDone = true));
		const during = await window('during', () => purgeDone);
		const purge = await purging;
		const purgeSeconds = (Date.now() - purgeStarted) / 1000;
		log(
			`purge under load: deleted ${purge.deleted.toLocaleString('en')} keys in ${purge.batches} batches, ${purgeSeconds.toFixed(1)} s`,
		);

		log(`purge under load: ${baselineSeconds} s of reservations at ${rate}/s after the purge`);
		const after = await window('after', forSeconds(baselineSeconds));
		watch.running = false;
		await watching;
		return {
			rate,
			purgeCount,
			purge: {
				deleted: purge.deleted,
				batches: purge.batches,
				seconds: purgeSeconds,
				batchSize: 1000,
			},
			windows: { before, during, after },
			lockWaits: { pollMs: POLL_MS, ...watch.byPhase },
		};
	} finally {
		await Promise.all([loadPool.end(), purgePool.end(), watchPool.end()]);
	}
}

/** Every POLL_MS: is `pid` waiting on a lock, and for how long has its statement run? */
async function watchLockWaits(pool, pid, watch) {
	while (watch.running) {
		const { rows } = await pool.query(
			`SELECT wait_event_type, extract(epoch FROM clock_timestamp() - query_start)::float8 * 1000 AS ms
FROM pg_stat_activity WHERE pid = $1 AND state = 'active'`,
			[pid],
		);
		const phase = watch.byPhase[watch.phase];
		if (rows[0]?.wait_event_type === 'Lock' && phase) {
			phase.lockObservations += 1;
			phase.longestLockWaitMs = Math.max(phase.longestLockWaitMs, rows[0].ms);
		}
		await sleep(POLL_MS);
	}
}
