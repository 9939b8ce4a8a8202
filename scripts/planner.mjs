#!/usr/bin/env node
// `npm run planner`: says where the key planner page is (open it in a browser, it works from file://).
// `npm run planner -- --serve [--port N]`: serves it on http://127.0.0.1 (a free port unless given).
// `npm run planner -- --built-in --provider stripe [...]`: the built-in-nodes workflow on standard output
// (scripts/planner/builtInCli.mjs).
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { builtInFromArgs } from './planner/builtInCli.mjs';

const file = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'planner', 'index.html');
const args = process.argv.slice(2);

if (args.includes('--built-in')) {
	const result = builtInFromArgs(
		args,
		join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'planner', 'builtIn.cjs'),
	);
	if ('json' in result) process.stdout.write(result.json);
	else console.error(result.message);
	process.exit('json' in result ? 0 : 1);
}

if (!existsSync(file)) {
	console.error(`The key planner is not built yet (${file} is missing): run npm run build first.`);
	process.exit(1);
}

if (!args.includes('--serve')) {
	console.log(`Key planner: ${file}`);
	console.log(`Open ${pathToFileURL(file).href} in a browser, or run npm run planner -- --serve`);
	process.exit(0);
}

const portArg = args.indexOf('--port');
const port = portArg === -1 ? 0 : Number(args[portArg + 1]);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
	console.error(`--port needs a port number (0 to 65535), not ${args[portArg + 1]}`);
	process.exit(1);
}

const page = readFileSync(file);
const csp = /http-equiv="Content-Security-Policy" content="([^"]*)"/.exec(
	page.toString('utf8'),
)?.[1];
const server = createServer((request, response) => {
	const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
	if (request.method !== 'GET' && request.method !== 'HEAD') {
		response.writeHead(405, { allow: 'GET, HEAD' }).end();
		return;
	}
	if (path !== '/' && path !== '/index.html') {
		response
			.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
			.end('Not found: the key planner is at /\n');
		return;
	}
	response.writeHead(200, {
		'content-type': 'text/html; charset=utf-8',
		'content-length': page.length,
		'cache-control': 'no-store',
		'x-content-type-options': 'nosniff',
		...(csp === undefined ? {} : { 'content-security-policy': csp }),
	});
	response.end(request.method === 'HEAD' ? undefined : page);
});
server.on('error', (error) => {
	console.error(`Cannot serve the key planner on 127.0.0.1:${port}: ${error.message}`);
	process.exit(1);
});
server.listen(port, '127.0.0.1', () => {
	console.log(
		`Key planner: http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}/ (Ctrl+C to stop)`,
	);
});
for (const signal of ['SIGINT', 'SIGTERM'])
	process.on(signal, () => server.close(() => process.exit(0)));
