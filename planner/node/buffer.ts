/**
 * The part of Node.js's Buffer that nodes/shared/webhook/verifySignature.ts uses, for the browser:
 * `Buffer.from(text, 'utf8' | 'hex' | 'base64')`, `Buffer.from(bytes)`, `toString(encoding)` and
 * `length`. scripts/build-planner.mjs injects it as the global `Buffer` of the page's bundle, so the
 * node's verification code runs in the page as it is. Inputs are what that code passes: hex and
 * base64 text it has already checked against its own patterns.
 */
export type BufferEncoding = 'utf8' | 'hex' | 'base64';

const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

function fromHex(text: string): Uint8Array {
	const bytes = new Uint8Array(Math.floor(text.length / 2));
	for (let i = 0; i < bytes.length; i++) {
		const byte = Number.parseInt(text.slice(i * 2, i * 2 + 2), 16);
		// Node.js stops at the first pair that is not hex; so does this.
		if (Number.isNaN(byte)) return bytes.slice(0, i);
		bytes[i] = byte;
	}
	return bytes;
}

function fromBase64(text: string): Uint8Array {
	// Node.js ignores characters outside the alphabet and stops at padding; URL-safe letters count too.
	const clean = text
		.replace(/-/g, '+')
		.replace(/_/g, '/')
		.replace(/=.*$/s, '')
		.replace(/[^A-Za-z0-9+/]/g, '');
	const bytes = new Uint8Array(Math.floor((clean.length * 3) / 4));
	let bits = 0;
	let value = 0;
	let index = 0;
	for (const char of clean) {
		value = (value << 6) | BASE64_ALPHABET.indexOf(char);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			bytes[index++] = (value >> bits) & 0xff;
		}
	}
	return bytes.slice(0, index);
}

function toBase64(bytes: Uint8Array): string {
	let text = '';
	for (let i = 0; i < bytes.length; i += 3) {
		const chunk = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
		text += BASE64_ALPHABET[(chunk >> 18) & 63] + BASE64_ALPHABET[(chunk >> 12) & 63];
		text += i + 1 < bytes.length ? BASE64_ALPHABET[(chunk >> 6) & 63] : '=';
		text += i + 2 < bytes.length ? BASE64_ALPHABET[chunk & 63] : '=';
	}
	return text;
}

/** What `Buffer.from` returns: bytes that print as Node.js prints them. */
export class NodeBuffer extends Uint8Array {
	toString(encoding: BufferEncoding = 'utf8'): string {
		if (encoding === 'hex')
			return Array.from(this, (byte) => byte.toString(16).padStart(2, '0')).join('');
		if (encoding === 'base64') return toBase64(this);
		return new TextDecoder().decode(this);
	}
}

export function bufferOf(bytes: ArrayLike<number>): NodeBuffer {
	const buffer = new NodeBuffer(bytes.length);
	buffer.set(bytes);
	return buffer;
}

export const Buffer = {
	from(value: string | ArrayLike<number>, encoding: BufferEncoding = 'utf8'): NodeBuffer {
		if (typeof value !== 'string') return bufferOf(value);
		if (encoding === 'hex') return bufferOf(fromHex(value));
		if (encoding === 'base64') return bufferOf(fromBase64(value));
		return bufferOf(new TextEncoder().encode(value));
	},
	isBuffer(value: unknown): value is NodeBuffer {
		return value instanceof NodeBuffer;
	},
};

export type BufferStatic = typeof Buffer;
