/** What KeyStore takes and returns (KeyStore.ts re-exports them: the nodes import them from there). */

/** A key to reserve and, where Reserve records one, the fingerprint of the request it belongs to. */
export interface ReserveTarget {
	key: string;
	fingerprint?: string;
	/** Answer first: the delivery stored with a new key (nodes/shared/delivery/storedDelivery.ts). */
	delivery?: object;
}

/** What one reserve statement did. */
export interface ReserveOutcome {
	/** The keys this statement inserted: new, for the caller to process. Every other key was already reserved. */
	inserted: Set<string>;
	/** When each key that already existed was first reserved (ms since 1970), where that was looked up and known. */
	firstSeenMs: Map<string, number>;
	/** The fingerprint each key that already existed was reserved with, where it has one. */
	storedFingerprints: Map<string, string>;
}

/** A reserved key and the token of the reservation that holds it (none: whoever holds it). */
export interface OwnedKey {
	key: string;
	token?: string;
	/** Complete Key: the answer to store with the completion. */
	response?: StoredResponse;
}

/** What one lease-mode reserve statement did. */
export interface LeaseOutcome {
	/** Keys this statement reserved (new) or took over (lease ended): run the business step. */
	reserved: Map<string, { attempt: number; leaseUntilMs: number; steps: string[] }>;
	/** Every other key: completed (or written in simple mode), or in progress in another execution. */
	held: Map<string, HeldKey>;
}

export interface HeldKey {
	status: 'completed' | 'in_progress' | 'dead_letter';
	firstSeenMs?: number;
	/** In progress only: seconds until its lease ends and a retry may take it over. */
	retryAfterSeconds?: number;
	/** The fingerprint of the request that reserved it, where one was recorded. */
	storedFingerprint?: string;
	/** Completed only: the answer Complete Key stored with it. */
	response?: StoredResponse;
}

/** What happened to one owned key in Complete or Release. */
export interface OwnedKeyResult {
	done: boolean;
	/** Was there a row for the key at all (false: released or purged)? */
	rowExists: boolean;
	/** The attempt of the reservation that holds the key now, where another one does. */
	attempt?: number;
	/** Release only: the item's token completed the key, so it stays (its effect committed). */
	completedByOwner?: boolean;
	/** Release only: the key has step records or (kept) an answered event, so its lease ended instead. */
	reopened?: boolean;
	/** Release only: the key held an answered event (sql/answeredEvents.ts) before the statement. */
	answeredEvent?: boolean;
	/** Recording a step only: this token had recorded it already (the first record stands). */
	alreadyRecorded?: boolean;
	/** Recording a step and checking the next: the token held the key in progress (statement's snapshot). */
	owned?: boolean;
	/** Recording a step and checking the next: the next step's record, where there is one. */
	nextRecord?: StepRecord;
}

/** The result of an owned-key statement, by key and token. */
export type OwnedKeyResults = Map<string, OwnedKeyResult>;

/** A key, the token of the reservation that holds it, and what one step produced for it. */
export interface StepRecordTarget extends OwnedKey {
	token: string;
	/** The step's output items for this key, in item order (their json). */
	items: unknown[];
}

/** A step boundary's target: a key and its token, and the items to record (null: only check the next step). */
export interface StepBoundaryTarget extends OwnedKey {
	token: string;
	items: unknown[] | null;
}

/** A recorded step: when, and the items it produced. */
export interface StepRecord {
	at: string;
	items: unknown[];
}

/** What a key's row says about one step, for the item's token. */
export interface StepState {
	/** The token holds the key in progress: the step may run (and be recorded) here. */
	owned: boolean;
	rowExists: boolean;
	/** The attempt of the reservation that holds the key now. */
	attempt?: number;
	/** The step's record, where it was recorded. */
	record?: StepRecord;
}

export function ownedKeyId({ key, token }: OwnedKey): string {
	// Keys and tokens never hold NUL (refused before storage), so the pair is unambiguous.
	return `${key}\u0000${token ?? ''}`;
}

export interface PurgeOptions {
	/** A PostgreSQL interval, e.g. `30 days`. */
	retention: string;
	/** Drop Answered Events: delete answered events too (never, by default). */
	dropAnsweredEvents?: boolean;
	/** Only keys starting with this text (`<namespace>:`); all keys when undefined. */
	keyPrefix?: string;
	batchSize: number;
}

export interface PurgeResult {
	deleted: number;
	/** Answered events the purge kept (older than the retention, lease ended), or dropped. */
	keptAnsweredEvents: number;
	droppedAnsweredEvents: number;
	cutoff: Date;
	batches: number;
}

/** An answer Complete Key stored with a key, which duplicates carry and replay (answers/storedResponse.ts). */
export interface StoredResponse {
	statusCode: number;
	headers: Record<string, string>;
	/** null when it was over the size limit and Complete Key stored the marker instead. */
	body: string | null;
	/** Set when the body was over the limit: its size in UTF-8 bytes. */
	tooLarge?: { bytes: number; limit: number };
}

/** One key the Redrive Trigger claimed (sql/redrive.ts): its new owner and lease, and its delivery. */
export interface ClaimedRedrive {
	key: string;
	token: string;
	attempt: number;
	leaseUntilMs: number;
	delivery: unknown;
}

/** What one claim did: the keys to run again, and the keys that became dead letters. */
export interface RedriveClaim {
	claimed: ClaimedRedrive[];
	deadLetters: Array<{ key: string; attempts: number }>;
}

export interface RedriveOptions {
	/** This claim's token: each key's owner token is made from it. */
	token: string;
	leaseSeconds: number;
	/** Attempts (the first run included) after which a key is a dead letter. */
	maxAttempts: number;
	/** At most this many keys per claim. */
	limit: number;
	/** The backoff's first step, doubled per attempt. */
	backoffSeconds: number;
	/** Only keys whose stored delivery this workflow made (storedDelivery.ts). */
	workflowId: string;
	/** Also keys whose delivery names no workflow (stored before deliveries named one). */
	claimUnscoped?: boolean;
}
