// The email key sources (Email Trigger (IMAP) Message, Gmail Trigger Message), through the real
// Idempotency Reserve node (n8n-core's WorkflowExecute, real PostgreSQL), on real emails
// (test/fixtures/email/*.eml) as n8n 2.41.1's own trigger code turned them into items
// (test/fixtures/email/items.json, written by scripts/email-fixtures.mjs against a real dovecot):
// keys checked in the table, item errors, what the item says about its key, the email stored whole
// for the Redrive Trigger. Then, property-based (fast-check): two different emails never share a
// key, the same email seen twice (two triggers, two formats with a Message-ID, a re-read) always does.
const { beforeEach, describe, test, expect } = require('@jest/globals');
const { createHash } = require('node:crypto');
const fc = require('fast-check');

const { useTestDatabase } = require('../support/database');
const { runWorkflow } = require('../support/engine');
const reserveWorkflow = require('../fixtures/reserve.workflow.json');
const fixtures = require('../fixtures/email/items.json');
const { canonicalJson } = require('../../dist/nodes/shared/keys/fingerprint');
const { redrivenJson } = require('../../dist/nodes/shared/delivery/storedDelivery');

const db = useTestDatabase();

// Each test starts from an empty key table (Reserve creates it), so a key reserved by an earlier
// test cannot make an email look in flight.
beforeEach(async () => {
	await db.query('DROP TABLE IF EXISTS processed_events');
});

/** @param {string} text */
const sha256 = (text) => createHash('sha256').update(text).digest('hex');

/** The items of one fixture email: `trigger` imap (simple, resolved, raw) or gmail (simple, resolved). */
function item(name, trigger, format) {
	const email = fixtures.emails.find((candidate) => candidate.name.startsWith(name));
	if (!email) throw new Error(`no fixture email ${name}`);
	return { json: structuredClone(email[trigger][format]) };
}

const IMAP = { keySource: 'imapEmail', namespace: 'imap-INBOX' };
const GMAIL = { keySource: 'gmailMessage', namespace: 'gmail-support' };

/** Runs Reserve (version 2, lease mode unless told) over `items`; returns the run. */
async function reserve(parameters, items) {
	return await runWorkflow(reserveWorkflow, items, {
		credentials: db.credential(),
		nodeOverrides: { 'Idempotency Reserve': { typeVersion: 2, parameters } },
	});
}

/** Each item's Reserve output json, in input order, with the output it left on. */
function routed(run) {
	return Array.from({ length: run.outputCount('Idempotency Reserve') }, (_, output) => output)
		.flatMap((output) =>
			run.output('Idempotency Reserve', output).map((out) => ({ ...out, output })),
		)
		.sort((a, b) => a.pairedItem.item - b.pairedItem.item);
}

/** The keys of `items`, checked against the table. */
async function keysFor(parameters, items) {
	const run = await reserve(parameters, items);
	expect(run.error).toBeUndefined();
	const keys = routed(run).map((out) => out.json.idempotency.key);
	const { rows } = await db.query('SELECT key FROM processed_events WHERE key = ANY($1)', [keys]);
	expect(rows.map((row) => row.key).sort()).toEqual([...new Set(keys)].sort());
	return keys;
}

