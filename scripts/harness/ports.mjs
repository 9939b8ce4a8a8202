import { createServer } from 'node:net';

const handedOut = new Set();

/** A TCP port on 127.0.0.1 that was free a moment ago (and not handed out earlier by this process). */
export async function freePort() {
	for (let attempt = 0; attempt < 50; attempt++) {
		const port = await new Promise((resolve, reject) => {
			const server = createServer();
			server.unref();
			server.once('error', reject);
			server.listen(0, '127.0.0.1', () => {
				const { port: chosen } = /** @type {import('node:net').AddressInfo} */ (server.address());
				server.close(() => resolve(chosen));
			});
		});
		if (!handedOut.has(port)) {
			handedOut.add(port);
			return port;
		}
	}
	throw new Error('Could not find a free TCP port on 127.0.0.1');
}
