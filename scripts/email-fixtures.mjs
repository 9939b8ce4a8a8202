// Writes test/fixtures/email/items.json: real emails (test/fixtures/email/*.eml) as n8n 2.41.1's
// own trigger code turns them into items, the oracle of the email key source tests
// (test/unit/emailKeys.test.js, test/integration/emailKeys.test.js):
//   - Email Trigger (IMAP), formats simple, resolved and raw: each .eml is appended to a throw-away
//     dovecot (scripts/harness/dovecot.mjs) and read back by n8n-nodes-base's EmailReadImap v2
//     getNewEmails over @n8n/imap's ImapSimple, as the trigger reads it (node version 2.2);
//   - Gmail Trigger with Simplify off: GenericFunctions parseRawEmail of the message as Gmail's API
//     returns it with format=raw (base64url); with Simplify on: GenericFunctions simplifyOutput of
//     the message as the API returns it with format=metadata and the trigger's metadataHeaders.
// Needs n8n 2.41.1 in the e2e cache and dovecot. Run: node scripts/email-fixtures.mjs
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { imapClient, startDovecot } from './harness/dovecot.mjs';
import { cachePaths, N8N_VERSION } from './harness/install.mjs';
import { REPO_DIR } from './harness/package.mjs';

const FIXTURES = path.join(REPO_DIR, 'test', 'fixtures', 'email');
const paths = cachePaths();
const requireN8n = createRequire(path.join(paths.n8nModules, 'n8n', 'package.json'));
const base = path.join(paths.n8nModules, 'n8n-nodes-base', 'dist', 'nodes');
const { getNewEmails } = requireN8n(path.join(base, 'EmailReadImap', 'v2', 'utils.js'));
const gmail = requireN8n(path.join(base, 'Google', 'Gmail', 'GenericFunctions.js'));
const { ImapSimple } = requireN8n(path.join(paths.n8nModules, '@n8n', 'imap'));

/** What getNewEmails and the Gmail helpers read of `this`: the node's parameters and a few helpers. */
function context(parameters, typeVersion) {
	return {
		getNodeParameter: (name, _index, fallback) => parameters[name] ?? fallback,
		getWorkflowStaticData: () => ({}),
		getNode: () => ({ typeVersion, name: 'Trigger' }),
		logger: { debug() {}, warn() {}, error() {} },
		helpers: {
			prepareBinaryData: async (content, fileName, mimeType) => ({
				data: Buffer.from(content).toString('base64'),
				fileName,
				mimeType,
			}),
			// Gmail's labels, which simplifyOutput asks for (GET /gmail/v1/users/me/labels).
			requestWithAuthentication: async () => ({
				labels: [
					{ id: 'INBOX', name: 'INBOX' },
					{ id: 'UNREAD', name: 'UNREAD' },
				],
			}),
		},
	};
}

const emls = readdirSync(FIXTURES)
	.filter((name) => name.endsWith('.eml'))
	.sort();
const workDir = mkdtempSync(path.join(tmpdir(), 'idem-email-fixtures-'));
const server = await startDovecot({ dir: workDir });
try {
	const mail = await imapClient(server);
	const uids = {};
	for (const name of emls)
		uids[name] = (await mail.append(readFileSync(path.join(FIXTURES, name)))).uid;
	await mail.close();

	const connection = await ImapSimple.connect(
		{
			host: server.host,
			port: server.port,
			secure: false,
			user: server.user,
			password: server.password,
		},
		{ mailbox: 'INBOX' },
	);
	const imap = {};
	for (const format of ['simple', 'resolved', 'raw']) {
		const items = [];
		await getNewEmails.call(
			context(
				{ format, downloadAttachments: false, dataPropertyAttachmentsPrefixName: 'attachment_' },
				2.2,
			),
			{
				imapConnection: connection,
				searchCriteria: ['ALL'],
				postProcessAction: 'nothing',
				onEmailBatch: async (batch) => void items.push(...batch),
			},
		);
		imap[format] = items;
	}
	connection.end();

	const entries = [];
	for (const [index, name] of emls.entries()) {
		const source = readFileSync(path.join(FIXTURES, name));
		const uid = uids[name];
		const byUid = (items, format) =>
			format === 'raw' ? items[index] : items.find((item) => item.json.attributes?.uid === uid);
		// As Gmail's API returns the message: its id, thread, labels, and the source base64url.
		const gmailId = `18c${(0x1000 + index).toString(16)}abcdef0${index}`;
		const apiMessage = {
			id: gmailId,
			threadId: gmailId,
			labelIds: ['INBOX', 'UNREAD'],
			sizeEstimate: source.length,
		};
		const resolved = await gmail.parseRawEmail.call(
			context({ 'options.downloadAttachments': false }, 1.3),
			{ ...apiMessage, raw: source.toString('base64url') },
			'attachment_',
		);
		const headerOf = (header) => {
			const match = new RegExp(`^${header}:[ \\t]*(.*(?:\\r?\\n[ \\t].*)*)`, 'im').exec(
				source.toString('utf8'),
			);
			return match?.[1]?.replace(/\r?\n[ \t]/g, ' ');
		};
		const metadataHeaders = ['From', 'To', 'Cc', 'Bcc', 'Subject']
			.filter((header) => headerOf(header) !== undefined)
			.map((header) => ({ name: header, value: headerOf(header) }));
		const [simple] = await gmail.simplifyOutput.call(context({ authentication: 'oAuth2' }, 1.3), [
			{
				...apiMessage,
				snippet: 'Hello',
				payload: { partId: '', mimeType: 'text/plain', filename: '', headers: metadataHeaders },
				historyId: '4242',
				internalDate: '1700000000000',
			},
		]);
		entries.push({
			name,
			imap: {
				simple: byUid(imap.simple, 'simple')?.json,
				resolved: byUid(imap.resolved, 'resolved')?.json,
				raw: byUid(imap.raw, 'raw')?.json,
			},
			gmail: { simple, resolved: resolved.json },
		});
	}
	writeFileSync(
		path.join(FIXTURES, 'items.json'),
		`${JSON.stringify({ n8n: N8N_VERSION, written: 'node scripts/email-fixtures.mjs', emails: entries }, null, 2)}\n`,
	);
	console.log(`wrote ${entries.length} emails' items to ${path.join(FIXTURES, 'items.json')}`);
} finally {
	await server.stop();
	rmSync(workDir, { recursive: true, force: true });
}
