import { createHmac, randomBytes } from 'crypto';

import type { ClientConfig } from './pg';

export type SslMode = 'disable' | 'require' | 'verify-full';

/** The fields of the `idempotencyPostgresApi` credential. */
export interface IdempotencyPostgresCredential {
	host: string;
	port: number;
	database: string;
	user: string;
	password?: string;
	ssl?: SslMode;
	caCertificate?: string;
	ignoreTlsErrors?: boolean;
	maxConnections?: number;
}

const APPLICATION_NAME = 'n8n-nodes-idempotency';
export const CONNECT_TIMEOUT_MS = 10_000;

export function tlsOptions(credential: IdempotencyPostgresCredential): ClientConfig['ssl'] {
	const mode = credential.ssl ?? 'disable';
	if (mode === 'disable') return false;
	const ca = credential.caCertificate?.trim() ? credential.caCertificate : undefined;
	// verify-full always checks the chain and the host name; require does too unless told not to.
	const rejectUnauthorized = mode === 'verify-full' || credential.ignoreTlsErrors !== true;
	return { rejectUnauthorized, ...(ca ? { ca } : {}) };
}

export function clientConfig(credential: IdempotencyPostgresCredential): ClientConfig {
	return {
		host: credential.host,
		port: Number(credential.port),
		database: credential.database,
		user: credential.user,
		password: credential.password ?? '',
		ssl: tlsOptions(credential),
		application_name: APPLICATION_NAME,
		connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
		keepAlive: true,
	};
}

// A per-process key for the pool digest: the digest is derived from the password, and keyed this
// way it cannot be used to test password guesses even if it ends up in a log or a heap dump.
const DIGEST_KEY = randomBytes(32);

/**
 * The key a pool is cached under: an HMAC-SHA-256 (hex) of every setting that shapes its
 * connections. Two credentials that would open the same kind of connection share a pool; an edited
 * credential gets a new one. Never a string holding the password.
 */
export function poolDigest(credential: IdempotencyPostgresCredential): string {
	return digestOfSettings(poolSettings(credential));
}

/** The HMAC of poolSettings' text. */
export function digestOfSettings(settings: string): string {
	return createHmac('sha256', DIGEST_KEY).update(settings).digest('hex');
}

/** Every setting that shapes a pool's connections, as one text (password included: never log it). */
export function poolSettings(credential: IdempotencyPostgresCredential): string {
	return JSON.stringify([
		credential.host,
		Number(credential.port),
		credential.database,
		credential.user,
		credential.password ?? '',
		credential.ssl ?? 'disable',
		credential.caCertificate ?? '',
		credential.ignoreTlsErrors === true,
		maxConnections(credential),
	]);
}

export function maxConnections(
	credential: Pick<IdempotencyPostgresCredential, 'maxConnections'>,
): number {
	const max = Number(credential.maxConnections ?? 10);
	return Number.isInteger(max) && max >= 1 ? max : 10;
}
