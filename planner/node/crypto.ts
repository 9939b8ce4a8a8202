/**
 * The part of Node.js's `crypto` that nodes/shared/webhook/verifySignature.ts uses (`createHmac`
 * with SHA-1, SHA-256 or SHA-512, and `timingSafeEqual`), for the browser. scripts/build-planner.mjs
 * resolves the node's `import … from 'crypto'` here, so its verification code is bundled as it is.
 * It must be synchronous, as Node.js's is: crypto.subtle only offers promises. The tests check the
 * page's verdicts against the node's (Node.js's OpenSSL) and the providers' own libraries.
 */
import { bufferOf, type BufferEncoding, type NodeBuffer } from './buffer';

type Algorithm = 'sha1' | 'sha256' | 'sha512';

/** Big-endian message padding shared by the three hashes: 0x80, zeros, the bit length. */
function pad(message: Uint8Array, blockBytes: number, lengthBytes: number): Uint8Array {
	const total = Math.ceil((message.length + 1 + lengthBytes) / blockBytes) * blockBytes;
	const padded = new Uint8Array(total);
	padded.set(message);
	padded[message.length] = 0x80;
	const view = new DataView(padded.buffer);
	// Bit length as a 64-bit number (enough for any body a page holds); SHA-512's 128 bits start with zeros.
	const bits = message.length * 8;
	view.setUint32(total - 8, Math.floor(bits / 0x1_0000_0000));
	view.setUint32(total - 4, bits >>> 0);
	return padded;
}

function sha1(message: Uint8Array): Uint8Array {
	const data = pad(message, 64, 8);
	const view = new DataView(data.buffer);
	const h = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0];
	const w = new Uint32Array(80);
	for (let offset = 0; offset < data.length; offset += 64) {
		for (let i = 0; i < 16; i++) w[i] = view.getUint32(offset + i * 4);
		for (let i = 16; i < 80; i++) {
			const x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16];
			w[i] = (x << 1) | (x >>> 31);
		}
		let [a, b, c, d, e] = h;
		for (let i = 0; i < 80; i++) {
			let f: number;
			let k: number;
			if (i < 20) {
				f = (b & c) | (~b & d);
				k = 0x5a827999;
			} else if (i < 40) {
				f = b ^ c ^ d;
				k = 0x6ed9eba1;
			} else if (i < 60) {
				f = (b & c) | (b & d) | (c & d);
				k = 0x8f1bbcdc;
			} else {
				f = b ^ c ^ d;
				k = 0xca62c1d6;
			}
			const t = (((a << 5) | (a >>> 27)) + f + e + k + w[i]) >>> 0;
			e = d;
			d = c;
			c = (b << 30) | (b >>> 2);
			b = a;
			a = t;
		}
		h[0] = (h[0] + a) >>> 0;
		h[1] = (h[1] + b) >>> 0;
		h[2] = (h[2] + c) >>> 0;
		h[3] = (h[3] + d) >>> 0;
		h[4] = (h[4] + e) >>> 0;
	}
	return words(h);
}

const K256 = new Uint32Array([
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

function sha256(message: Uint8Array): Uint8Array {
	const data = pad(message, 64, 8);
	const view = new DataView(data.buffer);
	const h = [
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	];
	const w = new Uint32Array(64);
	const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n));
	for (let offset = 0; offset < data.length; offset += 64) {
		for (let i = 0; i < 16; i++) w[i] = view.getUint32(offset + i * 4);
		for (let i = 16; i < 64; i++) {
			const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
			const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
			w[i] = (w[i - 16] + s0 + w[i - 7] + s1) >>> 0;
		}
		let [a, b, c, d, e, f, g, hh] = h;
		for (let i = 0; i < 64; i++) {
			const s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
			const ch = (e & f) ^ (~e & g);
			const t1 = (hh + s1 + ch + K256[i] + w[i]) >>> 0;
			const s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
			const maj = (a & b) ^ (a & c) ^ (b & c);
			const t2 = (s0 + maj) >>> 0;
			hh = g;
			g = f;
			f = e;
			e = (d + t1) >>> 0;
			d = c;
			c = b;
			b = a;
			a = (t1 + t2) >>> 0;
		}
		const next = [a, b, c, d, e, f, g, hh];
		for (let i = 0; i < 8; i++) h[i] = (h[i] + next[i]) >>> 0;
	}
	return words(h);
}

