// Identifier checks and the SQL text: names are validated and quoted, values never spliced in.
const { test, expect } = require('@jest/globals');
const {
	firstSeenIndexName,
	tableRef,
	IdentifierError,
} = require('../../dist/nodes/shared/store/identifiers');
const sql = require('../../dist/nodes/shared/store/sql');

test('plain identifiers are quoted', () => {
	expect(tableRef('public', 'processed_events').qualified).toBe('"public"."processed_events"');
	expect(tableRef('S1', '2026_Events').qualified).toBe('"S1"."2026_Events"');
});

test.each(['a"b', 'a;b', 'a b', 'a.b', 'a-b', 'ä', '', 'x'.repeat(64)])('%p is refused', (name) => {
	expect(() => tableRef('public', name)).toThrow(IdentifierError);
	expect(() => tableRef(name, 'events')).toThrow(IdentifierError);
});

test('63 bytes is the longest name, and its index name still fits', () => {
	const ref = tableRef('public', 't'.repeat(63));
	expect(Buffer.byteLength(firstSeenIndexName(ref))).toBeLessThanOrEqual(63);
});

test('every statement takes values as bind parameters only', () => {
	const ref = tableRef('public', 'processed_events');
	const statements = [
		sql.reserveSql(ref),
		sql.reserveWithFirstSeenSql(ref),
		sql.releaseSql(ref),
		sql.keySelectionDeleteSql(ref, sql.purgeKeysSelection({ lease: false, withinPrefix: true })),
		sql.purgeCutoffSql(),
	];
	const writes = [
		sql.reserveSql(ref),
		sql.reserveWithFirstSeenSql(ref),
		sql.reserveLeaseSql(ref),
		sql.releaseSql(ref),
		sql.releaseOwnedSql(ref),
		sql.completeSql(ref),
	];
	// Every statement that can wait for a key row bounds that wait, before its first row.
	for (const text of writes) expect(text).toContain(sql.LOCK_BOUND_CTE);
	for (const text of statements) {
		expect(text).toMatch(/\$1/);
		// No string literal: values are never part of the text. The lock bound's constants are the only ones.
		expect(text.replace(sql.LOCK_BOUND_CTE, '')).not.toMatch(/'[^']*'/);
	}
	expect(sql.reserveSql(ref)).toMatch(/ON CONFLICT \(key\) DO NOTHING/);
	expect(sql.reserveWithFirstSeenSql(ref)).toMatch(/ON CONFLICT \(key\) DO NOTHING/);
});
