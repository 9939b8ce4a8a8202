// A throw-away npm registry on 127.0.0.1 (verdaccio from the harness cache) that the UI suite
// publishes this package to and n8n installs it from, as it would from npmjs.org. Its config,
// storage and users live in a temp folder. It serves only this package and proxies nothing: n8n
// strips peer dependencies before its npm install, and the package has no other dependencies.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { ensureVerdaccio } from './install.mjs';
import { progress, waitFor } from './log.mjs';
import { freePort } from './ports.mjs';
import { spawnTracked, stopTracked, tailOf } from './processes.mjs';

/**
 * Starts verdaccio in `dir`; returns { url, userconfig, stop() }. `userconfig` is an npmrc holding
 * this registry's auth token for one user created on start (publishing needs a login).
 */
export async function startRegistry({ dir, packageName }) {
	const { bin } = await ensureVerdaccio();
	mkdirSync(dir, { recursive: true });
	const port = await freePort();
	const url = `http://127.0.0.1:${port}/`;
	const config = path.join(dir, 'config.yaml');
	writeFileSync(
		config,
		[
			`storage: ${JSON.stringify(path.join(dir, 'storage'))}`,
			'auth:',
			'  htpasswd:',
			`    file: ${JSON.stringify(path.join(dir, 'htpasswd'))}`,
			'    max_users: 10',
			'packages:',
			`  '${packageName}':`,
			'    access: $all',
			'    publish: $authenticated',
			'    unpublish: $authenticated',
			"  '**':",
			'    access: $all',
			'web:',
			'  enable: false',
			'log: { type: stdout, format: pretty, level: warn }',
			'',
		].join('\n'),
	);
	const logFile = path.join(dir, 'verdaccio.log');
	progress(`registry: starting verdaccio on ${url} (log: ${logFile})`);
	const child = spawnTracked(
		process.execPath,
		[bin, '--config', config, '--listen', `127.0.0.1:${port}`],
		{
			name: 'verdaccio',
			cwd: dir,
			env: { ...process.env, VERDACCIO_APPDIR: dir },
			logFile,
		},
	);
	const stop = async () => {
		if (!child.exitStatus) await stopTracked(child, { graceMs: 10_000 });
	};
	try {
		await waitFor(
			`verdaccio at ${url}-/ping`,
			async () => {
				if (child.exitStatus) throw new Error(`verdaccio exited:\n${tailOf(logFile, 30)}`);
				const response = await fetch(`${url}-/ping`, { signal: AbortSignal.timeout(3_000) });
				await response.arrayBuffer();
				return response.ok;
			},
			{ timeoutMs: 60_000, intervalMs: 300 },
		);
		const token = await addUser(url, 'publisher', `pw-${Date.now()}`);
		const userconfig = path.join(dir, 'publisher.npmrc');
		writeFileSync(userconfig, `//127.0.0.1:${port}/:_authToken=${token}\n`, { mode: 0o600 });
		progress(`registry: ready (user "publisher", npmrc ${userconfig})`);
		return { url, port, userconfig, logFile, stop };
	} catch (error) {
		await stop();
		throw error;
	}
}

/** What `npm adduser` does against verdaccio: PUT the user document; the answer carries a token. */
async function addUser(url, name, password) {
	const response = await fetch(`${url}-/user/org.couchdb.user:${name}`, {
		method: 'PUT',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({
			name,
			password,
			type: 'user',
			roles: [],
			date: new Date().toISOString(),
		}),
		signal: AbortSignal.timeout(10_000),
	});
	const body = await response.json().catch(() => ({}));
	if (!response.ok || !body.token)
		throw new Error(`verdaccio adduser answered ${response.status}: ${JSON.stringify(body)}`);
	return body.token;
}
