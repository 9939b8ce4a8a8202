// Reservation latency against two key tables (10M and 10k keys), interleaved sample by sample on
// one connection: lease mode and simple mode, one key and a batch of 1,000, half new keys and half
// duplicates. New keys are released again at once (Release Key's statement) so each table keeps its
// size; the small table is vacuumed whenever 500 dead rows piled up in it (its dead rows would
// otherwise be a large share of it and slow it down, flattering the ratio); the big one is not
// (its share of dead rows stays below 1 %), which if anything makes the big table look slower.
import {
	cpuMsOf,
	backendPid,
	batchMix,
	reserveBare,
	reserveOnce,
	singleMix,
	storeOn,
} from './reservations.mjs';
import { percentile } from './stats.mjs';

/** `bare`: the design note's statement alone, the baseline of what the table itself costs. */
export const COMBOS = [
	{ mode: 'lease', size: 1 },
	{ mode: 'simple', size: 1 },
	{ mode: 'bare', size: 1 },
	{ mode: 'lease', size: 1000 },
	{ mode: 'simple', size: 1000 },
	{ mode: 'bare', size: 1000 },
];
export const comboName = ({ mode, size }) => `${mode}/${size}`;

const VACUUM_AFTER_DEAD = 500;

/**
 * tables: { big: { ref, keys }, small: { ref, keys } }. Returns per table and combo the samples of
 * every round (ms) and the backend CPU they used.
 */
export async function measureReservations(
	pool,
	tables,
	{ rounds, singleSamples, batchSamples, warmUp, newShare = 0.5, log },
) {
	const pid = await backendPid(pool);
	const names = Object.keys(tables);
	const stores = Object.fromEntries(names.map((name) => [name, storeOn(pool, tables[name].ref)]));
	const dead = Object.fromEntries(names.map((name) => [name, 0]));
	const samples = {};
	const cpu = {};

	async function one(name, combo, record) {
		const range = { from: 1, to: tables[name].keys };
		const mix =
			combo.size === 1
				? singleMix(newShare, range)
				: batchMix(combo.size, Math.round(combo.size * newShare), range);
		const cpuBefore = cpuMsOf(pid);
		const ms =
			combo.mode === 'bare'
				? await reserveBare(pool, tables[name].ref, mix)
				: await reserveOnce(stores[name], combo.mode, mix);
		const cpuAfter = cpuMsOf(pid);
		if (record) {
			const key = comboName(combo);
			((samples[name] ??= {})[key] ??= []).at(-1).push(ms);
			if (cpuBefore !== undefined && cpuAfter !== undefined) {
				const c = ((cpu[name] ??= {})[key] ??= { ms: 0, statements: 0 });
				c.ms += cpuAfter - cpuBefore;
				c.statements += 1;
			}
		}
		if (mix.fresh.length > 0) {
			await stores[name].release(mix.fresh.map((key) => ({ key })));
			dead[name] += mix.fresh.length;
		}
		if (name === 'small' && dead.small >= VACUUM_AFTER_DEAD) {
			await pool.query(`VACUUM ${tables.small.ref.qualified}`);
			dead.small = 0;
		}
	}

	log(`warm-up: ${warmUp} statements per table and combination`);
	for (const combo of COMBOS)
		for (let i = 0; i < (combo.size === 1 ? warmUp : Math.ceil(warmUp / 10)); i++)
			for (const name of names) await one(name, combo, false);

	const ioBefore = await blockReads(pool, tables);
	for (let round = 1; round <= rounds; round++) {
		const started = Date.now();
		// Odd rounds in one order, even rounds in the reverse one: drift over minutes spreads evenly.
		const combos = round % 2 ? COMBOS : [...COMBOS].reverse();
		for (const combo of combos) {
			for (const name of names) ((samples[name] ??= {})[comboName(combo)] ??= []).push([]);
			const count = combo.size === 1 ? singleSamples : batchSamples;
			for (let i = 0; i < count; i++) {
				const order = i % 2 ? names : [...names].reverse();
				for (const name of order) await one(name, combo, true);
			}
		}
		const line = COMBOS.map((combo) => {
			const key = comboName(combo);
			const p50 = (name) => percentile(samples[name][key].at(-1), 50);
			return `${key} ${p50('big').toFixed(2)}/${p50('small').toFixed(2)} ms`;
		}).join(', ');
		log(
			`round ${round}/${rounds} (${((Date.now() - started) / 1000).toFixed(0)} s): p50 big/small ${line}`,
		);
	}
	const ioAfter = await blockReads(pool, tables);
	const io = Object.fromEntries(
		names.map((name) => [
			name,
			Object.fromEntries(
				Object.keys(ioAfter[name]).map((column) => [
					column,
					ioAfter[name][column] - ioBefore[name][column],
				]),
			),
		]),
	);
	return { samples, cpu, io };
}

/**
 * Blocks of each table (heap, indexes) found in shared_buffers (hit) or read from outside them: a
 * table whose indexes do not fit in shared_buffers reads, where a small one only hits.
 */
async function blockReads(pool, tables) {
	const result = {};
	for (const [name, { ref }] of Object.entries(tables)) {
		const { rows } = await pool.query(
			`SELECT heap_blks_read::float8 AS heap_read, heap_blks_hit::float8 AS heap_hit,
  coalesce(idx_blks_read, 0)::float8 AS index_read, coalesce(idx_blks_hit, 0)::float8 AS index_hit
FROM pg_statio_user_tables WHERE relid = to_regclass($1)`,
			[ref.qualified],
		);
		result[name] = rows[0];
	}
	return result;
}
