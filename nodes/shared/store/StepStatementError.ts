/**
 * A failure of one of the user's own statements inside the exactly-once step's transaction (not of
 * the key table): the transaction was rolled back. Kept apart from key-store failures so the error
 * names the user's SQL and item instead of the key table, and free of n8n types.
 */
export class StepStatementError extends Error {
	constructor(
		/** The input item whose statement failed. */
		readonly itemIndex: number,
		/** What PostgreSQL (or the driver) said: message, code, detail, hint, position. */
		readonly cause: Error & { code?: string; detail?: string; hint?: string; position?: string },
	) {
		super(cause.message);
		this.name = 'StepStatementError';
	}
}