describe('Email Trigger (IMAP) Message', () => {
	test('the Message-ID as sent, brackets and the domain case kept, in Simple and Resolved alike', async () => {
		const keys = await keysFor(IMAP, [
			item('01', 'imap', 'simple'),
			item('01', 'imap', 'resolved'),
			item('08', 'imap', 'simple'),
		]);
		expect(keys).toEqual([
			'imap-INBOX:email:<CAF3x9=order1001@Mail.Example.COM>',
			'imap-INBOX:email:<CAF3x9=order1001@Mail.Example.COM>',
			// The same id with the domain in lower case: another sender's text, another key.
			'imap-INBOX:email:<CAF3x9=order1001@mail.example.com>',
		]);
	});

	test('a folded header, a comment after the id, a non-ASCII subject, a multipart email', async () => {
		const names = ['04', '07', '05', '09'];
		const keys = await keysFor(IMAP, [
			...names.map((name) => item(name, 'imap', 'simple')),
			...names.map((name) => item(name, 'imap', 'resolved')),
		]);
		const expected = [
			'imap-INBOX:email:<20231114100200.4711.folded@relay.example.org>',
			'imap-INBOX:email:<with-comment-77@example.com>',
			'imap-INBOX:email:<unicode-subject-1@example.net>',
			'imap-INBOX:email:<multipart-9@example.com>',
		];
		expect(keys).toEqual([...expected, ...expected]);
		expect(item('05', 'imap', 'simple').json.subject).toBe('Réclamation – commande 📦 日本');
	});

	test('without a Message-ID: the SHA-256 of the UID and the email as read, so two identical emails differ', async () => {
		const [two, three] = [item('02', 'imap', 'simple'), item('03', 'imap', 'simple')];
		// Same headers and text, another UID: the mailbox holds two emails.
		expect({ ...two.json, attributes: undefined }).toEqual({
			...three.json,
			attributes: undefined,
		});
		const run = await reserve(IMAP, [two, three]);
		const [a, b] = routed(run);
		const digest = (json) =>
			sha256(`imap-uid ${json.attributes.uid} ${canonicalJson(JSON.parse(JSON.stringify(json)))}`);
		expect([a.json.idempotency.key, b.json.idempotency.key]).toEqual([
			`imap-INBOX:sha256:${digest(two.json)}`,
			`imap-INBOX:sha256:${digest(three.json)}`,
		]);
		expect(a.json.idempotency.key).not.toBe(b.json.idempotency.key);
		expect([a.json.idempotency.keyFrom, b.json.idempotency.keyFrom]).toEqual([
			'noMessageId',
			'noMessageId',
		]);
		expect([a.output, b.output]).toEqual([0, 0]);
	});

	test('a malformed Message-ID is keyed by the digest, and the item says so', async () => {
		const email = item('06', 'imap', 'simple');
		expect(email.json.metadata['message-id']).toBe('no-brackets-1234@example.com');
		const [out] = routed(await reserve(IMAP, [email]));
		expect(out.json.idempotency.key).toMatch(/^imap-INBOX:sha256:[0-9a-f]{64}$/);
		expect(out.json.idempotency.keyFrom).toBe('malformedMessageId');
		const [good] = routed(await reserve(IMAP, [item('01', 'imap', 'simple')]));
		expect(good.json.idempotency.keyFrom).toBe('messageId');
	});

	test('the RAW format, a webhook item and an item without UID or Message-ID are item errors naming what is missing', async () => {
		const noUid = item('02', 'imap', 'simple');
		delete noUid.json.attributes;
		/** @type {Array<[{ json: any }, RegExp, RegExp]>} */
		const cases = [
			[
				item('01', 'imap', 'raw'),
				/RAW item: it has no Message-ID and no UID/,
				/Simple or Resolved/,
			],
			[
				{ json: { body: { id: 'evt_1' }, headers: {} } },
				/not an Email Trigger \(IMAP\) item/,
				/Email Trigger/,
			],
			[noUid, /no Message-ID and no UID \(attributes\.uid\)/, /attributes\.uid/],
		];
		for (const [input, message, hint] of cases) {
			const run = await reserve(IMAP, [item('01', 'imap', 'simple'), input]);
			expect(run.status).toBe('error');
			expect(run.error.message).toMatch(message);
			expect(run.error.description).toMatch(hint);
			expect(run.error.context.itemIndex).toBe(1);
		}
		// Nothing was reserved by the runs that failed, not even their good first item.
		const { rows } = await db.query("SELECT to_regclass('processed_events') IS NULL AS absent");
		const reserved = rows[0].absent
			? 0
			: (await db.query('SELECT count(*)::int AS n FROM processed_events')).rows[0].n;
		expect(reserved).toBe(0);
	});

	test('the same email a second time (another trigger on the mailbox) is a duplicate', async () => {
		const first = routed(
			await reserve(IMAP, [item('01', 'imap', 'simple'), item('02', 'imap', 'resolved')]),
		);
		const again = routed(
			await reserve(IMAP, [item('01', 'imap', 'resolved'), item('02', 'imap', 'resolved')]),
		);
		expect(first.map((out) => out.output)).toEqual([0, 0]);
		// Lease mode: the first execution still holds both keys (in flight); simple mode says duplicate.
		expect(again.map((out) => out.output)).toEqual([2, 2]);
		const simple = { ...IMAP, mode: 'simple', namespace: 'imap-Other' };
		await reserve(simple, [item('01', 'imap', 'simple')]);
		const dup = routed(await reserve(simple, [item('01', 'imap', 'resolved')]));
		expect(dup.map((out) => out.output)).toEqual([1]);
	});

	test('Answer First stores the email whole, and a redrive runs it as the trigger emitted it', async () => {
		const email = item('05', 'imap', 'simple');
		const [out] = routed(await reserve({ ...IMAP, mode: 'lease', answerFirst: true }, [email]));
		expect(out.json.idempotency.answerFirst).toBe(true);
		const { rows } = await db.query('SELECT delivery FROM processed_events WHERE key = $1', [
			out.json.idempotency.key,
		]);
		expect(rows[0].delivery.message).toEqual(email.json);
		expect(redrivenJson(rows[0].delivery)).toEqual(email.json);
	});
});

describe('Gmail Trigger Message', () => {
	test('Simplify off: the Message-ID; Simplify on (no Message-ID fetched): the Gmail message id', async () => {
		const simple = item('01', 'gmail', 'simple');
		expect(simple.json['Message-ID']).toBeUndefined();
		const keys = await keysFor(GMAIL, [
			item('01', 'gmail', 'resolved'),
			simple,
			item('06', 'gmail', 'resolved'),
		]);
		expect(keys).toEqual([
			'gmail-support:email:<CAF3x9=order1001@Mail.Example.COM>',
			`gmail-support:sha256:${sha256(`gmail-id ${simple.json.id}`)}`,
			`gmail-support:sha256:${sha256(`gmail-id ${item('06', 'gmail', 'resolved').json.id}`)}`,
		]);
	});

	test('an IMAP item is not a Gmail item', async () => {
		const run = await reserve(GMAIL, [item('01', 'imap', 'simple')]);
		expect(run.error.message).toMatch(/not a Gmail Trigger item/);
	});
});

