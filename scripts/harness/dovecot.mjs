// A throw-away IMAP server for the email suite (test/e2e/email.e2e.mjs): Debian's dovecot
// (apt-get install dovecot-imapd; .ci/run installs it), started on a free port of 127.0.0.1 with a
// config of its own in a temp folder: plain IMAP (ssl = no, plaintext login allowed), one user from
// a passwd-file, Maildir mail in the folder. As root, dovecot's own accounts run it (its login
// processes refuse root); as any other user, that user runs every process. Mail is delivered with
// IMAP APPEND (imapClient), as a mail server's delivery agent would store it.
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { progress, waitFor } from './log.mjs';
import { spawnTracked, stopTracked } from './processes.mjs';
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
	// -F: in the foreground, a tracked process group: stopped by its id, and at exit if a test dies.
	const output = path.join(root, 'dovecot.out');
	const tracked = spawnTracked(DOVECOT, ['-F', '-c', config], {
		name: 'dovecot',
		cwd: root,
		env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/bin' },
		logFile: output,
	});
	const logText = () =>
		[log, output].map((file) => (existsSync(file) ? readFileSync(file, 'utf8') : '')).join('');
	try {
		await waitFor(
			() => `dovecot listening on 127.0.0.1:${port} (log: ${logText().slice(-500)})`,
			async () => {
				if (tracked.exitStatus) throw new Error(`dovecot exited: ${logText()}`);
				return logText().includes('starting up') && (await canConnect(port)) ? true : undefined;
			},
			{ timeoutMs: 30_000, intervalMs: 200 },
		);
	} catch (error) {
		await stopTracked(tracked, { graceMs: 1000 });
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
			await stopTracked(tracked, { graceMs: 5000 });
		},
	};
}

async function canConnect(port) {
	return await new Promise((resolve) => {
		const socket = net.connect({ host: '127.0.0.1', port });
		socket.once('connect', () => {
			socket.destroy();
			resolve(true);
		});
		socket.once('error', () => resolve(false));
	});
}

/**
 * A minimal IMAP client for the suites' own deliveries (LOGIN, CREATE, APPEND, LOGOUT, RFC 9051):
 * a few lines of protocol, so the harness needs no IMAP library of either n8n line. The clients
 * n8n's triggers use against this server are proven by the suites themselves (imapflow through
 * @n8n/imap in n8n 2.x, node-imap through imap-simple in 1.x).
 * @param {{ host: string, port: number, user: string, password: string }} server
 */
export async function imapClient(server) {
	const socket = net.connect({ host: server.host, port: server.port });
	let received = '';
	/** @type {Array<() => void>} */
	let listeners = [];
	socket.setEncoding('utf8');
	/** @type {Error | undefined} */
	let failure;
	socket.on('data', (chunk) => {
		received += chunk;
		for (const listener of listeners) listener();
	});
	socket.on('error', (error) => {
		failure = error;
		for (const listener of listeners) listener();
	});
	/** Resolves with the text up to and including the first line `done` accepts. */
	const nextLine = (done) =>
		new Promise((resolve, reject) => {
			const check = () => {
				if (failure) {
					listeners = listeners.filter((listener) => listener !== check);
					reject(failure);
					return;
				}
				const lines = received.split('\r\n');
				for (let i = 0; i < lines.length - 1; i++)
					if (done(lines[i])) {
						const text = lines.slice(0, i + 1).join('\r\n');
						received = lines.slice(i + 1).join('\r\n');
						listeners = listeners.filter((listener) => listener !== check);
						resolve(text);
						return;
					}
			};
			listeners.push(check);
			check();
		});
	let counter = 0;
	let queue = Promise.resolve();
	/** Sends a command (and a literal after the server's "+"), one at a time; the tagged answer, or throws. */
	const command = (text, literal) => {
		const sent = queue.then(() => exchange(text, literal));
		queue = sent.catch(() => undefined);
		return sent;
	};
	const exchange = async (text, literal) => {
		const tag = `e${++counter}`;
		socket.write(`${tag} ${text}\r\n`);
		if (literal !== undefined) {
			await nextLine((line) => line.startsWith('+') || line.startsWith(`${tag} `));
			socket.write(Buffer.concat([literal, Buffer.from('\r\n')]));
		}
		const answer = await nextLine((line) => line.startsWith(`${tag} `));
		const last = answer.split('\r\n').at(-1);
		if (!last.startsWith(`${tag} OK`)) throw new Error(`IMAP ${text.split(' ')[0]}: ${last}`);
		return last;
	};
	const quoted = (text) => `"${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
	await nextLine((line) => line.startsWith('* OK'));
	await command(`LOGIN ${quoted(server.user)} ${quoted(server.password)}`);
	return {
		/**
		 * Delivers one message (its bytes as a mail server stores them); returns its UID.
		 * @param {string | Buffer} message
		 * @param {string} [mailbox]
		 */
		async append(message, mailbox = 'INBOX') {
			const bytes = Buffer.isBuffer(message) ? message : Buffer.from(message);
			const answer = await command(`APPEND ${quoted(mailbox)} {${bytes.length}}`, bytes);
			const uid = /APPENDUID \d+ (\d+)/.exec(answer)?.[1];
			return { uid: uid === undefined ? undefined : Number(uid) };
		},
		/** @param {string} mailbox */
		async createMailbox(mailbox) {
			await command(`CREATE ${quoted(mailbox)}`);
		},
		async close() {
			await command('LOGOUT').catch(() => undefined);
			socket.destroy();
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