// SHA-512's 64-bit words as two 32-bit halves (high, low), in typed arrays and locals: no object per
// operation, so a body of a megabyte takes well under a second.
const K512 = [
	'428a2f98d728ae22',
	'7137449123ef65cd',
	'b5c0fbcfec4d3b2f',
	'e9b5dba58189dbbc',
	'3956c25bf348b538',
	'59f111f1b605d019',
	'923f82a4af194f9b',
	'ab1c5ed5da6d8118',
	'd807aa98a3030242',
	'12835b0145706fbe',
	'243185be4ee4b28c',
	'550c7dc3d5ffb4e2',
	'72be5d74f27b896f',
	'80deb1fe3b1696b1',
	'9bdc06a725c71235',
	'c19bf174cf692694',
	'e49b69c19ef14ad2',
	'efbe4786384f25e3',
	'0fc19dc68b8cd5b5',
	'240ca1cc77ac9c65',
	'2de92c6f592b0275',
	'4a7484aa6ea6e483',
	'5cb0a9dcbd41fbd4',
	'76f988da831153b5',
	'983e5152ee66dfab',
	'a831c66d2db43210',
	'b00327c898fb213f',
	'bf597fc7beef0ee4',
	'c6e00bf33da88fc2',
	'd5a79147930aa725',
	'06ca6351e003826f',
	'142929670a0e6e70',
	'27b70a8546d22ffc',
	'2e1b21385c26c926',
	'4d2c6dfc5ac42aed',
	'53380d139d95b3df',
	'650a73548baf63de',
	'766a0abb3c77b2a8',
	'81c2c92e47edaee6',
	'92722c851482353b',
	'a2bfe8a14cf10364',
	'a81a664bbc423001',
	'c24b8b70d0f89791',
	'c76c51a30654be30',
	'd192e819d6ef5218',
	'd69906245565a910',
	'f40e35855771202a',
	'106aa07032bbd1b8',
	'19a4c116b8d2d0c8',
	'1e376c085141ab53',
	'2748774cdf8eeb99',
	'34b0bcb5e19b48a8',
	'391c0cb3c5c95a63',
	'4ed8aa4ae3418acb',
	'5b9cca4f7763e373',
	'682e6ff3d6b2b8a3',
	'748f82ee5defb2fc',
	'78a5636f43172f60',
	'84c87814a1f0ab72',
	'8cc702081a6439ec',
	'90befffa23631e28',
	'a4506cebde82bde9',
	'bef9a3f7b2c67915',
	'c67178f2e372532b',
	'ca273eceea26619c',
	'd186b8c721c0c207',
	'eada7dd6cde0eb1e',
	'f57d4f7fee6ed178',
	'06f067aa72176fba',
	'0a637dc5a2c898a6',
	'113f9804bef90dae',
	'1b710b35131c471b',
	'28db77f523047d84',
	'32caab7b40c72493',
	'3c9ebe0a15c9bebc',
	'431d67c49c100d4c',
	'4cc5d4becb3e42b6',
	'597f299cfc657e2a',
	'5fcb6fab3ad6faec',
	'6c44198c4a475817',
];
const K512_HIGH = new Uint32Array(K512.map((hex) => Number.parseInt(hex.slice(0, 8), 16)));
const K512_LOW = new Uint32Array(K512.map((hex) => Number.parseInt(hex.slice(8), 16)));
const H512 = [
	'6a09e667f3bcc908',
	'bb67ae8584caa73b',
	'3c6ef372fe94f82b',
	'a54ff53a5f1d36f1',
	'510e527fade682d1',
	'9b05688c2b3e6c1f',
	'1f83d9abfb41bd6b',
	'5be0cd19137e2179',
];

const TWO_32 = 0x1_0000_0000;