// ---- properties --------------------------------------------------------------------------------

const atext = fc.stringMatching(/^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]{1,12}$/);
const dotAtom = fc.array(atext, { minLength: 1, maxLength: 3 }).map((parts) => parts.join('.'));
/** A Message-ID as senders write it: `<left@right>`, maybe folded, maybe with a comment after it. */
const messageId = fc.tuple(dotAtom, dotAtom).map(([left, right]) => `<${left}@${right}>`);
const written = (id) => fc.constantFrom(id, ` ${id}`, `\r\n ${id}`, `${id} (mailer)`, `  ${id}  `);
/** Header text that is not one msg-id. */
const malformed = fc.oneof(
	dotAtom.map((text) => `${text}@example.com`),
	fc.tuple(dotAtom, dotAtom).map(([a, b]) => `<${a} ${b}@x>`),
	fc.constant('<>'),
	fc.tuple(dotAtom, dotAtom).map(([a, b]) => `<${a}@${b}><${b}@${a}>`),
);

/**
 * An email in a mailbox: its Message-ID header (or none), a subject and a body. Small pools make
 * lookalikes common: emails identical but for their UID, ids differing only in the domain's case.
 */
const emailArb = fc.record({
	id: fc.option(
		fc.oneof(
			messageId,
			malformed,
			fc.constantFrom('<a@x.example>', '<a@X.example>', '<b@x.example>', 'a@x.example'),
		),
		{ nil: undefined },
	),
	subject: fc.oneof(fc.constantFrom('Thanks', 'Order 1', ''), fc.string({ maxLength: 20 })),
	body: fc.oneof(fc.constantFrom('', 'Thanks!'), fc.string({ maxLength: 40 })),
});

/** The Simple item of the trigger for it (as utils.ts builds it). */
function simpleItem(email, uid, headerText = email.id) {
	const metadata =
		headerText === undefined ? {} : { 'message-id': headerText.replace(/\r\n/g, '') };
	return {
		json: {
			textHtml: '',
			textPlain: email.body,
			metadata,
			attributes: { uid },
			subject: email.subject,
		},
	};
}

/** The Resolved item (mailparser's shape: each header's whole raw line under `headers`). */
function resolvedItem(email, uid, headerText = email.id) {
	const headers = { subject: `Subject: ${email.subject}` };
	if (headerText !== undefined) headers['message-id'] = `Message-ID: ${headerText}`;
	return { json: { headers, text: email.body, subject: email.subject, attributes: { uid } } };
}

const wellFormed = (id) => id !== undefined && /^<[^\s<>@]+@[^\s<>@]+>$/.test(id);

describe('properties of the email keys (fast-check, real engine)', () => {
	test('two different emails never share a key; the same email seen twice always does', async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.array(emailArb, { minLength: 2, maxLength: 12 }),
				fc.array(fc.nat(), { minLength: 12, maxLength: 12 }),
				async (emails, picks) => {
					await db.query('DROP TABLE IF EXISTS processed_events');
					// UIDs are unique in a mailbox; a well-formed Message-ID is the email's own.
					const seen = new Set();
					const distinct = emails.filter((email) => {
						if (!wellFormed(email.id)) return true;
						if (seen.has(email.id)) return false;
						seen.add(email.id);
						return true;
					});
					const firstRead = distinct.map((email, i) => simpleItem(email, i + 1));
					// The same emails again: by a second trigger in either format, the header written
					// another way where it is a Message-ID (folding, comments), in another order.
					const secondRead = await Promise.all(
						distinct.map(async (email, i) => {
							const header = wellFormed(email.id)
								? fc.sample(written(email.id), { numRuns: 1, seed: picks[i % picks.length] })[0]
								: email.id;
							const useResolved = wellFormed(email.id) && picks[i % picks.length] % 2 === 1;
							return useResolved ? resolvedItem(email, i + 1, header) : simpleItem(email, i + 1);
						}),
					);
					const order = secondRead
						.map((_, i) => i)
						.sort((a, b) => (picks[a % 12] % 7) - (picks[b % 12] % 7));
					const run = await reserve({ ...IMAP, mode: 'simple' }, [
						...firstRead,
						...order.map((i) => secondRead[i]),
					]);
					expect(run.error).toBeUndefined();
					const out = routed(run);
					const keys = out.map((o) => o.json.idempotency.key);
					const first = keys.slice(0, distinct.length);
					expect(new Set(first).size).toBe(distinct.length);
					order.forEach((i, position) => {
						expect(keys[distinct.length + position]).toBe(first[i]);
						expect(out[distinct.length + position].output).toBe(1);
					});
					expect(out.slice(0, distinct.length).every((o) => o.output === 0)).toBe(true);
				},
			),
			{ numRuns: Number(process.env.EMAIL_PROPERTY_RUNS ?? 25) },
		);
	});
});
