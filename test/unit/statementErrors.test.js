// What an operator changed under a running database, as the node reports it: one sentence and the
// statement that fixes it, by SQLSTATE; anything else is left to PostgreSQL's own message.
const { test, expect } = require('@jest/globals');
const { describeStatementError } = require('../../dist/nodes/shared/errors/describeStatementError');

const context = {
	host: 'db',
	port: 5432,
	database: 'app',
	user: 'n8n',
	table: '"public"."processed_events"',
	action: 'reserve the keys',
};

test('read-only (25006): where, and how to turn it off or point at the primary', () => {
	const problem = describeStatementError(
		{ code: '25006', message: 'cannot execute INSERT in a read-only transaction' },
		context,
	);
	expect(problem.message).toBe(
		'PostgreSQL at db:5432 is read-only, so it could not reserve the keys',
	);
	expect(problem.hint).toMatch(/primary/);
	expect(problem.hint).toMatch(
		/ALTER DATABASE "app" RESET default_transaction_read_only; ALTER ROLE "n8n" RESET default_transaction_read_only;/,
	);
});

test('statement timeout (57014) names the setting; a cancel by someone says so instead', () => {
	const timeout = describeStatementError(
		{ code: '57014', message: 'canceling statement due to statement timeout' },
		context,
	);
	expect(timeout.message).toBe(
		'PostgreSQL cancelled the statement to reserve the keys: it ran longer than the statement_timeout set for user "n8n" or database "app"',
	);
	expect(timeout.hint).toMatch(/ALTER ROLE "n8n" RESET statement_timeout;/);
	const cancelled = describeStatementError(
		{ code: '57014', message: 'canceling statement due to user request' },
		context,
	);
	expect(cancelled.message).toBe(
		'PostgreSQL cancelled the statement to reserve the keys (canceling statement due to user request)',
	);
});

test('lock timeout (55P03) names the keys another transaction holds, or says it could not tell', () => {
	const one = describeStatementError(
		{ code: '55P03', message: 'canceling statement due to lock timeout', lockedKeys: ['evt:a'] },
		context,
	);
	expect(one.message).toMatch(
		/^Key "evt:a" is held by another transaction: gave up waiting for it after the lock timeout \(at most 2 s\)/,
	);
	expect(one.hint).toMatch(/pg_stat_activity/);
	const many = describeStatementError(
		{ code: '55P03', message: 'x', lockedKeys: ['a', 'b', 'c', 'd', 'e'] },
		context,
	);
	expect(many.message).toMatch(/^Keys "a", "b", "c" and 2 more are held by another transaction/);
	const unknown = describeStatementError({ code: '55P03', message: 'x' }, context);
	expect(unknown.message).toMatch(
		/^A row or table of "public"."processed_events" is held by another transaction/,
	);
});

test('privilege (42501): on the table, the GRANT; on the schema, the schema GRANT', () => {
	const table = describeStatementError(
		{ code: '42501', message: 'permission denied for table processed_events' },
		context,
	);
	expect(table.message).toBe(
		'User "n8n" lacks a privilege to reserve the keys in "public"."processed_events": permission denied for table processed_events',
	);
	expect(table.hint).toMatch(
		/GRANT SELECT, INSERT, UPDATE, DELETE ON "public"."processed_events" TO "n8n";/,
	);
	const schema = describeStatementError(
		{ code: '42501', message: 'permission denied for schema public' },
		context,
	);
	expect(schema.hint).toMatch(/GRANT USAGE, CREATE ON SCHEMA "public" TO "n8n";/);
});

test("anything else is left to PostgreSQL's own message", () => {
	expect(
		describeStatementError({ code: '42804', message: 'column "key" is of type integer' }, context),
	).toBeUndefined();
	expect(describeStatementError(new Error('boom'), context)).toBeUndefined();
});
