// The Message-ID rule of the email key sources (nodes/shared/keys/emailMessage.ts), on the forms of
// RFC 5322 section 3.6.4 and what mailers write around them: CFWS (white space, folding, comments)
// removed, the msg-id otherwise as sent; anything that is not exactly one `<left@right>` refused, so
// the caller keys the email by its digest instead of guessing.
const { test, expect } = require('@jest/globals');

const { normalizeMessageId } = require('../../dist/nodes/shared/keys/emailMessage');

test.each([
	['<1234@local.machine.example>', '<1234@local.machine.example>'],
	['  <abcd.1234@local.machine.test>  ', '<abcd.1234@local.machine.test>'],
	['\r\n <5678.21-Nov-1997@example.com>', '<5678.21-Nov-1997@example.com>'],
	['<testabcd.1234@silly.test> (a comment)', '<testabcd.1234@silly.test>'],
	['(before) <a@b.example>', '<a@b.example>'],
	['<CAF3x9=order1001@Mail.Example.COM>', '<CAF3x9=order1001@Mail.Example.COM>'],
	['<id@[192.0.2.1]>', '<id@[192.0.2.1]>'],
	['<überweisung.7@bank.example>', '<überweisung.7@bank.example>'],
])('%j is the msg-id %j', (header, key) => {
	expect(normalizeMessageId(header)).toBe(key);
});

test.each([
	['no brackets', 'a@example.com'],
	['empty', ''],
	['brackets only', '<>'],
	['no @', '<local.part>'],
	['two @', '<a@b@c>'],
	['white space inside', '<a b@example.com>'],
	['two msg-ids', '<a@x><b@y>'],
	['a quoted local part', '<"a b"@example.com>'],
	['text after it', '<a@example.com> trailing'],
])('%s (%j) is not one msg-id', (_what, header) => {
	expect(normalizeMessageId(header)).toBeUndefined();
});
