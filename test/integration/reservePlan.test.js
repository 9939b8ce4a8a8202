// The reserve statements must stay index work on a big key table: a plan that scans the whole table
// would make every reservation slower as the table grows. PostgreSQL's own plans, read with EXPLAIN.
const { test, expect } = require('@jest/globals');
const { tableRef } = require('../../dist/nodes/shared/store/identifiers');
const sql = require('../../dist/nodes/shared/store/sql');
const { useTestDatabase } = require('../support/database');

const ref = tableRef('public', 'processed_events');
const db = useTestDatabase(async (database) => {
	await database.query(sql.createTableSql(ref, { lease: false }));
	await database.query(
		`INSERT INTO processed_events (key) SELECT 'evt:existing_' || g FROM generate_series(1, 200000) g`,
	);
	await database.query('ANALYZE processed_events');
});

/** Every plan node of a statement run on these keys, inside a transaction that is rolled back. */
async function planNodes(statement, keys) {
	await db.query('BEGIN');
	try {
		const { rows } = await db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement}`, [keys]);
		const nodes = [];
		const visit = (node) => {
			nodes.push(node);
			for (const child of node.Plans ?? []) visit(child);
		};
		visit(rows[0]['QUERY PLAN'][0].Plan);
		return nodes;
	} finally {
		await db.query('ROLLBACK');
	}
}

/** 2,000 sorted keys, half of them already in the table. */
function mixedKeys() {
	const keys = [];
	for (let i = 1; i <= 1000; i++) keys.push(`evt:existing_${i * 150}`, `evt:fresh_${i}`);
	return keys.sort();
}

const scansOfKeyTable = (nodes) =>
	nodes.filter(
		(node) =>
			node['Relation Name'] === 'processed_events' &&
			/Seq Scan|Bitmap Heap Scan/.test(node['Node Type']),
	);

test.each([
	['reserve', () => sql.reserveSql(ref)],
	['reserve with first seen', () => sql.reserveWithFirstSeenSql(ref)],
])(
	'%s reads the 200,000-row key table only through its primary key index',
	async (_name, statement) => {
		const nodes = await planNodes(statement(), mixedKeys());
		expect(scansOfKeyTable(nodes)).toEqual([]);
		const insert = nodes.find((node) => node['Node Type'] === 'ModifyTable');
		expect(insert['Tuples Inserted']).toBe(1000);
		expect(insert['Conflicting Tuples']).toBe(1000);
	},
);

test('first seen is looked up only for the keys the insert did not take', async () => {
	const nodes = await planNodes(sql.reserveWithFirstSeenSql(ref), mixedKeys());
	const lookups = nodes.filter(
		(node) => node['Node Type'] === 'Index Scan' && node['Relation Name'] === 'processed_events',
	);
	expect(lookups).toHaveLength(1);
	// One probe per already-existing key (1,000), none for the 1,000 keys this statement inserted.
	expect(lookups[0]['Actual Loops']).toBe(1000);
});
