// One reservation, exactly as the nodes run it: KeyStore (dist) on a pool of the driver the package
// bundles, so the statement text, its parameters and the row handling are the nodes' own. Checked
// on every call: a new key must come back reserved and an existing one must not.
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

import { keyOf, newKey } from './keyTable.mjs';

const require = createRequire(import.meta.url);
const { KeyStore } = require('../../dist/nodes/shared/store/KeyStore.js');
const { Pool } = require('../../dist/nodes/shared/transport/pg.js');

/** Reserve's default lease (seconds). */
export const LEASE_SECONDS = 300;

/** A pool of `max` connections that are never closed for idleness (the backend pid stays the same). */
export function openPool(url, max = 1) {
	const pool = new Pool({ connectionString: url, max, idleTimeoutMillis: 0 });
	pool.on('error', () => undefined);
	return pool;
}

export function storeOn(pool, ref) {
	return new KeyStore({ pool, preparedTables: new Map() }, ref);
}

/** One key: new with probability `newShare`, else one of rows from..to of the fill. */
export function singleMix(newShare, { from, to }) {
	if (Math.random() < newShare) return { fresh: [newKey(randomBytes(12))], existing: [] };
	return { fresh: [], existing: [keyOf(from + Math.floor(Math.random() * (to - from + 1)))] };
}

/** Exactly `newCount` new keys and `count - newCount` existing ones (distinct), for a batch. */
export function batchMix(count, newCount, range) {
	const fresh = Array.from({ length: newCount }, () => newKey(randomBytes(12)));
	const existing = new Set();
	while (existing.size < count - newCount)
		existing.add(keyOf(range.from + Math.floor(Math.random() * (range.to - range.from + 1))));
	return { fresh, existing: [...existing] };
}

/**
 * Runs one reservation of `fresh` + `existing` keys in `mode` ('lease' or 'simple'); returns its time
 * in ms. Throws when a new key is not reserved or an existing key is routed as new (in lease mode an
 * existing key whose lease ended is taken over, which is right).
 */
export async function reserveOnce(store, mode, { fresh, existing }) {
	const targets = [...fresh, ...existing].map((key) => ({ key }));
	const started = process.hrtime.bigint();
	let reservedKeys;
	if (mode === 'lease') {
		const outcome = await store.reserveWithLease(targets, {
			token: randomUUID(),
			leaseSeconds: LEASE_SECONDS,
		});
		reservedKeys = outcome.reserved;
	} else {
		const outcome = await store.reserve(targets, { firstSeen: true });
		reservedKeys = outcome.inserted;
	}
	const ms = Number(process.hrtime.bigint() - started) / 1e6;
	for (const key of fresh)
		if (!reservedKeys.has(key)) throw new Error(`${mode}: new key ${key} was not reserved`);
	if (mode === 'simple')
		for (const key of existing)
			if (reservedKeys.has(key)) throw new Error(`simple: existing key ${key} was routed as new`);
	return ms;
}

/**
 * The design note's statement, bare: `INSERT ... ON CONFLICT (key) DO NOTHING RETURNING key` with
 * nothing of the nodes' around it, on the same table. What any key store pays for a key on a table
 * this size: the baseline the nodes' statements are held against. Returns its time in ms.
 */
export async function reserveBare(pool, ref, { fresh, existing }) {
	const started = process.hrtime.bigint();
	const { rows } = await pool.query(
		`INSERT INTO ${ref.qualified} (key) SELECT unnest($1::text[]) ON CONFLICT (key) DO NOTHING RETURNING key`,
		[[...fresh, ...existing]],
	);
	const ms = Number(process.hrtime.bigint() - started) / 1e6;
	const inserted = new Set(rows.map((row) => row.key));
	for (const key of fresh)
		if (!inserted.has(key)) throw new Error(`bare: new key ${key} not inserted`);
	for (const key of existing)
		if (inserted.has(key)) throw new Error(`bare: existing key ${key} was inserted`);
	return ms;
}

/** CPU time (ms) a process has run so far, in ns resolution (/proc/<pid>/schedstat); undefined where not readable. */
export function cpuMsOf(pid) {
	try {
		return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
	} catch {
		return undefined;
	}
}

export async function backendPid(pool) {
	return (await pool.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
}
