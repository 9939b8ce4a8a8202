// Every provider's test vector, by value: the provider's own documented example, or a delivery its
// official library signed (or accepts). One file per category of the provider table; the tests walk
// the table and require a vector for each verifiable provider, so none can be added without one.
const fs = require('node:fs');
const path = require('node:path');

/** @typedef {{ body: string | Buffer, headers: Record<string, string>, url?: string, nowSeconds: number }} Delivery */
/**
 * @typedef {object} Vector
 * @property {'documented' | 'library'} kind
 * @property {string} source where it is printed, or package@version and the function used, or
 *   (where the sender prints no signed example) its official tool's signing code, pinned to a
 *   commit, that the delivery was computed by reproducing exactly
 * @property {string} secret as pasted into the credential (a public key for key-pair senders)
 * @property {string} otherSecret another valid secret of the same form
 * @property {() => Promise<Delivery>} genuine
 * @property {(delivery: Delivery, secret: string) => Promise<boolean>} [accepts] the library's verdict
 */

/** @type {Record<string, Vector>} */
const VECTORS = {};
for (const file of fs.readdirSync(__dirname).sort()) {
	if (file === 'index.js' || !file.endsWith('.js')) continue;
	for (const [value, vector] of Object.entries(require(path.join(__dirname, file)))) {
		if (value in VECTORS) throw new Error(`test/vectors: ${value} is defined twice`);
		VECTORS[value] = vector;
	}
}

module.exports = { VECTORS };
