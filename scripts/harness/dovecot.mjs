// A throw-away IMAP server for the email suite (test/e2e/email.e2e.mjs): Debian's dovecot
// (apt-get install dovecot-imapd; .ci/run installs it), started on a free port of 127.0.0.1 with a
// config of its own in a temp folder: plain IMAP (ssl = no, plaintext login allowed), one user from
// a passwd-file, Maildir mail in the folder. As root, dovecot's own accounts run it (its login
// processes refuse root); as any other user, that user runs every process. Mail is delivered with
// IMAP APPEND through n8n's own imapflow (loaded from the cached n8n install, as rabbitmq.mjs loads
// amqplib): the client n8n's Email Trigger (IMAP) itself uses, and not a dependency of this package.
import { execFile, spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { progress, waitFor } from './log.mjs';
import { freePort } from './ports.mjs';

const run = promisify(execFile);
/** Debian's binary: the suite starts this one, never a dovecot already running as a service. */
export const DOVECOT = '/usr/sbin/dovecot';

/** @param {string} name an account of this machine */
async function idOf(name, flag) {
	const { stdout } = await run('id', [flag, name]);
	return Number(stdout.trim());
}

/**
 * Starts dovecot; returns its port, the mailbox login, an `append` that delivers messages, and
 * `stop`. The temp folder is `dir` (the caller removes it).
 * @param {{ dir: string, user?: string, password?: string }} options
 */
export async function startDovecot({ dir, user = 'inbox', password = 'secret-e2e' }) {
	if (!existsSync(DOVECOT))
		throw new Error(`dovecot is not installed (${DOVECOT}): apt-get install -y dovecot-imapd`);
	const port = await freePort();
	const root = path.join(dir, 'dovecot');
	for (const sub of ['run', 'state', 'mail']) mkdirSync(path.join(root, sub), { recursive: true });
	// Every process must reach its files: the folder is opened up, the mail given to the mail user.
	chmodSync(dir, 0o755);
	chmodSync(root, 0o755);
	const asRoot = process.getuid?.() === 0;
	const me = userInfo().username;
	const internalUser = asRoot ? 'dovecot' : me;
	const loginUser = asRoot ? 'dovenull' : me;
	if (asRoot)
		chownSync(path.join(root, 'mail'), await idOf('dovecot', '-u'), await idOf('dovecot', '-g'));
	const mailUid = asRoot ? await idOf('dovecot', '-u') : process.getuid?.();
	const mailGid = asRoot ? await idOf('dovecot', '-g') : process.getgid?.();
	writeFileSync(path.join(root, 'passwd'), `${user}:{PLAIN}${password}\n`);
	const log = path.join(root, 'dovecot.log');
	const config = path.join(root, 'dovecot.conf');
	writeFileSync(
		config,
		`# Written by scripts/harness/dovecot.mjs for one test run.
base_dir = ${root}/run
state_dir = ${root}/state
log_path = ${log}
info_log_path = ${log}
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
default_internal_user = ${internalUser}
default_login_user = ${loginUser}
first_valid_uid = 1
mail_location = maildir:${root}/mail/%u
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${root}/passwd
}
userdb {
  driver = static
  args = uid=${mailUid} gid=${mailGid} home=${root}/mail/%u
}
service imap-login {
  chroot =
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
service anvil {
  chroot =
}
`,
	);
	// -F: in the foreground, so the harness owns the process and stops it by its id.
	const child = spawn(DOVECOT, ['-F', '-c', config], { stdio: ['ignore', 'pipe', 'pipe'] });
	let output = '';
	child.stdout.on('data', (chunk) => (output += chunk));
	child.stderr.on('data', (chunk) => (output += chunk));
	const exited = new Promise((resolve) => child.once('exit', resolve));
	const logText = () => (existsSync(log) ? readFileSync(log, 'utf8') : '') + output;
	try {
		await waitFor(
			() => `dovecot listening on 127.0.0.1:${port} (log: ${logText().slice(-500)})`,
			async () => {
				if (child.exitCode !== null) throw new Error(`dovecot exited: ${logText()}`);
				return logText().includes('starting up') && (await canConnect(port)) ? true : undefined;
			},
			{ timeoutMs: 30_000, intervalMs: 200 },
		);
	} catch (error) {
		child.kill('SIGKILL');
		throw error;
	}
	progress(`dovecot: IMAP on 127.0.0.1:${port}, user ${user} (config ${config})`);
	return {
		host: '127.0.0.1',
		port,
		user,
		password,
		log,
		logText,
		async stop() {
			if (child.exitCode === null) {
				child.kill('SIGTERM');
				await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
				if (child.exitCode === null) child.kill('SIGKILL');
			}
		},
	};
}

async function canConnect(port) {
	const net = await import('node:net');
	return await new Promise((resolve) => {
		const socket = net.connect({ host: '127.0.0.1', port });
		socket.once('connect', () => {
			socket.destroy();
			resolve(true);
		});
		socket.once('error', () => resolve(false));
	});
}

/** @param {{ n8nModules: string }} paths see install.mjs cachePaths */
export function loadImapFlow(paths) {
	const requireFromN8n = createRequire(path.join(paths.n8nModules, 'n8n', 'package.json'));
	try {
		return requireFromN8n(path.join(paths.n8nModules, 'imapflow')).ImapFlow;
	} catch {
		return requireFromN8n('imapflow').ImapFlow;
	}
}

/**
 * An IMAP client on the server (n8n's imapflow), logged in: `append` delivers raw messages to a
 * mailbox; `status` reads UIDNEXT, UIDVALIDITY and the unseen count; `close` logs out.
 * @param {{ n8nModules: string }} paths
 * @param {{ host: string, port: number, user: string, password: string }} server
 */
export async function imapClient(paths, server) {
	const ImapFlow = loadImapFlow(paths);
	const client = new ImapFlow({
		host: server.host,
		port: server.port,
		secure: false,
		doSTARTTLS: false,
		auth: { user: server.user, pass: server.password },
		logger: false,
	});
	await client.connect();
	return {
		/** @param {string | Buffer} message @param {string} [mailbox] */
		async append(message, mailbox = 'INBOX') {
			return await client.append(mailbox, message);
		},
		/** @param {string} mailbox */
		async createMailbox(mailbox) {
			return await client.mailboxCreate(mailbox);
		},
		async status(mailbox = 'INBOX') {
			return await client.status(mailbox, {
				uidNext: true,
				uidValidity: true,
				unseen: true,
				messages: true,
			});
		},
		async close() {
			await client.logout().catch(() => client.close());
		},
	};
}

/** The `imap` credential of n8n's Email Trigger (IMAP) for this server, as n8n's import file holds it. */
export function imapCredential(server, id = 'ImapCredE2E000001', name = 'IMAP e2e') {
	return {
		id,
		name,
		type: 'imap',
		data: {
			user: server.user,
			password: server.password,
			host: server.host,
			port: server.port,
			secure: false,
			allowUnauthorizedCerts: false,
		},
	};
}
