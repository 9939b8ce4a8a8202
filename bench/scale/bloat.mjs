// Bloat over purge-and-refill cycles: two key tables filled alike, one with autovacuum's defaults,
// one with the per-table settings the docs recommend (TUNED_SETTINGS), the same work on both,
// interleaved. One cycle: the Purge Keys node's purge of the oldest `cycleShare` of the keys, then as
// many new keys the way the lease-mode template writes them (Reserve inserts in_progress, Complete Key
// marks completed: one dead row per key before any purge), in batches of 1,000; then a pause long
// enough for autovacuum's launcher to come round (autovacuum_naptime, 60 s by default) before the
// sizes are read. With 30 days of retention, a cycle of 10 % stands for three days of a daily purge.
import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes, randomUUID } from 'node:crypto';

import { createKeyTable, newKey, retentionForOldest, tableSizes } from './keyTable.mjs';
import { LEASE_SECONDS, openPool, storeOn } from './reservations.mjs';

/** The per-table settings the docs recommend for a key table (docs/production.md). */
export const TUNED_SETTINGS = {
	autovacuum_vacuum_scale_factor: 0.02,
	autovacuum_vacuum_insert_scale_factor: 0.02,
	autovacuum_analyze_scale_factor: 0.02,
	autovacuum_vacuum_cost_limit: 1000,
};

export function tunedSettingsSql(ref) {
	const list = Object.entries(TUNED_SETTINGS)
		.map(([name, value]) => `${name} = ${value}`)
		.join(', ');
	return `ALTER TABLE ${ref.qualified} SET (${list})`;
}

const BATCH = 1000;

export async function bloatCycles(url, { keys, cycles, cycleShare, waitSeconds, log }) {
	const pool = openPool(url, 2);
	try {
		const tables = {};
		for (const name of ['defaults', 'tuned']) {
			const made = await createKeyTable(pool, { table: `keys_${name}`, keys, log });
			tables[name] = { ref: made.ref, store: storeOn(pool, made.ref) };
		}
		await pool.query(tunedSettingsSql(tables.tuned.ref));
		const autovacuum = (await pool.query('SHOW autovacuum')).rows[0].autovacuum;
		const naptime = (await pool.query('SHOW autovacuum_naptime')).rows[0].autovacuum_naptime;
		const history = { defaults: [], tuned: [] };
		for (const name of ['defaults', 'tuned'])
			history[name].push({ cycle: 0, ...(await tableSizes(pool, tables[name].ref)) });
		const cycleKeys = Math.round(keys * cycleShare);
		for (let cycle = 1; cycle <= cycles; cycle++) {
			const started = Date.now();
			const order = cycle % 2 ? ['defaults', 'tuned'] : ['tuned', 'defaults'];
			for (const name of order) {
				const { ref, store } = tables[name];
				await store.purge({
					retention: await retentionForOldest(pool, ref, cycleKeys),
					batchSize: BATCH,
				});
				for (let done = 0; done < cycleKeys; done += BATCH) {
					const token = randomUUID();
					const targets = Array.from({ length: Math.min(BATCH, cycleKeys - done) }, () => ({
						key: newKey(randomBytes(12)),
						token,
					}));
					await store.reserveWithLease(targets, { token, leaseSeconds: LEASE_SECONDS });
					await store.complete(targets);
				}
			}
			const worked = (Date.now() - started) / 1000;
			const rest = waitSeconds * 1000 - (Date.now() - started);
			if (rest > 0) await sleep(rest);
			for (const name of ['defaults', 'tuned'])
				history[name].push({ cycle, ...(await tableSizes(pool, tables[name].ref)) });
			const mb = (bytes) => (bytes / 2 ** 20).toFixed(0);
			log(
				`bloat cycle ${cycle}/${cycles} (work ${worked.toFixed(0)} s): ` +
					['defaults', 'tuned']
						.map((name) => {
							const now = history[name].at(-1);
							return `${name} heap ${mb(now.heapBytes)} MB, indexes ${mb(now.indexBytes)} MB, dead ${now.deadTuples}, autovacuums ${now.autovacuums}`;
						})
						.join('; '),
			);
		}
		return {
			keys,
			cycles,
			cycleKeys,
			waitSeconds,
			autovacuum,
			naptime,
			tunedSettings: TUNED_SETTINGS,
			tunedSql: tunedSettingsSql({ qualified: '<schema>.<table>' }),
			history,
		};
	} finally {
		await pool.end();
	}
}
