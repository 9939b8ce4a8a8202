/**
 * An answered event (Reserve's Answer First): a key in progress that holds its stored delivery. The
 * sender was answered 2xx and will never resend it, so the stored delivery is the event's only copy
 * and the Redrive Trigger the only thing that finishes it. No operator statement (Release Key, Purge
 * Keys, the Keys node's Purge) deletes one unless told to drop answered events; a dead letter is not
 * in progress, and stays the Keys node's to retry or drop.
 *
 * Read through to_jsonb, as HAS_STEPS is, so it runs on the two-column table (never true there) and
 * on a lease table without the delivery column alike. Never NULL: safe under NOT. `row`: the
 * row's alias in the statement.
 */
export function answeredEvent(row = 't'): string {
	return `coalesce(to_jsonb(${row}) ->> 'status' = 'in_progress'
      AND coalesce(jsonb_typeof(to_jsonb(${row}) -> 'delivery'), 'null') <> 'null', false)`;
}

/** The rule for the row `t`, as the statements name it. */
export const ANSWERED_EVENT = answeredEvent();
