// A TCP proxy on 127.0.0.1 in front of the test server: the nodes reach their key store through it,
// and a test cuts that way and restores it on the same address, as a failover does to an endpoint
// (a DNS name, a virtual IP) while the standby is promoted. The driver and the server are real: the
// nodes see the errors they would see (connection refused, connection terminated), and the server
// runs or aborts their statements as it would.
const net = require('node:net');

/**
 * @param {{ host: string, port: number }} target
 */
async function startTcpProxy(target) {
	/** @type {Set<import('node:net').Socket>} */
	const sockets = new Set();
	/** @type {import('node:net').Server | undefined} */
	let server;
	let port = 0;
	/** @type {{ pattern: Buffer, resolve: (value?: unknown) => void } | undefined} */
	let loseAnswer;

	function onConnection(client) {
		const upstream = net.connect(target.port, target.host);
		let answersLost = false;
		sockets.add(client);
		sockets.add(upstream);
		const close = () => {
			client.destroy();
			upstream.destroy();
			sockets.delete(client);
			sockets.delete(upstream);
		};
		client.on('data', (chunk) => {
			upstream.write(chunk);
			if (loseAnswer && chunk.includes(loseAnswer.pattern)) {
				// The statement reaches the server; its answer never reaches the client.
				const { resolve } = loseAnswer;
				loseAnswer = undefined;
				answersLost = true;
				upstream.once('data', () => {
					close();
					resolve();
				});
			}
		});
		upstream.on('data', (chunk) => {
			if (!answersLost) client.write(chunk);
		});
		client.on('error', close);
		upstream.on('error', close);
		client.on('close', close);
		upstream.on('close', close);
	}

	async function listen() {
		server = net.createServer(onConnection);
		await new Promise((resolve, reject) => {
			server.once('error', reject);
			server.listen(port, '127.0.0.1', () => {
				port = /** @type {import('node:net').AddressInfo} */ (server.address()).port;
				resolve(undefined);
			});
		});
	}

	await listen();
	return {
		host: '127.0.0.1',
		get port() {
			return port;
		},
		/** The key store becomes unreachable: open connections drop, new ones are refused. */
		async cut() {
			const closing = server;
			server = undefined;
			for (const socket of sockets) socket.destroy();
			sockets.clear();
			if (closing) await new Promise((resolve) => closing.close(() => resolve(undefined)));
		},
		/** Reachable again, on the same address. */
		async restore() {
			if (!server) await listen();
		},
		/**
		 * The next time a client sends bytes containing `text` (a COMMIT), they go to the server, and
		 * the connection is dropped as soon as the server answers: the statement ran, its answer is lost.
		 * Resolves once that happened.
		 */
		loseAnswerTo(text) {
			return new Promise((resolve) => {
				loseAnswer = { pattern: Buffer.from(text), resolve };
			});
		},
		async stop() {
			await this.cut();
		},
	};
}

module.exports = { startTcpProxy };