function sha512(message: Uint8Array): Uint8Array {
	const data = pad(message, 128, 16);
	const view = new DataView(data.buffer);
	const hh = new Uint32Array(H512.map((hex) => Number.parseInt(hex.slice(0, 8), 16)));
	const hl = new Uint32Array(H512.map((hex) => Number.parseInt(hex.slice(8), 16)));
	const wh = new Uint32Array(80);
	const wl = new Uint32Array(80);
	for (let offset = 0; offset < data.length; offset += 128) {
		for (let i = 0; i < 16; i++) {
			wh[i] = view.getUint32(offset + i * 8);
			wl[i] = view.getUint32(offset + i * 8 + 4);
		}
		for (let i = 16; i < 80; i++) {
			let xh = wh[i - 15];
			let xl = wl[i - 15];
			// σ0 = rotr 1 ^ rotr 8 ^ shr 7
			const s0h = ((xh >>> 1) | (xl << 31)) ^ ((xh >>> 8) | (xl << 24)) ^ (xh >>> 7);
			const s0l = ((xl >>> 1) | (xh << 31)) ^ ((xl >>> 8) | (xh << 24)) ^ ((xl >>> 7) | (xh << 25));
			xh = wh[i - 2];
			xl = wl[i - 2];
			// σ1 = rotr 19 ^ rotr 61 ^ shr 6
			const s1h = ((xh >>> 19) | (xl << 13)) ^ ((xl >>> 29) | (xh << 3)) ^ (xh >>> 6);
			const s1l =
				((xl >>> 19) | (xh << 13)) ^ ((xh >>> 29) | (xl << 3)) ^ ((xl >>> 6) | (xh << 26));
			const low = wl[i - 16] + (s0l >>> 0) + wl[i - 7] + (s1l >>> 0);
			wh[i] = wh[i - 16] + s0h + wh[i - 7] + s1h + Math.floor(low / TWO_32);
			wl[i] = low;
		}
		let [ah, bh, ch, dh, eh, fh, gh, h7h] = hh;
		let [al, bl, cl, dl, el, fl, gl, h7l] = hl;
		for (let i = 0; i < 80; i++) {
			// Σ1(e) = rotr 14 ^ rotr 18 ^ rotr 41
			const S1h =
				((eh >>> 14) | (el << 18)) ^ ((eh >>> 18) | (el << 14)) ^ ((el >>> 9) | (eh << 23));
			const S1l =
				((el >>> 14) | (eh << 18)) ^ ((el >>> 18) | (eh << 14)) ^ ((eh >>> 9) | (el << 23));
			const chh = (eh & fh) ^ (~eh & gh);
			const chl = (el & fl) ^ (~el & gl);
			const t1low = h7l + (S1l >>> 0) + (chl >>> 0) + K512_LOW[i] + wl[i];
			const t1h = (h7h + S1h + chh + K512_HIGH[i] + wh[i] + Math.floor(t1low / TWO_32)) >>> 0;
			const t1l = t1low >>> 0;
			// Σ0(a) = rotr 28 ^ rotr 34 ^ rotr 39
			const S0h = ((ah >>> 28) | (al << 4)) ^ ((al >>> 2) | (ah << 30)) ^ ((al >>> 7) | (ah << 25));
			const S0l = ((al >>> 28) | (ah << 4)) ^ ((ah >>> 2) | (al << 30)) ^ ((ah >>> 7) | (al << 25));
			const majh = (ah & bh) ^ (ah & ch) ^ (bh & ch);
			const majl = (al & bl) ^ (al & cl) ^ (bl & cl);
			const t2low = (S0l >>> 0) + (majl >>> 0);
			const t2h = S0h + majh + Math.floor(t2low / TWO_32);
			h7h = gh;
			h7l = gl;
			gh = fh;
			gl = fl;
			fh = eh;
			fl = el;
			const elow = dl + t1l;
			eh = (dh + t1h + Math.floor(elow / TWO_32)) >>> 0;
			el = elow >>> 0;
			dh = ch;
			dl = cl;
			ch = bh;
			cl = bl;
			bh = ah;
			bl = al;
			const alow = t1l + (t2low >>> 0);
			ah = (t1h + t2h + Math.floor(alow / TWO_32)) >>> 0;
			al = alow >>> 0;
		}
		const highs = [ah, bh, ch, dh, eh, fh, gh, h7h];
		const lows = [al, bl, cl, dl, el, fl, gl, h7l];
		for (let i = 0; i < 8; i++) {
			const low = hl[i] + lows[i];
			hh[i] = hh[i] + highs[i] + Math.floor(low / TWO_32);
			hl[i] = low;
		}
	}
	const out: number[] = [];
	for (let i = 0; i < 8; i++) out.push(hh[i], hl[i]);
	return words(out);
}

