// The key table of the scale benchmark: made by the nodes' own statements (createTableSql, then the
// Idempotency Keys node's operator indexes, CONCURRENTLY as that node builds them on a table in use),
// filled with generate_series in a few big INSERTs, and measured (pg_relation_size, pg_indexes_size).
//
// The mix of a 30-day table of a busy webhook (one row per key, first_seen spread evenly over the 30
// days, heap in arrival order, keys random like Stripe's evt_ ids so every insert lands on a random
// leaf of the primary key):
//   - 2 % legacy rows: written in simple mode or by the hand-built two-column pattern (status NULL);
//   - 0.5 % in progress with an ended lease (their execution died, no retry came), and every key of
//     the last 2 minutes in progress with a running lease (in flight now);
//   - 1 % taken over once (attempts 2);
//   - the rest completed (owner token, completed_at); 30 % with a request fingerprint, 10 % with a
//     stored response (the idempotent-API template).
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const sql = require('../../dist/nodes/shared/store/sql.js');
const { tableRef } = require('../../dist/nodes/shared/store/identifiers.js');

/** @type {Array<'inProgress' | 'takeover' | 'keyPrefix'>} */
export const OPERATOR_INDEXES = ['inProgress', 'takeover', 'keyPrefix'];
const DAYS = 30;
const IN_FLIGHT_SECONDS = 120;
const LEASE_SECONDS = 300;

/** The key of row g (1 = oldest), the same text the fill computes in SQL. */
export function keyOf(g) {
	return `stripe:evt_${createHash('md5').update(`k${g}`).digest('hex').slice(0, 24)}`;
}

/** A key no table holds: random, so it lands on a random leaf of the primary key like a real id. */
export function newKey(random) {
	return `stripe:evt_${random.toString('hex').slice(0, 24)}`;
}

/** Rows from..to of a table of `total` keys whose newest key is `newestAt` ($1..$4). */
const FILL_SQL = (ref) => `INSERT INTO ${ref.qualified}
  (key, first_seen, status, owner_token, lease_until, completed_at, attempts, fingerprint, response)
SELECT r.key, r.first_seen,
  CASE WHEN r.bucket < 20 THEN NULL
       WHEN r.bucket < 25 OR r.first_seen > $4::timestamptz - interval '${IN_FLIGHT_SECONDS} seconds' THEN 'in_progress'
       ELSE 'completed' END,
  CASE WHEN r.bucket < 20 THEN NULL ELSE md5('o' || r.g)::uuid::text END,
  CASE WHEN r.bucket >= 20 AND (r.bucket < 25 OR r.first_seen > $4::timestamptz - interval '${IN_FLIGHT_SECONDS} seconds')
       THEN r.first_seen + interval '${LEASE_SECONDS} seconds' END,
  CASE WHEN r.bucket >= 25 AND r.first_seen <= $4::timestamptz - interval '${IN_FLIGHT_SECONDS} seconds'
       THEN r.first_seen + (r.bucket % 50) * interval '20 milliseconds' END,
  CASE WHEN r.bucket >= 25 AND r.bucket < 35 THEN 2 ELSE 1 END,
  CASE WHEN r.bucket >= 700 THEN md5('f' || r.g) || md5('F' || r.g) END,
  CASE WHEN r.bucket >= 900 AND r.first_seen <= $4::timestamptz - interval '${IN_FLIGHT_SECONDS} seconds'
       THEN '{"statusCode":200,"headers":{"content-type":"application/json"},"body":"{\\"received\\":true}"}'::jsonb END
FROM (
  SELECT g, 'stripe:evt_' || left(md5('k' || g), 24) AS key,
    $4::timestamptz - interval '${DAYS} days' * (1 - g::float8 / $3::float8) AS first_seen,
    (g * 7919) % 1000 AS bucket
  FROM generate_series($1::bigint, $2::bigint) AS g
) r`;

/**
 * Creates `schema.table` with the nodes' statements and fills it with `keys` rows in INSERTs of at
 * most `chunk` rows (`nice`: the backend that fills runs at nice 10, so the machine stays usable).
 * Then VACUUM (ANALYZE), as autovacuum would have done on a table this old, and the operator indexes.
 */
