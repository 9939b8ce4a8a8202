/** A time from the store as n8n users read it (ISO 8601, UTC); undefined stays out of the item. */
export function isoTime(ms: number): string;
export function isoTime(ms: number | undefined): string | undefined;
export function isoTime(ms: number | undefined): string | undefined {
	return ms === undefined ? undefined : new Date(ms).toISOString();
}