function words(values: number[]): Uint8Array {
	const bytes = new Uint8Array(values.length * 4);
	const view = new DataView(bytes.buffer);
	values.forEach((value, i) => view.setUint32(i * 4, value));
	return bytes;
}

const HASHES: Record<Algorithm, { hash: (m: Uint8Array) => Uint8Array; blockBytes: number }> = {
	sha1: { hash: sha1, blockBytes: 64 },
	sha256: { hash: sha256, blockBytes: 64 },
	sha512: { hash: sha512, blockBytes: 128 },
};

function concat(chunks: readonly Uint8Array[]): Uint8Array {
	const all = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
	let offset = 0;
	for (const chunk of chunks) {
		all.set(chunk, offset);
		offset += chunk.length;
	}
	return all;
}

export interface Hmac {
	update(data: string | Uint8Array, encoding?: 'utf8'): Hmac;
	digest(): NodeBuffer;
	digest(encoding: BufferEncoding): string;
}

/** HMAC (RFC 2104) over everything passed to update(), as Node.js's createHmac. */
export function createHmac(algorithm: Algorithm, key: Uint8Array | string): Hmac {
	const definition = HASHES[algorithm];
	if (definition === undefined)
		throw new Error(`Digest method not supported: ${String(algorithm)}`);
	const { hash, blockBytes } = definition;
	let keyBytes = typeof key === 'string' ? new TextEncoder().encode(key) : key;
	if (keyBytes.length > blockBytes) keyBytes = hash(keyBytes);
	const inner = new Uint8Array(blockBytes).fill(0x36);
	const outer = new Uint8Array(blockBytes).fill(0x5c);
	keyBytes.forEach((byte, i) => {
		inner[i] ^= byte;
		outer[i] ^= byte;
	});
	const chunks: Uint8Array[] = [inner];
	const hmac = {
		update(data: string | Uint8Array) {
			chunks.push(typeof data === 'string' ? new TextEncoder().encode(data) : data);
			return hmac;
		},
		digest(encoding?: BufferEncoding) {
			const result = bufferOf(hash(concat([outer, hash(concat(chunks))])));
			return encoding === undefined ? result : result.toString(encoding);
		},
	};
	return hmac as Hmac;
}

/** A hash over everything passed to update(), as Node.js's createHash (the HMAC's own hashes). */
export function createHash(algorithm: Algorithm): Hmac {
	const definition = HASHES[algorithm];
	if (definition === undefined)
		throw new Error(`Digest method not supported: ${String(algorithm)}`);
	const chunks: Uint8Array[] = [];
	const hash = {
		update(data: string | Uint8Array) {
			chunks.push(typeof data === 'string' ? new TextEncoder().encode(data) : data);
			return hash;
		},
		digest(encoding?: BufferEncoding) {
			const result = bufferOf(definition.hash(concat(chunks)));
			return encoding === undefined ? result : result.toString(encoding);
		},
	};
	return hash as Hmac;
}

/** Compares two byte strings of equal length in time that does not depend on where they differ. */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
	if (a.length !== b.length) throw new RangeError('Input buffers must have the same byte length');
	let difference = 0;
	for (let i = 0; i < a.length; i++) difference |= a[i] ^ b[i];
	return difference === 0;
}

/**
 * Public-key checks (Ed25519, ECDSA) would need crypto.subtle, whose promises the synchronous check
 * cannot wait for: the page says so for those schemes (planner/signature/signature.ts) and never calls these.
 */
const keyPairsRefused = (): never => {
	throw new Error('Public-key signatures are checked in n8n, not on this page');
};

/** Typed as Node.js's for verifySignature.ts; never called on the page. */
export const createPublicKey: (options: unknown) => { asymmetricKeyType?: string } =
	keyPairsRefused;
export const verify: (...args: unknown[]) => boolean = keyPairsRefused;
