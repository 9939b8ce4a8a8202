// The Redis that n8n's queue mode uses (Bull queue, pub/sub, cache), reached with n8n's own ioredis
// (loaded from the cached n8n install by absolute path, like `flatted` in records.mjs: it is n8n's
// dependency, not one of this package). Each stack uses its own key prefixes, so runs never share a
// queue, and removes its keys at the end.
import { createRequire } from 'node:module';
import path from 'node:path';

import { progress } from './log.mjs';

function loadIoredis(paths) {
	const requireFromN8n = createRequire(path.join(paths.n8nModules, 'n8n', 'package.json'));
	try {
		return requireFromN8n(path.join(paths.n8nModules, 'ioredis'));
	} catch {
		return requireFromN8n('ioredis');
	}
}

/** Connects (bounded) and answers PING; throws with a start hint when Redis is not there. */
export async function connectRedis(paths, { host = '127.0.0.1', port = 6379 } = {}) {
	const Redis = loadIoredis(paths);
	const client = new Redis({
		host,
		port,
		lazyConnect: true,
		maxRetriesPerRequest: 1,
		connectTimeout: 5_000,
		retryStrategy: () => null,
	});
	client.on('error', () => undefined);
	try {
		await client.connect();
		const pong = await client.ping();
		if (pong !== 'PONG') throw new Error(`PING answered ${pong}`);
	} catch (error) {
		client.disconnect();
		throw new Error(
			`Redis is not reachable at ${host}:${port} (${error.message}). Queue mode needs it; start one with: ` +
				'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no',
		);
	}
	return client;
}

/**
 * Deletes every key whose name contains `token` (a stack's random prefix), with SCAN (never KEYS),
 * at most `maxRounds` SCAN calls. Returns the number of keys deleted.
 */
export async function deleteKeysContaining(client, token, { maxRounds = 2_000 } = {}) {
	if (!/^[A-Za-z0-9_-]{8,}$/.test(token))
		throw new Error(`refusing to delete Redis keys for a short or unusual token: ${token}`);
	let cursor = '0';
	let deleted = 0;
	for (let round = 0; round < maxRounds; round++) {
		const [next, keys] = await client.scan(cursor, 'MATCH', `*${token}*`, 'COUNT', 1000);
		if (keys.length > 0) deleted += await client.unlink(...keys);
		cursor = next;
		if (cursor === '0') break;
	}
	progress(`Redis: removed ${deleted} keys of this stack (*${token}*)`);
	return deleted;
}