export async function createKeyTable(
	pool,
	{
		schema = 'public',
		table,
		keys,
		chunk = 1_000_000,
		nice = true,
		log = (message) => void message,
	},
) {
	const ref = tableRef(schema, table);
	const client = await pool.connect();
	try {
		if (nice) await reniceBackend(client, log);
		await client.query(sql.createTableSql(ref, { lease: true, fingerprint: true }));
		const newestAt = (await client.query('SELECT now() AS now')).rows[0].now;
		const started = Date.now();
		for (let from = 1; from <= keys; from += chunk) {
			const to = Math.min(keys, from + chunk - 1);
			await client.query(FILL_SQL(ref), [from, to, keys, newestAt]);
			const seconds = (Date.now() - started) / 1000;
			log(
				`${table}: ${to.toLocaleString('en')} of ${keys.toLocaleString('en')} keys (${seconds.toFixed(0)} s, ${Math.round(to / seconds).toLocaleString('en')} rows/s)`,
			);
		}
		const fillSeconds = (Date.now() - started) / 1000;
		const vacuumStarted = Date.now();
		await client.query(`VACUUM (ANALYZE) ${ref.qualified}`);
		const vacuumSeconds = (Date.now() - vacuumStarted) / 1000;
		const indexStarted = Date.now();
		for (const index of OPERATOR_INDEXES)
			await client.query(sql.createOperatorIndexSql(ref, index));
		const indexSeconds = (Date.now() - indexStarted) / 1000;
		log(
			`${table}: filled in ${fillSeconds.toFixed(0)} s, VACUUM (ANALYZE) ${vacuumSeconds.toFixed(0)} s, operator indexes ${indexSeconds.toFixed(0)} s`,
		);
		return { ref, keys, newestAt, fillSeconds, vacuumSeconds, indexSeconds };
	} finally {
		client.release();
	}
}

/** Runs the backend behind `client` at nice 10: the fill is the machine's heaviest work here. */
async function reniceBackend(client, log) {
	const pid = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
	try {
		const { execFileSync } = await import('node:child_process');
		execFileSync('renice', ['-n', '10', '-p', String(pid)], { stdio: 'ignore' });
	} catch {
		log(
			`(could not renice backend ${pid}: another host or another user; filling at normal priority)`,
		);
	}
}

/** Heap, indexes (each) and dead tuples of a table. */
export async function tableSizes(pool, ref) {
	const { rows } = await pool.query(
		`SELECT pg_relation_size(c.oid)::float8 AS heap, pg_indexes_size(c.oid)::float8 AS indexes,
  pg_total_relation_size(c.oid)::float8 AS total,
  coalesce(s.n_live_tup, 0)::float8 AS live, coalesce(s.n_dead_tup, 0)::float8 AS dead,
  coalesce(s.autovacuum_count, 0)::int AS autovacuums, coalesce(s.vacuum_count, 0)::int AS vacuums,
  (SELECT json_object_agg(i.relname, pg_relation_size(i.oid)) FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
    WHERE x.indrelid = c.oid) AS each_index
FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
WHERE c.oid = to_regclass($1)`,
		[ref.qualified],
	);
	const row = rows[0];
	return {
		heapBytes: row.heap,
		indexBytes: row.indexes,
		totalBytes: row.total,
		liveTuples: row.live,
		deadTuples: row.dead,
		autovacuums: row.autovacuums,
		vacuums: row.vacuums,
		indexes: row.each_index,
	};
}

/** The retention (a PostgreSQL interval) whose purge deletes the oldest `count` keys now, and no more. */
export async function retentionForOldest(pool, ref, count) {
	const { rows } = await pool.query(
		`SELECT extract(epoch FROM now() - first_seen)::float8 AS age FROM ${ref.qualified}
ORDER BY first_seen OFFSET $1::bigint LIMIT 1`,
		[count],
	);
	if (rows.length === 0) return '0 seconds';
	// The (count+1)-th oldest key stays: its age, as a retention, keeps it and everything newer.
	return `${rows[0].age.toFixed(6)} seconds`;
}

export const MB = 2 ** 20;
