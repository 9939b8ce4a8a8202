/**
 * The one size cap on what a key row keeps per record: a step's recorded items (Record Step, the
 * exactly-once step's rows) and a stored answer. A record is read back and replayed to every retry
 * and duplicate until the key is purged, so an unbounded one (a 10 MB returned row) would be carried
 * by each of them. Measured on the text that is stored (storableJson's, after encoding).
 */
export const MAX_RECORD_BYTES = 256 * 1024;

/** A record over its cap: its stored size and the cap, both in UTF-8 bytes. */
export interface OversizedRecord {
	bytes: number;
	limit: number;
}

const utf8 = new TextEncoder();

/** Over `limit` (the cap unless a node's own setting says otherwise): how large; else undefined. */
export function oversizedRecord(
	storedText: string,
	limit: number = MAX_RECORD_BYTES,
): OversizedRecord | undefined {
	// A UTF-16 unit is at most 3 UTF-8 bytes: short texts need no encoding to be measured.
	if (storedText.length * 3 <= limit) return undefined;
	const bytes = utf8.encode(storedText).length;
	return bytes <= limit ? undefined : { bytes, limit };
}
