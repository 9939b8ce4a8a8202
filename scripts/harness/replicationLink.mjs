// The network between a primary and its standby, as a relay on 127.0.0.1 that a fault test can
// slow down and cut. On one host a standby is microseconds behind its primary, so an asynchronous
// failover has nothing to lose; across zones it trails by the replication lag. Holding the relay
// keeps the primary's WAL from the standby (the primary, asynchronous, goes on acknowledging
// commits); cutting it drops what was held, as a primary's host that dies takes its unsent WAL along.
// Stopping the standby's WAL receiver with SIGSTOP instead was tried: once resumed, it still read
// everything the sender had written into its socket, and the failover lost nothing. The relay holds
// the bytes outside every server process.
import net from 'node:net';

/** @typedef {Awaited<ReturnType<typeof openReplicationLink>>} ReplicationLink */

/**
 * A relay from a free port of 127.0.0.1 to `targetPort`; the standby's primary_conninfo names it.
 * @param {number} targetPort
 */
export async function openReplicationLink(targetPort) {
	/** @type {Set<{ standbySide: net.Socket, primarySide: net.Socket, heldBack: Buffer[] }>} */
	const pairs = new Set();
	let held = false;

	const server = net.createServer((standbySide) => {
		const primarySide = net.connect(targetPort, '127.0.0.1');
		const pair = { standbySide, primarySide, heldBack: [] };
		pairs.add(pair);
		const close = () => {
			pairs.delete(pair);
			standbySide.destroy();
			primarySide.destroy();
		};
		standbySide.on('data', (chunk) => primarySide.write(chunk));
		primarySide.on('data', (chunk) => {
			if (held) pair.heldBack.push(chunk);
			else standbySide.write(chunk);
		});
		for (const socket of [standbySide, primarySide]) {
			socket.on('error', close);
			socket.on('close', close);
		}
	});
	await new Promise((resolve, reject) => {
		server.once('error', reject);
		server.listen(0, '127.0.0.1', () => resolve(undefined));
	});

	return {
		port: /** @type {net.AddressInfo} */ (server.address()).port,
		/** From now on the primary's bytes wait in the relay: the standby falls behind. */
		hold() {
			held = true;
		},
		/** The standby gets what was held, then everything as it comes. */
		release() {
			held = false;
			for (const pair of pairs) {
				for (const chunk of pair.heldBack) pair.standbySide.write(chunk);
				pair.heldBack = [];
			}
		},
		/** Every connection dropped with what was held; how many bytes the standby never got. */
		cut() {
			let dropped = 0;
			for (const pair of [...pairs]) {
				for (const chunk of pair.heldBack) dropped += chunk.length;
				pair.heldBack = [];
				pair.standbySide.destroy();
				pair.primarySide.destroy();
			}
			pairs.clear();
			held = false;
			return dropped;
		},
		close() {
			this.cut();
			return new Promise((resolve) => server.close(() => resolve()));
		},
	};
}
