/**
 * Reserve's settings and their defaults, in one place: the node's properties, its run and the key
 * planner (planner/settings.ts) read them here. Pure, without n8n's types, so the planner can bundle it.
 * reserveOutputs.ts keeps its own copy of the fingerprint rule (n8n runs that function's source
 * text alone); test/unit/reserveSettings.test.js holds the two equal.
 */

/** Reservation modes, in the order the node lists them. Values are stored in workflows: never rename them. */
export const RESERVE_MODES = ['lease', 'simple'] as const;
export type ReserveMode = (typeof RESERVE_MODES)[number];

export const DEFAULT_MODE: ReserveMode = 'lease';

/** The Mode options, as the node panel and the key planner list them. */
export const MODE_OPTIONS: ReadonlyArray<{
	name: string;
	value: ReserveMode;
	description: string;
}> = [
	{
		name: 'Reserve With a Lease (Recommended)',
		value: 'lease',
		description:
			'Exactly once: a reservation whose execution dies (crash, killed worker) is taken over by a retry once its lease ends. Add Idempotency Complete Key after the business step.',
	},
	{
		name: 'Simple (At Most Once)',
		value: 'simple',
		description:
			'The hand-built pattern: a reserved key stays reserved. If n8n dies before the business step, retries are answered as duplicates. Works on a two-column table.',
	},
];

export const DEFAULT_LEASE_SECONDS = 300;

/** A lease longer than a week would leave a dead execution's event waiting past most senders' retries. */
export const MAX_LEASE_SECONDS = 7 * 24 * 3600;

/**
 * Keep the Lease While Running (store/leaseKeeper.ts): on by default, so a step slower than the lease
 * is never run twice; off is the lease as it was, ending Lease seconds after Reserve. Max Run is the
 * ceiling on renewals (an hour by default: past the slowest step people report, short of hiding a
 * hung execution for long), at most a week like the lease itself.
 */
export const DEFAULT_KEEP_LEASE = true;
export const DEFAULT_MAX_RUN_SECONDS = 3600;
export const MAX_MAX_RUN_SECONDS = 7 * 24 * 3600;

/**
 * Lease mode's Wait While In Flight (waitInFlight.ts): off by default, so webhook workflows answer an
 * in-flight retry at once (409) as they always did. Five minutes at most: a waiting execution holds
 * its trigger's slot (a queue's parallel-message limit) the whole time.
 */
export const DEFAULT_WAIT_IN_FLIGHT_SECONDS = 0;
export const MAX_WAIT_IN_FLIGHT_SECONDS = 300;

/** Replay Guard (shared/keys/replayGuard.ts): on unless a sender sends identical bodies as different events. */
export const DEFAULT_REPLAY_GUARD = true;

/** How a request's fingerprint is made. Values are stored in workflows: never rename them. */
export type FingerprintSource = 'rawBody' | 'expression' | 'none';

/** The Fingerprint options, as the node panel and the key planner list them. */
export const FINGERPRINT_OPTIONS: ReadonlyArray<{
	name: string;
	value: FingerprintSource;
	description: string;
}> = [
	{
		name: 'Raw Body (SHA-256)',
		value: 'rawBody',
		description:
			'The SHA-256 of the exact request bytes, the same bytes the body-hash key uses. A retry of the same request has the same one.',
	},
	{
		name: 'Expression',
		value: 'expression',
		description:
			'The SHA-256 of the fields that define the request (Fingerprint Fields), so a retry that differs elsewhere (a timestamp) still matches',
	},
	{
		name: 'None',
		value: 'none',
		description: 'Record no fingerprint: a key reused with another payload is not noticed',
	},
];

/**
 * The Fingerprint a node has unless told otherwise: lease mode records fingerprints; simple mode
 * keeps working on the hand-built two-column table (a fingerprint adds a column).
 */
export function defaultFingerprint(mode: unknown): FingerprintSource {
	return mode === 'simple' ? 'none' : 'rawBody';
}

/** Fingerprint Fields' default, as the node holds it (an expression, with its leading "="). */
export const DEFAULT_FINGERPRINT_EXPRESSION = '={{ $json.body }}';

/** What a duplicate whose fingerprint differs from the stored one does. `output`: version 2 on. */
export type MismatchHandling = 'flag' | 'error' | 'output';

export const DEFAULT_ON_MISMATCH: MismatchHandling = 'flag';
